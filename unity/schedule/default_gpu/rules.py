"""The default GPU rules: spatial blocks over blocks x threads, reductions across threads.

`schedule_spatial`: fuse the block's loops, split by `threads`, bind the outer part to
`blockIdx.x` and the inner to `threadIdx.x` (a guard covers the ragged end, symbolic
extents included).  `schedule_reduction`: fuse the spatial loops onto `blockIdx.x` (one
thread block per output element), fuse the reduction loops, split them by a power of
two thread count and bind the inner part across `threadIdx.x`, reduced by
`LowerCrossThreadReduction`.

Example:
    >>> schedule_spatial(sch, info, threads=256)  # doctest: +SKIP
"""

from __future__ import annotations

from unity.schedule.analysis import as_int
from unity.schedule.default.analysis import BlockInfo
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule


def schedule_spatial(sch: Schedule, info: BlockInfo, threads: int = 256) -> None:
    """Bind every loop of a spatial block to `blockIdx.x` x `threadIdx.x`.

    Example:
        >>> schedule_spatial(sch, info)  # doctest: +SKIP
    """
    block = sch.get_block(info.name)
    loops = sch.get_loops(block)
    if not loops:
        loops = [sch.add_unit_loop(block)]
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
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


def schedule_reduction(sch: Schedule, info: BlockInfo, most_threads: int = 256) -> None:
    """One thread block per output element; the reduction split across its threads.

    Example:
        >>> schedule_reduction(sch, info)  # doctest: +SKIP
    """
    if "R" not in info.loop_kinds:
        raise ScheduleError("schedule_reduction", f"block {info.name} has no reduction loop")
    block = sch.get_block(info.name)
    loops = sch.get_loops(block)
    spatial = [lp for lp, kind in zip(loops, info.loop_kinds) if kind != "R"]
    reduce = [lp for lp, kind in zip(loops, info.loop_kinds) if kind == "R"]
    sch.reorder(*spatial, *reduce)
    if not spatial:
        spatial = [sch.add_unit_loop(block)]
    outer = sch.fuse(*spatial) if len(spatial) > 1 else spatial[0]
    sch.bind(outer, "blockIdx.x")
    extent = 1
    for loop in info.loops:
        if info.loop_kinds[info.loops.index(loop)] == "R":
            size = as_int(loop.extent)
            extent = None if size is None or extent is None else extent * size
    inner = sch.fuse(*reduce) if len(reduce) > 1 else reduce[0]
    k0, k1 = sch.split(inner, [None, reduction_threads(extent, most_threads)])
    sch.reorder(k1, k0)
    sch.bind(k1, "threadIdx.x")  # a cross-thread reduction
