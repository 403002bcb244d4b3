"""Fallback rule: the outermost data-parallel loop of each block runs in parallel.

Used for a block no other rule takes (opaque bodies, non-trivial bindings, gathers) or
after another rule failed.  It asks nothing of the body beyond what `parallel` checks.

Before::

    for i, k in T.grid(128, 64):
        with T.block("argmax"): ...

After ``schedule_fallback``::

    for i in T.parallel(128):
        for k in range(64):
            with T.block("argmax"): ...
"""

from __future__ import annotations

from unity.schedule.default.analysis import BlockInfo, RuleContext, work_size
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule

__all__ = ["schedule_fallback"]


def schedule_fallback(sch: Schedule, info: BlockInfo, ctx: RuleContext) -> None:
    """Make the leading spatial loops of the block one parallel loop, when that is legal.

    Example:
        >>> schedule_fallback(sch, info, RuleContext())  # doctest: +SKIP
    """
    work = work_size(info)
    if work is not None and work < ctx.parallel_min_work:
        return
    block = sch.get_block(info.name)
    loops = sch.get_loops(block)
    lead = []
    for loop, kind in zip(loops, info.loop_kinds):
        if kind != "S":
            break
        lead.append(loop)
    while lead:
        trial = sch.copy()
        try:
            fused = trial.fuse(*lead) if len(lead) > 1 else lead[0]
            trial.parallel(fused)
        except ScheduleError:
            lead.pop()
            continue
        sch.state, sch.trace = trial.state, trial.trace
        return
