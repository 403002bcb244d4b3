"""Take the elementwise epilogue of a matmul/conv into its tile's write-back block.

Before (after ``cache_write``)::

    ... C[v0, v1] = C_local[v0, v1]                       # write-back block "C_local"
    ... D[v0, v1] = T.max(C[v0, v1] + bias[v1], 0.0)      # epilogue block "D"

After ``inline_epilogue(sch, write_back, info)``::

    ... D[v0, v1] = T.max(C_local[v0, v1] + bias[v1], 0.0)

`reverse_compute_inline` checks the epilogue reads `C` at the point it writes (and
that `C` is not a function output), so a consumer that cannot be taken is left alone.
"""

from __future__ import annotations

from unity.schedule.default.analysis import BlockInfo
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule
from unity.schedule.state import BlockRV

__all__ = ["inline_epilogue"]


def inline_epilogue(sch: Schedule, write_back: BlockRV, info: BlockInfo) -> list[str]:
    """Inline the consumers of `write_back` into it, as long as each one is legal.

    Returns:
        The names of the consumer blocks taken in (they no longer exist).

    Example:
        >>> inline_epilogue(sch, acc, info)  # doctest: +SKIP
        ['T_relu']
    """
    taken: list[str] = []
    while True:
        consumers = sch.get_consumers(write_back)
        if len(consumers) != 1:
            return taken
        name = sch.get(consumers[0]).name_hint
        trial = sch.copy()
        try:
            trial.reverse_compute_inline(consumers[0])
        except ScheduleError:
            return taken
        sch.state, sch.trace = trial.state, trial.trace
        taken.append(name)
