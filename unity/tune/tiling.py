"""A multi-level tiling template for a function's one reduction block (conv2d, pooling, ...).

The spatial loops ``s_0 .. s_n`` are split by the knobs ``t0 .. tn`` into an outer and
an inner part (a tile of 1 keeps only the outer loop; a tile equal to the extent only
the inner one), and the loops are reordered ``s_outer.. / reductions.. / s_inner..``:
each outer iteration accumulates a ``t0 x .. x tn`` tile of the output in a `local`
buffer over the whole reduction, then writes it back (taking any elementwise epilogue).
The innermost inner loop is vectorized when the output is contiguous along it;
``unroll`` unrolls the inner loop above it; ``parallel`` names the outer loop to run in
parallel (-1: none).  Other blocks (padding, say) get the default rules.

Before (a depthwise 3x3 conv)::

    for n, c, y, x, ry, rx in T.grid(1, 32, 28, 28, 3, 3):
        with T.block("conv"): ...

After ``schedule_tiled(func, dict(t0=1, t1=4, t2=1, t3=28, unroll=True, parallel=0))``
(abridged)::

    for n_c_0_fused in T.parallel(8):
        for y in range(28):
            ... init ...
            for ry, rx in T.grid(3, 3):
                for c_1 in T.unroll(4):
                    for x in T.vectorized(28):
                        conv_local[...] += ...
            ... write-back ...
"""

from __future__ import annotations

from typing import Any

from unity.schedule.default.analysis import (
    BlockInfo,
    RuleContext,
    block_infos,
    const_extent,
    stride_in,
)
from unity.schedule.default.epilogue import inline_epilogue
from unity.schedule.default.normalize import unit_indices_as_vars
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule
from unity.tir.function import PrimFunc

__all__ = ["reduction_extents", "schedule_tiled"]


def _anchor(infos: list[BlockInfo] | None) -> BlockInfo | None:
    reductions = [b for b in infos or [] if b.is_reduction]
    if len(reductions) != 1:
        return None
    info = reductions[0]
    if not info.trivial_binding() or info.store is None or info.block.init is None:
        return None
    return info


def reduction_extents(func: PrimFunc) -> list[int] | None:
    """Extents of the spatial loops of the one reduction block of `func`, else None.

    Example:
        >>> reduction_extents(depthwise_conv)  # doctest: +SKIP
        [1, 32, 28, 28]
    """
    info = _anchor(block_infos(unit_indices_as_vars(func)))
    if info is None:
        return None
    extents = [const_extent(lp) for lp, kind in zip(info.loops, info.loop_kinds) if kind != "R"]
    if not extents or any(e is None for e in extents) or "R" not in info.loop_kinds:
        return None
    return extents


def schedule_tiled(func: PrimFunc, knobs: dict[str, Any], num_cores: int = 2) -> Schedule:
    """Tile the one reduction block of `func` by `knobs`; other blocks get the default rules.

    Raises:
        ScheduleError: No single reduction block, or a tile that does not divide.

    Example:
        >>> knobs = dict(t0=1, t1=4, t2=1, t3=28, unroll=True, parallel=0)
        >>> sch = schedule_tiled(func, knobs)  # doctest: +SKIP
    """
    from unity.tune.templates import inline_producers, schedule_rest

    func = unit_indices_as_vars(func)
    sch = Schedule(func)
    info = _anchor(block_infos(func))
    if info is None:
        raise ScheduleError("tiled template", "the function has no single reduction block")
    inline_producers(sch, func, block_infos(func) or [], info.name)
    infos = block_infos(sch.mod["main"]) or []
    taken: set[str] = set()
    for other in infos:
        if other.name == info.name:
            taken |= {info.name, *_tile(sch, other, knobs)}
    ctx = RuleContext(num_cores=num_cores)
    for other in infos:
        if other.name not in taken:
            schedule_rest(sch, other, ctx)
    return sch


def _tile(sch: Schedule, info: BlockInfo, knobs: dict[str, Any]) -> list[str]:
    c = sch.get_block(info.name)
    loops = sch.get_loops(c)
    spatial = [(lp, info.loops[n]) for n, lp in enumerate(loops) if info.loop_kinds[n] != "R"]
    reduce = [lp for n, lp in enumerate(loops) if info.loop_kinds[n] == "R"]
    sch.reorder(*(lp for lp, _ in spatial), *reduce)
    acc = sch.cache_write(c, 0, "local")
    taken = inline_epilogue(sch, acc, info)
    outers, inners, outer_extents = [], [], []
    for n, (lp, loop) in enumerate(spatial):
        extent, tile = const_extent(loop), knobs[f"t{n}"]
        if extent % tile:
            raise ScheduleError(
                "tiled template", f"knob t{n}={tile} does not divide the extent {extent}"
            )
        if tile == 1:
            outers.append(lp)
            outer_extents.append(extent)
        elif tile == extent:
            inners.append(lp)
        else:
            o, i = sch.split(lp, [None, tile])
            outers.append(o)
            inners.append(i)
            outer_extents.append(extent // tile)
    sch.reorder(*outers, *reduce, *inners)
    outers = _fuse_unit_loops(sch, outers, outer_extents)
    if outers:
        sch.reverse_compute_at(acc, outers[-1])
    init = sch.decompose_reduction(c, reduce[0])
    var = info.iter_var(spatial[-1][1])
    vector = (
        var is not None
        and stride_in(info.store.indices, var) == 1
        and knobs[f"t{len(spatial) - 1}"] != 1
    )
    if vector:  # the innermost loop walks the output contiguously: so do the init and write-back
        for loop in (inners[-1], sch.get_loops(init)[-1], sch.get_loops(acc)[-1]):
            sch.vectorize(loop)
    if knobs["unroll"] and len(inners) > 1:
        sch.unroll(inners[-2])
    parallel = knobs["parallel"]
    if 0 <= parallel < len(outers):
        sch.parallel(outers[parallel])
    return taken


def _fuse_unit_loops(sch: Schedule, outers: list, extents: list[int]) -> list:
    """Fuse leading unit loops into the next one (a unit loop above the tile keeps the
    tile buffer from being compacted)."""
    while len(outers) > 1 and extents[0] == 1:
        outers = [sch.fuse(outers[0], outers[1]), *outers[2:]]
        extents = [extents[0] * extents[1], *extents[2:]]
    return outers
