"""Pass instruments: hooks the `PassContext` calls around every pass.

An instrument gets `enter_pass_ctx` / `exit_pass_ctx` when its context is entered and
left, `should_run(mod, info)` before each pass (any False skips the pass, unless the
pass is required), then `run_before_pass(mod, info)` and `run_after_pass(mod, info)`.

Example:
    >>> from unity.ir.transform import PassContext, PrintIR
    >>> from unity.ir import IRModule
    >>> timing = PassTimingInstrument()
    >>> with PassContext(instruments=[timing]):
    ...     _ = PrintIR()(IRModule())  # doctest: +SKIP
    >>> "PrintIR" in timing.render()  # doctest: +SKIP
    True
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from unity.ir.module import IRModule
from unity.ir.transform import PassInfo

__all__ = [
    "PassInstrument", "PassTimingInstrument", "PrintAfterAll", "PrintBeforeAll",
    "pass_instrument",
]  # fmt: skip


class PassInstrument:
    """Base of instruments: every hook does nothing (and `should_run` says yes).

    Example:
        >>> class Count(PassInstrument):
        ...     def __init__(self):
        ...         self.runs = 0
        ...     def run_after_pass(self, mod, info):
        ...         self.runs += 1
    """

    needs_every_pass: bool = True
    """Whether the instrument must see the passes that lower each PrimFunc inside
    `unity.build`.  A large build lowers and compiles its functions in worker processes
    (`unity.codegen.build_jobs`), where no instrument runs; an instrument that keeps this
    True keeps the build in this process.  Progress displays and timers that only follow
    the top-level pipeline set it False."""

    def enter_pass_ctx(self) -> None:
        """Called when a `PassContext` holding this instrument is entered.

        Example:
            >>> PassInstrument().enter_pass_ctx()  # the default does nothing
        """

    def exit_pass_ctx(self) -> None:
        """Called when that context is left.

        Example:
            >>> PassInstrument().exit_pass_ctx()  # the default does nothing
        """

    def should_run(self, mod: IRModule, info: PassInfo) -> bool:
        """Return False to skip the pass described by `info`.

        Example:
            >>> from unity.ir.module import IRModule
            >>> from unity.ir.transform import PassInfo
            >>> PassInstrument().should_run(IRModule(), PassInfo(0, "Simplify"))
            True
        """
        return True

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        """Called before a pass that will run.

        Example:
            >>> from unity.ir.module import IRModule
            >>> from unity.ir.transform import PassInfo
            >>> PassInstrument().run_before_pass(IRModule(), PassInfo(0, "Simplify"))
        """

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        """Called after a pass ran, with its result.

        Example:
            >>> from unity.ir.module import IRModule
            >>> from unity.ir.transform import PassInfo
            >>> PassInstrument().run_after_pass(IRModule(), PassInfo(0, "Simplify"))
        """


def pass_instrument(cls: type) -> type:
    """Make a plain class with any of the five hooks a `PassInstrument`.

    Example:
        >>> @pass_instrument
        ... class SkipAll:
        ...     def should_run(self, mod, info):
        ...         return False
        >>> isinstance(SkipAll(), PassInstrument)
        True
    """
    if issubclass(cls, PassInstrument):
        return cls
    made = type(cls.__name__, (cls, PassInstrument), {"__doc__": cls.__doc__})
    made.__module__ = cls.__module__
    made.__qualname__ = cls.__qualname__
    return made


@dataclass
class _Timing:
    name: str
    start: float
    total: float = 0.0
    children: list[_Timing] = field(default_factory=list)


class PassTimingInstrument(PassInstrument):
    """Measure the wall time of every pass (nested passes under their parent).

    `render()` gives a table like TVM's: `name: total [self] (% of total; % of parent)`.

    Example:
        >>> timing = PassTimingInstrument()
        >>> timing.render()
        'Pass timing (no passes ran)'
    """

    def __init__(self) -> None:
        self.roots: list[_Timing] = []
        self._open: list[_Timing] = []

    def enter_pass_ctx(self) -> None:
        self.roots, self._open = [], []

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        entry = _Timing(info.name, time.perf_counter())
        (self._open[-1].children if self._open else self.roots).append(entry)
        self._open.append(entry)

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        while self._open:  # a pass that raised never got its run_after_pass: close it too
            entry = self._open.pop()
            entry.total = time.perf_counter() - entry.start
            if entry.name == info.name:
                break

    def render(self) -> str:
        """The timing table, one line per pass run, children indented under parents.

        Example:
            >>> print(timing.render())  # doctest: +SKIP
            Pass timing (total 1.234ms):
              sequential: 1.200ms [0.012ms] (97.2%; 97.2%)
                FoldConstant: 1.188ms [1.188ms] (96.3%; 99.0%)
        """
        if not self.roots:
            return "Pass timing (no passes ran)"
        total = sum(r.total for r in self.roots) or 1e-12
        lines = [f"Pass timing (total {_ms(total)}):"]
        for root in self.roots:
            _render_entry(root, total, total, 1, lines)
        return "\n".join(lines)


def _render_entry(entry: _Timing, total: float, parent: float, depth: int, out: list[str]) -> None:
    own = entry.total - sum(c.total for c in entry.children)
    share = 100.0 * entry.total / total
    of_parent = 100.0 * entry.total / (parent or 1e-12)
    indent = "  " * depth
    shares = f"({share:.1f}%; {of_parent:.1f}%)"
    out.append(f"{indent}{entry.name}: {_ms(entry.total)} [{_ms(own)}] {shares}")
    for child in entry.children:
        _render_entry(child, total, entry.total, depth + 1, out)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}ms"


def _script(mod: IRModule) -> str:
    try:
        return mod.script()
    except Exception:  # noqa: BLE001 - printing must not fail a pipeline
        return repr(mod)


class PrintBeforeAll(PassInstrument):
    """Print the module before every pass.

    Example:
        >>> with PassContext(instruments=[PrintBeforeAll()]):  # doctest: +SKIP
        ...     FoldConstant()(mod)
    """

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        print(f"Before Running Pass: {info}\n{_script(mod)}")


class PrintAfterAll(PassInstrument):
    """Print the module after every pass.

    Example:
        >>> with PassContext(instruments=[PrintAfterAll()]):  # doctest: +SKIP
        ...     FoldConstant()(mod)
    """

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        print(f"After Running Pass: {info}\n{_script(mod)}")
