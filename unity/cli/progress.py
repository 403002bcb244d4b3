"""A progress display of the compile pipeline: one line per stage and per pass, to stderr.

Example:
    >>> with PassContext(instruments=[PassProgress()]):  # doctest: +SKIP
    ...     unity.compile(mod)
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from unity.ir.instrument import PassInstrument
from unity.ir.module import IRModule


class Stage:
    """Time one named stage: prints `[unity] NAME ...` and then its duration.

    Example:
        >>> with Stage("import", stream=sys.stdout):  # doctest: +ELLIPSIS
        ...     pass
        [unity] import ...
    """

    def __init__(self, name: str, stream: TextIO | None = None) -> None:
        self.name = name
        self.stream = stream if stream is not None else sys.stderr

    def __enter__(self) -> Stage:
        self.start = time.perf_counter()
        print(f"[unity] {self.name} ...", file=self.stream, flush=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            took = time.perf_counter() - self.start
            print(f"[unity] {self.name} done in {took:.2f} s", file=self.stream, flush=True)


class PassProgress(PassInstrument):
    """Print each top-level pass of the pipeline as it runs, with its time.

    Example:
        >>> import io
        >>> from unity.ir.transform import PassInfo
        >>> out, mod = io.StringIO(), IRModule()
        >>> progress = PassProgress(out)
        >>> progress.run_before_pass(mod, PassInfo(0, "pipeline"))
        >>> progress.run_before_pass(mod, PassInfo(0, "FoldConstant"))
        >>> progress.run_after_pass(mod, PassInfo(0, "FoldConstant"))
        >>> out.getvalue()  # doctest: +ELLIPSIS
        '[unity]   pass FoldConstant ... ms\\n'
    """

    needs_every_pass = False  # the kernels may lower in worker processes, unseen

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.depth = 0
        self.starts: list[float] = []

    def run_before_pass(self, mod: IRModule, info: object) -> None:
        self.depth += 1
        self.starts.append(time.perf_counter())

    def run_after_pass(self, mod: IRModule, info: object) -> None:
        took = time.perf_counter() - self.starts.pop()
        self.depth -= 1
        if self.depth == 1:  # the passes of the pipeline, not the pipeline or nested ones
            name = getattr(info, "name", type(info).__name__)
            print(f"[unity]   pass {name:<28} {took * 1e3:8.1f} ms", file=self.stream, flush=True)
