"""Schedule primitives on TensorIR: `Schedule`, handles, `Trace`, `ScheduleError`.

Example:
    >>> from unity.schedule import Schedule
    >>> sch = Schedule(func)  # doctest: +SKIP
"""

from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule
from unity.schedule.state import BlockRV, LoopRV
from unity.schedule.tensor_intrin import TensorIntrin
from unity.schedule.trace import Instruction, Trace

__all__ = ["BlockRV", "Instruction", "LoopRV", "Schedule", "ScheduleError", "TensorIntrin", "Trace"]
