"""`bind_cross_thread`: bind a reduction loop to a thread axis (a cross-thread reduction).

`Schedule.bind` accepts data-parallel loops only.  In TVM, binding a reduction loop to
`threadIdx` asks for a cross-thread reduction; here that is this helper, and the GPU
pipeline's `LowerCrossThreadReduction` lowers it (warp shuffles + shared memory).  The
sequential meaning does not change (every loop kind means the serial loop), so the
interpreter and the llvm build still run the scheduled function.

Example:
    >>> k0, k1 = sch.split(k, [None, 32])         # doctest: +SKIP
    >>> sch.reorder(k1, k0)                        # doctest: +SKIP
    >>> bind_cross_thread(sch, k1, "threadIdx.x")  # doctest: +SKIP
"""

from __future__ import annotations

from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule
from unity.schedule.state import LoopRV
from unity.schedule.tree import replace_stmts
from unity.tir.stmt import For, ForKind


def bind_cross_thread(sch: Schedule, loop: LoopRV, thread: str) -> None:
    """Bind reduction loop `loop` to `thread` (one of `threadIdx.x/y/z`).

    Example:
        >>> bind_cross_thread(sch, k1, "threadIdx.x")  # doctest: +SKIP
    """
    if thread not in ("threadIdx.x", "threadIdx.y", "threadIdx.z"):
        raise ScheduleError("bind_cross_thread", f"a reduction can only be bound to threadIdx, not {thread!r}")
    state = sch.state
    func_name, func, path = state.resolve_loop(loop, "bind_cross_thread")
    node: For = path[-1]
    if node.kind is not ForKind.SERIAL:
        raise ScheduleError("bind_cross_thread", f"loop {node.loop_var.name} is already {node.kind.value}",
                            func, node)
    new = node.replace(kind=ForKind.THREAD_BINDING, thread_binding=thread)
    state.commit(func_name, func.replace(body=replace_stmts(func.body, {node: new})))
