"""Default CPU schedules: one rule per operator family, chosen from each block's structure.

`apply_default_schedules(mod, target)` schedules every PrimFunc that has no
``tir.is_scheduled`` attribute.  Rules: `injective`, `reduction`, `matmul`, `conv2d`,
`fallback`.  `unity.compile` runs them through the relax pass
`unity.relax.transform.default_schedules.DefaultSchedules`, which also packs constant
weights at compile time (`prepack`).

Example:
    >>> from unity.schedule.default import apply_default_schedules
    >>> mod = apply_default_schedules(mod, "llvm")  # doctest: +SKIP
"""

from unity.schedule.default.analysis import RuleContext
from unity.schedule.default.apply import apply_default_schedules, schedule_primfunc

__all__ = ["RuleContext", "apply_default_schedules", "schedule_primfunc"]
