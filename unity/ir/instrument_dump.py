"""Debugging instruments: dump the IR after every pass that changed it; check well-formedness.

`DumpIR(folder)` writes ``000_input.py`` (the module first seen), then one numbered
file per pass that changed the module: ``003_FoldConstant.diff``, a unified diff of
the printed IR before and after that pass. Only innermost passes are dumped (a
`Sequential` is the sum of its passes).

`WellFormedInstrument()` checks the module before the first pass and after every pass;
the first ill-formed result raises `IllFormedError`, naming the pass that broke it.

Example:
    >>> from unity.ir.transform import PassContext, Sequential
    >>> with PassContext(instruments=[DumpIR("/tmp/ir"), WellFormedInstrument()]):  # doctest: +SKIP
    ...     mod = Sequential([FoldConstant(), DeadCodeElimination()])(mod)
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from unity.ir.diagnostics import DiagnosticError
from unity.ir.instrument import PassInstrument
from unity.ir.module import IRModule
from unity.ir.transform import PassInfo

__all__ = ["DumpIR", "IllFormedError", "WellFormedInstrument", "ir_diff"]


def _script(mod: IRModule) -> str:
    try:
        return mod.script()
    except Exception as err:  # noqa: BLE001 - a dump must not fail the pipeline
        return f"# the printer failed: {err}\n{mod!r}"


def ir_diff(before: IRModule, after: IRModule, name: str = "pass") -> str:
    """The unified diff of the printed modules (empty when they print the same).

    Example:
        >>> ir_diff(IRModule(), IRModule())
        ''
    """
    lines = difflib.unified_diff(
        _script(before).splitlines(keepends=True),
        _script(after).splitlines(keepends=True),
        fromfile=f"before {name}",
        tofile=f"after {name}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass
class _Frame:
    name: str
    before: IRModule
    nested: bool = False


@dataclass
class DumpIR(PassInstrument):
    """Write the IR diff of every pass that changed the module into `folder`.

    Example:
        >>> dump = DumpIR("/tmp/unity-ir")
        >>> dump.files
        []
    """

    folder: str
    files: list[str] = field(default_factory=list)
    """Paths written so far, in order."""
    _stack: list[_Frame] = field(default_factory=list)
    _count: int = 0

    def enter_pass_ctx(self) -> None:
        os.makedirs(self.folder, exist_ok=True)

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        if self._count == 0:
            self._write("input.py", _script(mod))
        if self._stack:
            self._stack[-1].nested = True
        self._stack.append(_Frame(info.name, mod))

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        if not self._stack:
            return
        frame = self._stack.pop()
        if frame.nested or mod is frame.before:
            return
        diff = ir_diff(frame.before, mod, frame.name)
        if diff:
            self._write(f"{_safe(frame.name)}.diff", diff)

    def _write(self, name: str, text: str) -> None:
        path = os.path.join(self.folder, f"{self._count:03d}_{name}")
        self._count += 1
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        self.files.append(path)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "pass"


class IllFormedError(DiagnosticError):
    """The module became ill-formed; `pass_name` is the pass that made it so.

    Example:
        >>> err = IllFormedError("buffer A is used but never defined")
        >>> isinstance(err, DiagnosticError), err.message
        (True, 'buffer A is used but never defined')
    """


def _relax_check(mod: IRModule) -> None:
    from unity.relax.analysis.well_formed import check_well_formed  # upper layer, on demand

    check_well_formed(mod)


@dataclass
class WellFormedInstrument(PassInstrument):
    """Check the module before the first pass and after each pass (relax rules by default).

    Example:
        >>> with PassContext(instruments=[WellFormedInstrument()]):  # doctest: +SKIP
        ...     BrokenPass()(mod)
        Traceback (most recent call last):
        IllFormedError: the IR is ill-formed after pass BrokenPass: ...
    """

    check: Callable[[IRModule], None] = _relax_check
    """Raises `DiagnosticError` for an ill-formed module."""
    _checked_input: bool = False

    def enter_pass_ctx(self) -> None:
        self._checked_input = False

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        if not self._checked_input:
            self._checked_input = True
            self._verify(mod, f"before pass {info.name} (the input)", info.name)

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        self._verify(mod, f"after pass {info.name}", info.name)

    def _verify(self, mod: IRModule, when: str, name: str) -> None:
        try:
            self.check(mod)
        except DiagnosticError as err:
            new = IllFormedError(f"the IR is ill-formed {when}: {err.message}", err.node)
            new.with_context(pass_name=name, module=err.module if err.module is not None else mod)
            raise new from None
