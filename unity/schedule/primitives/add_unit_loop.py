"""`add_unit_loop`: wrap a block or loop in a new loop of extent 1.

Before::

    with T.block("B"):
        B[()] = A[()]

After ``sch.add_unit_loop(b)``::

    for u in T.serial(1):
        with T.block("B"):
            B[()] = A[()]
"""

from __future__ import annotations

from unity.schedule.error import ScheduleError
from unity.schedule.state import BlockRV, LoopRV, ScheduleState
from unity.schedule.tree import replace_stmts
from unity.tir.expr import Var, const
from unity.tir.stmt import For, ForKind


def add_unit_loop(state: ScheduleState, block_or_loop: BlockRV | LoopRV) -> LoopRV:
    """Put a unit loop directly above `block_or_loop`; return its handle.

    Example:
        >>> u = sch.add_unit_loop(sch.get_block("B"))  # doctest: +SKIP
    """
    if isinstance(block_or_loop, LoopRV):
        func_name, func, path = state.resolve_loop(block_or_loop, "add_unit_loop")
    else:
        func_name, func, path = state.resolve_block(block_or_loop, "add_unit_loop")
        if len(path) == 1:
            raise ScheduleError("add_unit_loop", "cannot add a loop above the root block", func)
    target = path[-1]
    var = Var("u", "int32")
    new = For(var, const(0), const(1), ForKind.SERIAL, target)
    state.commit(func_name, func.replace(body=replace_stmts(func.body, {target: new})))
    return state.loop_rv(func_name, var)
