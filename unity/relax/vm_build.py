"""`unity.compile`: a relax `IRModule` to an `Executable` (bytecode + kernels + constants).

Runs the relax pipeline (`unity.relax.pipeline`), turns the relax functions into
VM bytecode (`unity.relax.vm.codegen`) and compiles the PrimFuncs with
`unity.build`.

Example:
    >>> ex = unity.compile(mod, target="llvm")          # doctest: +SKIP
    >>> vm = relax.VirtualMachine(ex, unity.cpu())      # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unity import tir
from unity.ir.module import IRModule
from unity.ir.transform import Pass, PassContext
from unity.relax.expr import Function
from unity.relax.pipeline import get_pipeline
from unity.relax.vm.codegen import codegen
from unity.runtime.vm_executable import Executable
from unity.tir.function import PrimFunc


def compile(
    mod: IRModule | Function,
    target: str | Mapping[str, Any] | Any = "llvm",
    *,
    pipeline: str | Pass | None = "default",
    tuning_db: str | None = None,
) -> Executable:
    """Compile `mod` for `target`; relax functions run on the VM, PrimFuncs as kernels.

    Args:
        mod: An `IRModule` with relax functions (and PrimFuncs), or one relax `Function`
            (compiled as "main").
        target: `"llvm"` (the host CPU) or anything `unity.build` accepts; for `"cuda"`
            every PrimFunc not scheduled by the user gets the default GPU schedules and the
            kernels become `unity.runtime.cuda.kernels.CudaKernels` (run with
            ``relax.VirtualMachine(ex, unity.cuda())``).
        pipeline: A pipeline name (`"default"`), a pass, or None to lower `mod` as is.
        tuning_db: A database written by `unity.tune` (its file or `work_dir`): the
            PrimFuncs it knows get their tuned schedules instead of the default ones.

    Returns:
        The `Executable`: ``relax.VirtualMachine(ex, unity.cpu())["main"](*inputs)``.

    Example:
        >>> ex = compile(mod)  # doctest: +SKIP
    """
    from unity.codegen import build

    if isinstance(mod, Function):
        mod = IRModule({"main": mod})
    if not isinstance(mod, IRModule):
        raise TypeError(
            f"unity.compile: expected an IRModule or a relax Function, got {type(mod).__name__}"
        )
    cuda = _is_cuda(target)
    if isinstance(pipeline, str):
        pipeline = get_pipeline(pipeline, PassContext.current().opt_level, target if cuda else None)
    if tuning_db is not None:
        from unity.tune.apply import ApplyTuningDatabase, with_tuning_db

        tuning = ApplyTuningDatabase(tuning_db, target)
        pipeline = tuning if pipeline is None else with_tuning_db(pipeline, tuning_db, target)
    if pipeline is not None:
        mod = pipeline(mod)
    program, constants = codegen(mod)
    if not program["functions"]:
        raise ValueError("unity.compile: the module has no relax function to run")
    kernels = IRModule({gv: f for gv, f in mod.items() if isinstance(f, PrimFunc)})
    if not kernels.functions:
        kernels = IRModule({"__unity_vm_nop": _nop()})
    if cuda:  # kernels the pipeline did not schedule (pipeline=None) get the GPU defaults
        from unity.runtime.cuda.kernels import CudaKernels
        from unity.schedule.default_gpu import apply_default_gpu_schedules

        lib = build(apply_default_gpu_schedules(kernels), target)
        return Executable(program, constants, CudaKernels.from_module(lib))
    return Executable(program, constants, build(kernels, target))


def _is_cuda(target: object) -> bool:
    from unity.target import Target

    return Target(target).kind == "cuda"


def _nop() -> PrimFunc:
    """A kernel that does nothing (a library needs one function to be exported)."""
    return PrimFunc((), tir.Evaluate(tir.const(0)))
