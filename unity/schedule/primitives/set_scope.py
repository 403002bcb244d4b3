"""`set_scope`: change the storage scope of a buffer a block writes.

Before::

    B = T.alloc_buffer((8,))
    ...

After ``sch.set_scope(sch.get_block("B"), 0, "shared")``::

    B = T.alloc_buffer((8,), scope="shared")
    ...
"""

from __future__ import annotations

from unity.schedule.error import ScheduleError
from unity.schedule.scope import is_param
from unity.schedule.state import BlockRV, ScheduleState
from unity.tir.buffer import SCOPES
from unity.tir.functor import substitute


def set_scope(state: ScheduleState, block: BlockRV, buffer_index: int, storage_scope: str) -> None:
    """Give the `buffer_index`-th buffer `block` writes the scope `storage_scope`.

    Raises:
        ScheduleError: a bad index or scope, or the buffer is a function parameter.

    Example:
        >>> sch.set_scope(sch.get_block("B"), 0, "shared")  # doctest: +SKIP
    """
    p = "set_scope"
    if storage_scope not in SCOPES:
        raise ScheduleError(p, f"unknown storage scope {storage_scope!r}; use one of {SCOPES}")
    func_name, func, path = state.resolve_block(block, p)
    blk = path[-1].block
    if not 0 <= buffer_index < len(blk.writes):
        msg = f"block {blk.name_hint} writes {len(blk.writes)} buffers; index {buffer_index} is out of range"
        raise ScheduleError(p, msg, func, blk)
    buf = blk.writes[buffer_index].buffer
    if is_param(func, buf):
        msg = f"{buf.name} is a parameter of the function; its scope stays global"
        raise ScheduleError(p, msg, func, blk)
    if buf.scope == storage_scope:
        return
    new = buf.replace(scope=storage_scope)
    state.commit(func_name, func.replace(body=substitute(func.body, {}, {buf: new})))
