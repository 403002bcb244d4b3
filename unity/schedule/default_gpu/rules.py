"""The default GPU rules: spatial blocks over blocks x threads, reductions across threads.

`schedule_spatial`: fuse the block's loops, split by `threads`, bind the outer part to
`blockIdx.x` and the inner to `threadIdx.x` (a guard covers the ragged end, symbolic
extents included).  `schedule_reduction`: fuse the spatial loops onto `blockIdx.x` (one
thread block per output element), fuse the reduction loops, split them by a power of
two thread count and bind the inner part across `threadIdx.x`, reduced by
`LowerCrossThreadReduction`; a short reduction (a pooling window) instead runs serially
in one thread per output, the outputs spread like a spatial block's.  `schedule_row_chain`:
a function that reduces each row and then uses the results (softmax, layer norm) becomes
one kernel with a thread block per row (`row_chain` recognizes it).

Example:
    >>> schedule_spatial(sch, info, threads=256)  # doctest: +SKIP
"""

from __future__ import annotations

from unity.schedule.analysis import as_int, same_expr
from unity.schedule.default.analysis import BlockInfo
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule


def schedule_spatial(sch: Schedule, info: BlockInfo, threads: int = 256) -> None:
    """Bind every loop of a spatial block to `blockIdx.x` x `threadIdx.x`.

    Example:
        >>> schedule_spatial(sch, info)  # doctest: +SKIP
    """
    block = sch.get_block(info.name)
    _spread(sch, block, sch.get_loops(block), threads)


def _spread(sch: Schedule, block, loops: list, threads: int) -> None:
    """Fuse `loops` (a unit loop when none) and split them over blocks x `threads`."""
    if not loops:
        loops = [sch.add_unit_loop(block)]
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    extent = as_int(sch.get(fused).extent)
    if extent is not None and 0 < extent < threads:
        threads = extent  # a small output: one block of exactly its size, no idle threads
    bx, tx = sch.split(fused, [None, threads])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")


def reduction_threads(extent: int | None, most: int = 256) -> int:
    """Threads for a reduction of `extent` elements: a power of two, at most `most`.

    Example:
        >>> reduction_threads(100), reduction_threads(4096), reduction_threads(None)
        (64, 256, 256)
    """
    if extent is None:
        return most
    threads = 1
    while threads * 2 <= min(extent, most):
        threads *= 2
    return threads


SHORT_REDUCTION = 64
"""A reduction of at most this many elements (a pooling window, a depthwise conv's 3x3)
runs serially in one thread per output: a thread block per output would hold a few
threads (8 for 3x3) and the grid millions of blocks."""


def reduction_extent(info: BlockInfo) -> int | None:
    """The number of elements each output of a reduction block reduces (None: symbolic).

    Example:
        >>> reduction_extent(info)  # doctest: +SKIP
        576
    """
    extent: int | None = 1
    for loop, kind in zip(info.loops, info.loop_kinds):
        if kind == "R":
            size = as_int(loop.extent)
            extent = None if size is None or extent is None else extent * size
    return extent


def schedule_reduction(sch: Schedule, info: BlockInfo, most_threads: int = 256) -> None:
    """One thread block per output element; the reduction split across its threads (a
    short one, see `SHORT_REDUCTION`, serially in one thread per output).

    Example:
        >>> schedule_reduction(sch, info)  # doctest: +SKIP
    """
    if "R" not in info.loop_kinds:
        raise ScheduleError("schedule_reduction", f"block {info.name} has no reduction loop")
    extent = reduction_extent(info)
    block, spatial, reduce = _spatial_outside(sch, info)
    if spatial and extent is not None and extent <= SHORT_REDUCTION:
        _spread(sch, block, spatial, most_threads)
        return
    if not spatial:  # a reduction to one value (a full max / sum): one thread block
        spatial = [sch.add_unit_loop(reduce[0])]
    outer = sch.fuse(*spatial) if len(spatial) > 1 else spatial[0]
    sch.bind(outer, "blockIdx.x")
    inner = sch.fuse(*reduce) if len(reduce) > 1 else reduce[0]
    k0, k1 = sch.split(inner, [None, reduction_threads(extent, most_threads)])
    sch.reorder(k1, k0)
    sch.bind(k1, "threadIdx.x")  # a cross-thread reduction


def schedule_serial_reduction(sch: Schedule, info: BlockInfo, threads: int = 256) -> None:
    """Each output of a reduction block reduced serially by one thread, the outputs spread
    like a spatial block's (the fallback when the reduction cannot go across threads).

    Example:
        >>> schedule_serial_reduction(sch, info)  # doctest: +SKIP
    """
    block, spatial, reduce = _spatial_outside(sch, info)
    if spatial:
        _spread(sch, block, spatial, threads)
    else:  # one value: one thread of one block
        sch.bind(sch.add_unit_loop(reduce[0]), "blockIdx.x")


def _spatial_outside(sch: Schedule, info: BlockInfo) -> tuple[object, list, list]:
    """The block, its spatial loops and its reduction loops, reordered spatial-outermost."""
    block = sch.get_block(info.name)
    loops = sch.get_loops(block)
    spatial = [lp for lp, kind in zip(loops, info.loop_kinds) if kind != "R"]
    reduce = [lp for lp, kind in zip(loops, info.loop_kinds) if kind == "R"]
    sch.reorder(*spatial, *reduce)
    return block, spatial, reduce


def row_chain(infos: list[BlockInfo]) -> int | None:
    """The number of leading row loops shared by a chain of blocks that reduce and then
    use each row (softmax: max, sum of exp, normalize; layer norm), else None.

    Every block must start with the same spatial row loops; after them a reduction block
    has only unit or reduction loops, and the last block is spatial.

    Example:
        >>> row_chain(block_infos(softmax_func))  # doctest: +SKIP
        1
    """
    if len(infos) < 2 or infos[-1].is_reduction or not any(i.is_reduction for i in infos[:-1]):
        return None
    rows = 0
    last = infos[-1]
    while rows < len(last.loops) and all(
        rows < len(i.loops) and i.loop_kinds[rows] == "S"
        and same_expr(i.loops[rows].extent, last.loops[rows].extent) for i in infos
    ):
        rows += 1
    while rows and not _rows_then_reduce(infos, rows):
        rows -= 1
    return rows or None


def _rows_then_reduce(infos: list[BlockInfo], rows: int) -> bool:
    """After `rows` loops, each reduction block has only unit or reduction loops."""
    for info in infos[:-1]:
        rest = list(zip(info.loops[rows:], info.loop_kinds[rows:]))
        if info.is_reduction and any(kind != "R" and as_int(lp.extent) != 1 for lp, kind in rest):
            return False
    return True


def schedule_row_chain(sch: Schedule, infos: list[BlockInfo], rows: int, most_threads: int = 256) -> None:
    """One thread block per row for the whole chain (`row_chain`): the last block's
    columns spread over the threads, each earlier block computed at the row loop, its
    reduction across the same threads, its per-row result kept in shared memory.

    Example:
        >>> schedule_row_chain(sch, infos, row_chain(infos))  # doctest: +SKIP
    """
    extents = [reduction_extent(i) for i in infos if i.is_reduction]
    threads = reduction_threads(None if None in extents else max(extents), most_threads)  # type: ignore[type-var]
    last = sch.get_block(infos[-1].name)
    loops = sch.get_loops(last)
    row = sch.fuse(*loops[:rows]) if rows > 1 else loops[0]
    sch.bind(row, "blockIdx.x")
    if loops[rows:]:
        cols = sch.fuse(*loops[rows:]) if len(loops) > rows + 1 else loops[rows]
        sch.bind(sch.split(cols, [None, threads])[1], "threadIdx.x")
    for info in reversed(infos[:-1]):
        block = sch.get_block(info.name)
        sch.compute_at(block, row)
        inner = [lp for lp in sch.get_loops(block)[1:] if as_int(sch.get(lp).extent) != 1]
        if inner:
            fused = sch.fuse(*inner) if len(inner) > 1 else inner[0]
            outer, across = sch.split(fused, [None, threads])
            sch.reorder(across, outer)
            sch.bind(across, "threadIdx.x")
        sch.set_scope(block, 0, "shared")
