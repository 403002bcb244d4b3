"""Default CPU schedules: one rule per operator family, chosen from each block's structure.

`apply_default_schedules(mod, target)` schedules every PrimFunc that has no
``tir.is_scheduled`` attribute; `DefaultSchedules` is the same as a module pass, run by
`unity.compile`.  Rules: `injective`, `reduction`, `matmul`, `conv2d`, `fallback`.

Example:
    >>> from unity.schedule.default import apply_default_schedules
    >>> mod = apply_default_schedules(mod, "llvm")  # doctest: +SKIP
"""

from unity.schedule.default.analysis import RuleContext
from unity.schedule.default.apply import apply_default_schedules, schedule_primfunc
from unity.schedule.default.pass_ import DefaultSchedules

__all__ = ["DefaultSchedules", "RuleContext", "apply_default_schedules", "schedule_primfunc"]
