"""Default rule for reductions that are not matmul or conv (softmax, norms, mean, pooling).

Before (a 3x3 max pool)::

    for n, c, y, x, ry, rx in T.grid(1, 64, 56, 56, 3, 3):
        with T.block("pool"):
            vn, vc, vy, vx, vry, vrx = T.axis.remap("SSSSRR", [n, c, y, x, ry, rx])
            ...

After ``schedule_reduction``::

    for c in T.parallel(64):
        for n, y in T.grid(1, 56):
            for x_init in T.vectorized(56):
                with T.block("pool_init"): pool_local[...] = -inf
            for ry, rx in T.grid(3, 3):
                for x in T.vectorized(56):
                    with T.block("pool_update"): pool_local[...] = T.max(pool_local[...], ...)
            for ax in T.vectorized(56):
                with T.block("pool_local"): pool[...] = pool_local[...]

Spatial loops go outside, reduction loops inside (`reorder` checks this is legal).
When the innermost spatial loop walks the output contiguously (pooling, a mean over an
image's rows and columns of blocked channels), it moves below the reduction loops and
is vectorized: each vector lane accumulates its own output element in a local buffer
(registers), so the order of the additions does not change, and the write-back takes
the elementwise epilogue (an average's division); one outer loop is parallel, the
others stay nested.  Otherwise the spatial loops are fused into one parallel loop.  A
reduction over the contiguous innermost axis (softmax, layer norm, mean over the last
axis; an NCHW image's rows and columns, fused into one) at least two vectors long is
factored (`rfactor`): each row accumulates `lanes` partial results in one vector (the
last one guarded when the length is not a multiple), then sums them (the order of the
additions changes, as in any vectorized sum).  Other reductions stay serial per row.
"""

from __future__ import annotations

from unity.schedule.analysis import used_vars
from unity.schedule.default.analysis import (
    BlockInfo,
    RuleContext,
    const_extent,
    loads_of,
    rows_fusable,
    stride_in,
    work_size,
)  # fmt: skip
from unity.schedule.default.epilogue import inline_epilogue
from unity.schedule.default.injective import parallel_one, parallel_outer
from unity.schedule.schedule import Schedule

__all__ = ["applies", "row_vector_factor", "schedule_reduction", "vector_rows"]

def applies(info: BlockInfo) -> bool:
    """True for a reduction block with trivial bindings and a single store body.

    Example:
        >>> applies(info)  # doctest: +SKIP
        True
    """
    return info.is_reduction and info.trivial_binding() and info.store is not None


def schedule_reduction(sch: Schedule, info: BlockInfo, ctx: RuleContext) -> list[str] | None:
    """Parallel spatial loops outside, vectorized accumulation where the window is small;
    return the epilogue blocks taken (a pooling window's).

    Example:
        >>> schedule_reduction(sch, info, RuleContext())  # doctest: +SKIP
    """
    block = sch.get_block(info.name)
    loops = sch.get_loops(block)
    spatial = [lp for lp, kind in zip(loops, info.loop_kinds) if kind != "R"]
    reduce = [lp for lp, kind in zip(loops, info.loop_kinds) if kind == "R"]
    if not reduce:
        return None
    if info.loop_kinds != ["S"] * len(spatial) + ["R"] * len(reduce):
        sch.reorder(*spatial, *reduce)
    factor = row_vector_factor(info, ctx)
    if factor is not None:
        return vector_rows(sch, info, ctx, spatial, reduce[0], factor)
    factor = _image_factor(info, ctx)
    if factor is not None:  # an NCHW image's rows and columns: one contiguous run
        return vector_rows(sch, info, ctx, spatial, sch.fuse(*reduce), factor)
    s_infos = [lp for lp, kind in zip(info.loops, info.loop_kinds) if kind != "R"]
    inner = s_infos[-1] if s_infos else None
    # any window, a global one too: 13x13 in SqueezeNet ran 6.5x faster with its 8 channel
    # lanes in a vector than one output at a time; EfficientNet's squeeze-and-excitation
    # mean over 112x112 (2 blocks of 16 channels) 0.112 -> 0.016 ms
    vector = (
        inner is not None
        and info.iter_var(inner) is not None
        and stride_in(info.store.indices, info.iter_var(inner)) == 1
        and (const_extent(inner) is None or const_extent(inner) >= 4)
    )
    if vector:
        extents = [const_extent(lp) for lp in s_infos[:-1]]
        if const_extent(inner) is None:  # a symbolic row: vectors of it, the last moved back
            row, lanes = sch.split(spatial[-1], [None, min(ctx.lanes, SYMBOLIC_ROW_VECTOR)])
            spatial, extents = [*spatial[:-1], row, lanes], [*extents, None]
        return _window(sch, info, ctx, spatial, extents, reduce)
    work = work_size(info)
    if spatial and (work is None or work >= ctx.parallel_min_work):
        parallel_outer(sch, spatial)
    return None


SYMBOLIC_ROW_VECTOR = 8
"""Lanes a pooling window's row of symbolic width is vectorized in (at most the target's):
rows of 56 and 112 take whole vectors, others a last one moved back to end with the row,
rows shorter than 8 the clamped version (`HoistGuards`).  ShuffleNet's max pool over a
symbolic image size ran 10x slower with its loops fused and not vectorized."""


def _window(
    sch: Schedule,
    info: BlockInfo,
    ctx: RuleContext,
    spatial: list,
    extents: list[int | None],
    reduce: list,
) -> list[str]:
    """A pooling window: per outer point, a vector of outputs (the innermost spatial loop)
    accumulates in registers over the window loops, and is written back with the
    elementwise epilogue (an average's division); returns the epilogue blocks taken.

    The vector loop goes inside the window loops (around them it stayed a serial loop:
    Inception v2's 3x3 average pools 2.5x, max pools 2x slower).  One outer loop is
    parallel and the others stay nested (`parallel_one`): all of them fused into one
    parallel loop recomputed each output's row and column, and its window's bounds, from
    `//` and `%` of the fused index, and kept the accumulator in memory (a 3x3 average
    pool at 14x14 over 576 channels ran 6x slower on Zen 3, a 13x13 global one 6.5x)."""
    block = sch.get_block(info.name)
    acc = sch.cache_write(block, 0, "local")
    taken = inline_epilogue(sch, acc, info)
    sch.reorder(*reduce, spatial[-1])
    init = sch.decompose_reduction(block, reduce[0])
    sch.vectorize(spatial[-1])
    sch.vectorize(sch.get_loops(init)[-1])
    outer = spatial[:-1]
    work = work_size(info)
    if outer and (work is None or work >= ctx.parallel_min_work):
        parallel_one(sch, outer, extents, ctx, hoist=True, pick=_image_rows(extents, ctx))
    if outer:  # the write-back after the window, at the innermost outer loop
        sch.reverse_compute_at(acc, sch.get_loops(block)[len(outer) - 1])
    sch.vectorize(sch.get_loops(acc)[-1])
    return taken


def _image_rows(extents: list[int | None], ctx: RuleContext) -> int | None:
    """The loop to run in parallel when no constant outer loop of a window has
    `4 * num_cores` iterations and the last two are symbolic (an image's rows and
    columns): the rows, so that each task sweeps whole rows.  None (`parallel_one`'s own
    choice) otherwise.  Taking the columns, hoisted above the rows, ran SqueezeNet's
    blocked 3x3/2 max pool (4 blocks of 16 channels) over a symbolic size one column at a
    time: 0.098 ms against 0.041 for the static build (0.050 by rows).

    Example:
        >>> ctx = RuleContext(num_cores=2)
        >>> _image_rows([None, 4, None, None], ctx), _image_rows([None, 24, None, None], ctx)
        (2, None)
    """
    if any(e is not None and e >= 4 * ctx.num_cores for e in extents):
        return None
    if len(extents) >= 2 and extents[-1] is None and extents[-2] is None:
        return len(extents) - 2
    return None


def row_vector_factor(info: BlockInfo, ctx: RuleContext) -> int | None:
    """Lanes for a reduction over one contiguous innermost axis (softmax, mean), else None.

    Example:
        >>> row_vector_factor(info, RuleContext())  # doctest: +SKIP
        16
    """
    if info.loop_kinds[-1] != "R" or info.loop_kinds.count("R") != 1:
        return None
    k_loop = info.loops[-1]
    k = info.iter_var(k_loop)
    extent = const_extent(k_loop)
    if k is None:
        return None
    loads = [ld for ld in loads_of(info.store.value) if ld.buffer is not info.store.buffer]
    if not loads or any(k in used_vars(ld) and stride_in(ld.indices, k) != 1 for ld in loads):
        return None
    if extent is None:  # a symbolic row (a sequence): full vectors and a guarded last one
        return ctx.lanes
    return _row_lanes(extent, ctx)


def _row_lanes(extent: int, ctx: RuleContext) -> int | None:
    """Lanes for a contiguous reduction of `extent` elements: a whole number of vectors
    (of `lanes` or half as many) where one fits twice, else `lanes` with a guarded last
    vector (ViT's softmax over rows of 197, 0.29 -> 0.049 ms); None below two vectors."""
    exact = (f for f in (ctx.lanes, ctx.lanes // 2) if extent % f == 0 and extent >= 2 * f)
    return next(exact, ctx.lanes if extent >= 2 * ctx.lanes else None)


def _image_factor(info: BlockInfo, ctx: RuleContext) -> int | None:
    """Lanes for a reduction over the last two axes of an NCHW image of at least four
    vectors (a global mean: its rows and columns are one contiguous run,
    `rows_fusable`), else None.  RegNet's squeeze-and-excitation means had summed each
    channel one float at a time: 48 channels of 56x56 47.6 -> 11.6 us, 104 of 28x28
    26.6 -> 7.2, 208 of 14x14 13.4 -> 6.7."""
    two_last = info.loop_kinds[-2:] == ["R", "R"] and info.loop_kinds.count("R") == 2
    if len(info.loops) < 3 or not two_last or not rows_fusable(info):
        return None
    height, width = const_extent(info.loops[-2]), const_extent(info.loops[-1])
    if height is None or width is None:  # a symbolic image size: full vectors, a guarded last
        return ctx.lanes  # (one fused with its epilogue takes `row_fusion` first)
    if height * width < 4 * ctx.lanes:
        return None  # 7x7 (440 channels): 6.9 us one float at a time, 8.2 in vectors
    return _row_lanes(height * width, ctx)


def vector_rows(
    sch: Schedule, info: BlockInfo, ctx: RuleContext, spatial: list, k, factor: int
) -> None:
    """Per row: `factor` partial results accumulated in one vector (`rfactor`), then summed.

    Example:
        >>> vector_rows(sch, info, RuleContext(), loops[:-1], loops[-1], 16)  # doctest: +SKIP
    """
    _, k1 = sch.split(k, [None, factor])
    rf = sch.rfactor(k1, factor_axis=len(info.store.indices))
    rf_loops = sch.get_loops(rf)
    *outer, rk0, rk1 = rf_loops
    init = sch.decompose_reduction(rf, rk0)
    sch.vectorize(rk1)
    sch.vectorize(sch.get_loops(init)[-1])
    work = work_size(info)
    big = work is None or work >= ctx.parallel_min_work
    if outer and big:
        parallel_outer(sch, outer)
    final = sch.get_loops(sch.get_block(info.name))
    if len(final) > 1 and big:
        parallel_outer(sch, final[:-1])
