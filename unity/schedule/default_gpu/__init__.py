"""Default GPU schedules (in the spirit of TVM's dlight): spatial fallback, cross-thread reductions.

Example:
    >>> from unity.schedule.default_gpu import apply_default_gpu_schedules
    >>> mod = apply_default_gpu_schedules(mod)  # doctest: +SKIP
"""

from unity.schedule.default_gpu.apply import apply_default_gpu_schedules, schedule_gpu_primfunc

__all__ = ["apply_default_gpu_schedules", "schedule_gpu_primfunc"]
