"""`storage_align`: ask lowering to pad one dimension's stride of an allocated buffer.

Sets the block annotation ``buffer_dim_align`` (TVM's spelling): for each aligned
buffer, ``(buffer_index, axis, factor, offset)`` means the stride of ``axis`` becomes
``k * factor + offset``.

Before::

    with T.block("A_shared"):
        ...

After ``sch.storage_align(b, 0, axis=0, factor=32, offset=1)``::

    with T.block("A_shared"):
        T.block_attr({"buffer_dim_align": ((0, 0, 32, 1),)})
        ...
"""

from __future__ import annotations

from unity.schedule.error import ScheduleError
from unity.schedule.scope import is_param
from unity.schedule.state import BlockRV, ScheduleState
from unity.schedule.tree import replace_stmts

KEY = "buffer_dim_align"
"""The block annotation lowering reads."""


def storage_align(
    state: ScheduleState, block: BlockRV, buffer_index: int, axis: int, factor: int, offset: int
) -> None:
    """Align the stride of `axis` of the `buffer_index`-th buffer `block` writes.

    Raises:
        ScheduleError: a bad index, axis or factor, or the buffer is a function parameter
            (its layout is fixed by the caller).

    Example:
        >>> sch.storage_align(sch.get_block("A_shared"), 0, axis=0, factor=32, offset=1)  # doctest: +SKIP
    """
    p = "storage_align"
    func_name, func, path = state.resolve_block(block, p)
    blk = path[-1].block
    if not 0 <= buffer_index < len(blk.writes):
        msg = f"block {blk.name_hint} writes {len(blk.writes)} buffers; index {buffer_index} is out of range"
        raise ScheduleError(p, msg, func, blk)
    buf = blk.writes[buffer_index].buffer
    if is_param(func, buf):
        raise ScheduleError(
            p, f"{buf.name} is a parameter of the function; its layout is fixed", func, blk
        )
    if not -buf.ndim <= axis < buf.ndim:
        raise ScheduleError(
            p, f"axis {axis} is out of range for {buf.name} of rank {buf.ndim}", func, blk
        )
    if factor <= 0:
        raise ScheduleError(p, f"factor {factor} is not positive", func, blk)
    axis %= buf.ndim
    old = tuple(t for t in blk.annotations.get(KEY, ()) if t[:2] != (buffer_index, axis))  # type: ignore[union-attr]
    new = blk.replace(
        annotations={**blk.annotations, KEY: (*old, (buffer_index, axis, factor, offset))}
    )
    state.commit(func_name, func.replace(body=replace_stmts(func.body, {blk: new})))
