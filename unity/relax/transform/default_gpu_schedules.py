"""`DefaultGPUSchedules`: bind every unscheduled PrimFunc of a relax module to GPU threads.

The ``cuda`` counterpart of `DefaultSchedules`: runs
`unity.schedule.default_gpu.apply_default_gpu_schedules`, which leaves PrimFuncs marked
``tir.is_scheduled`` (or already holding a thread binding) alone and gives every other
one the spatial / reduction / tiled-matmul rule.  `unity.compile(mod, target="cuda")`
runs it at every opt level, since host code may only launch kernels.  A recurrent layer's
CPU kernel (``unity.recurrent`` attribute, `unity.topi.nn.recurrent_kernel`) is replaced
by the GPU form of the same kernel.

Before (a PrimFunc of the module)::

    for i in T.serial(1024):
        with T.block("B"):
            v_i = T.axis.spatial(1024, i)
            B[v_i] = A[v_i] * T.float32(2.0)

After ``DefaultGPUSchedules()`` (the function is marked ``tir.is_scheduled``)::

    for i_0 in T.thread_binding(4, thread="blockIdx.x"):
        for i_1 in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("B"):
                v_i = T.axis.spatial(1024, i_0 * 256 + i_1)
                B[v_i] = A[v_i] * T.float32(2.0)

Example:
    >>> from unity.ir.module import IRModule
    >>> DefaultGPUSchedules()(IRModule()).functions
    {}
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.pass_context import PassContext
from unity.ir.transform import ModulePass

__all__ = ["DefaultGPUSchedules"]


@dataclass(frozen=True)
class DefaultGPUSchedules(ModulePass):
    """Apply the default GPU schedule rules to every PrimFunc the user did not schedule.

    Attributes:
        threads: Threads per block the rules aim for.

    Example:
        >>> DefaultGPUSchedules(threads=128).threads
        128
    """

    threads: int = 256

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Schedule the PrimFuncs; relax functions are unchanged."""
        from unity.schedule.default_gpu import apply_default_gpu_schedules

        return apply_default_gpu_schedules(_recurrent_for_gpu(mod), self.threads)


def _recurrent_for_gpu(mod: IRModule) -> IRModule:
    """`mod` with each recurrent CPU kernel rebuilt in its GPU form (same attributes)."""
    from unity.tir.function import PrimFunc
    from unity.topi.nn.recurrent import recurrent_kernel

    out = mod
    for gv, func in list(mod.items()):
        spec = func.attrs.get("unity.recurrent") if isinstance(func, PrimFunc) else None
        if spec is None:
            continue
        gpu = recurrent_kernel(**spec, gpu=True)
        for key, value in func.attrs.items():
            gpu = gpu.with_attr(key, value)
        out = out.copy() if out is mod else out
        out.update_func(gv, gpu)
    return out
