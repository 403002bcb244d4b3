"""`DefaultSchedules`: the module pass `unity.compile` runs to schedule PrimFuncs.

Before::

    @T.prim_func
    def add(A: T.Buffer((256, 256), "float32"), B: ..., C: ...):
        for i, j in T.grid(256, 256):
            with T.block("C"): ...

After ``DefaultSchedules()``::

    @T.prim_func
    def add(A: T.Buffer((256, 256), "float32"), B: ..., C: ...):
        T.func_attr({"tir.is_scheduled": True, ...})
        for i in T.parallel(256):
            for j in T.vectorized(256):
                with T.block("C"): ...

PrimFuncs already marked ``tir.is_scheduled`` (scheduled by hand) are left alone.
Switch the pass off with ``PassContext(config={"schedule.default.enabled": False})``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from unity.ir.module import IRModule
from unity.ir.pass_context import PassContext, list_configs, register_config
from unity.ir.transform import ModulePass
from unity.schedule.default.apply import apply_default_schedules

__all__ = ["DefaultSchedules"]

if "schedule.default.enabled" not in list_configs():
    register_config("schedule.default.enabled", bool, True)


@dataclass(frozen=True)
class DefaultSchedules(ModulePass):
    """Apply the default CPU schedule rules to every unscheduled PrimFunc.

    Attributes:
        target: The `llvm` target to schedule for (None: the host CPU).

    Example:
        >>> from unity.ir.module import IRModule
        >>> DefaultSchedules()(IRModule()).functions
        {}
    """

    target: Any = None

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Schedule the module's PrimFuncs (returns `mod` when the pass is switched off)."""
        if not ctx.get_config("schedule.default.enabled"):
            return mod
        return apply_default_schedules(mod, self.target)
