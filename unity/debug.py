"""Find the pass that miscompiles: `bisect_pipeline` runs the module after each pass prefix.

Silent miscompiles are the worst bug a compiler has. `bisect_pipeline(mod, inputs,
target)` runs the unoptimized module once for reference, then applies the pipeline
one pass at a time and, after every pass that changed the module, compiles and runs
it (with the lowering pipeline on top, so any prefix is runnable). It names the first
pass after which the outputs stop matching the reference, with that pass's IR diff.

Example:
    >>> result = unity.debug.bisect_pipeline(mod, [x], "llvm", pipeline=my_pipeline)  # doctest: +SKIP
    >>> print(result)                                                                  # doctest: +SKIP
    outputs stop matching after pass 3 of 7: PlantedBug (max abs error 2.0)
    --- before PlantedBug
    +++ after PlantedBug
    ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from unity.ir.instrument_dump import ir_diff
from unity.ir.module import IRModule
from unity.ir.transform import Pass, Sequential

Runner = Callable[[IRModule, Sequence[Any]], Any]
"""``runner(mod, inputs) -> outputs`` (arrays, tensors, or tuples of them)."""


@dataclass
class BisectResult:
    """The outcome: the first bad pass (None when every prefix matched) and evidence.

    Example:
        >>> BisectResult(None, -1, 3).ok
        True
    """

    pass_name: str | None
    index: int
    """Position of the bad pass in the flattened pipeline (-1: none)."""
    num_passes: int
    diff: str = ""
    """Unified diff of the IR before and after the bad pass."""
    error: str = ""
    """What went wrong: the largest mismatch, or the exception the prefix raised."""
    checked: list[str] = field(default_factory=list)
    """Passes after which the module was compiled and run, in order."""

    @property
    def ok(self) -> bool:
        """True when no prefix changed the outputs."""
        return self.pass_name is None

    def __str__(self) -> str:
        if self.ok:
            return f"all {self.num_passes} passes keep the outputs ({len(self.checked)} prefixes run)"
        head = f"outputs stop matching after pass {self.index + 1} of {self.num_passes}: {self.pass_name}"
        return f"{head} ({self.error})\n{self.diff}"


def flatten_pipeline(pipeline: Pass | Sequence[Pass]) -> list[Pass]:
    """The leaf passes of `pipeline` in run order (nested `Sequential`s expanded).

    Example:
        >>> flatten_pipeline(Sequential([Sequential([])]))
        []
    """
    items = pipeline.passes if isinstance(pipeline, Sequential) else pipeline
    if isinstance(items, Pass):
        return [items]
    out: list[Pass] = []
    for p in items:
        out.extend(flatten_pipeline(p) if isinstance(p, Sequential) else [p])
    return out


def bisect_pipeline(
    mod: IRModule,
    inputs: Sequence[Any],
    target: Any = "llvm",
    pipeline: Pass | Sequence[Pass] | None = None,
    *,
    func_name: str = "main",
    rtol: float = 1e-5,
    atol: float = 1e-6,
    runner: Runner | None = None,
) -> BisectResult:
    """Name the first pass of `pipeline` after which `mod`'s outputs on `inputs` change.

    Args:
        mod: the unoptimized module.
        inputs: the arguments of `func_name` (numpy arrays).
        target: the target every prefix is compiled for.
        pipeline: the passes to check; default ``relax.get_pipeline("default")``.
        func_name: the relax function to run.
        rtol, atol: the tolerance of the comparison (numpy's `allclose`).
        runner: how to run a module (default: `unity.compile` with the default lowering
            pipeline, then the VM on the CPU).

    Returns:
        A `BisectResult`; `str()` of it is the report.

    Example:
        >>> bisect_pipeline(mod, [x], "llvm", Sequential([FoldConstant()])).ok  # doctest: +SKIP
        True
    """
    if pipeline is None:
        from unity.relax.pipeline import get_pipeline

        pipeline = get_pipeline("default")
    run = runner or _vm_runner(target, func_name)
    passes = flatten_pipeline(pipeline)
    try:
        expected = _flat(run(mod, inputs))
    except Exception as err:
        msg = f"bisect_pipeline: the unoptimized module does not run, so there is no reference: {err}"
        raise RuntimeError(msg) from err
    result = BisectResult(None, -1, len(passes))
    current = mod
    for index, p in enumerate(passes):
        before, current = current, p(current)
        if current is before:
            continue
        result.checked.append(p.info.name)
        error = _mismatch(run, current, inputs, expected, rtol, atol)
        if error:
            result.pass_name, result.index, result.error = p.info.name, index, error
            result.diff = ir_diff(before, current, p.info.name)
            return result
    return result


def _vm_runner(target: Any, func_name: str) -> Runner:
    def run(mod: IRModule, inputs: Sequence[Any]) -> Any:
        import unity
        from unity.relax import VirtualMachine

        exe = unity.compile(mod, target)
        return VirtualMachine(exe, unity.cpu())[func_name](*inputs)

    return run


def _flat(value: Any) -> list[np.ndarray]:
    if isinstance(value, tuple | list):
        return [a for v in value for a in _flat(v)]
    numpy = getattr(value, "numpy", None)
    return [np.asarray(numpy() if callable(numpy) else value)]


def _mismatch(run: Runner, mod: IRModule, inputs: Sequence[Any], expected: list[np.ndarray],
              rtol: float, atol: float) -> str:  # fmt: skip
    """Why the outputs of `mod` differ from `expected` ('' when they match)."""
    try:
        got = _flat(run(mod, inputs))
    except Exception as err:  # noqa: BLE001 - a crash after a pass is what we report
        return f"compiling or running it failed: {type(err).__name__}: {str(err).splitlines()[0]}"
    if len(got) != len(expected):
        return f"{len(got)} outputs instead of {len(expected)}"
    for i, (a, b) in enumerate(zip(got, expected, strict=True)):
        if a.shape != b.shape:
            return f"output {i} has shape {a.shape} instead of {b.shape}"
        if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            worst = float(np.max(np.abs(a.astype("float64") - b.astype("float64"))))
            return f"output {i}: max abs error {worst:.6g}"
    return ""
