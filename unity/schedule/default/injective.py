"""Default rule for injective blocks (elementwise, broadcast, copies, padding).

Before::

    for i, j, k in T.grid(64, 56, 56):
        with T.block("T_add"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = A[vi, vj, vk] + B[vk]

After ``schedule_injective``::

    for i in T.parallel(64):
        for j in range(56):
            for k in T.vectorized(56):
                with T.block("T_add"): ...

The shortest prefix of the outer loops with enough tasks is fused into one parallel
loop, the rest stay nested (`parallel_prefix`; only when the nest is big enough to pay
for a parallel launch and the second core's cache misses, `parallel_min_copy`); the
innermost loop is vectorized when it walks the written buffer contiguously.
`VectorizeLoop` turns any extent into vector chunks plus a scalar tail, and falls back
to a serial loop for a body with no vector form, so the rule never needs to prove more
than that the loops are data parallel, which the `parallel`/`vectorize` primitives
check themselves.
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
)
from unity.schedule.schedule import Schedule
from unity.schedule.state import LoopRV
from unity.tir.arith.analyzer import Analyzer
from unity.tir.expr import Cast, PrimExpr, Range, Var, const
from unity.tir.functor import ExprMutator, substitute

__all__ = ["applies", "parallel_outer", "parallel_prefix", "schedule_injective"]


def applies(info: BlockInfo) -> bool:
    """True for a block with only spatial iteration variables, trivially bound.

    Example:
        >>> applies(info)  # doctest: +SKIP
        True
    """
    return not info.is_reduction and info.trivial_binding() and info.store is not None


def schedule_injective(sch: Schedule, info: BlockInfo, ctx: RuleContext) -> None:
    """Parallelize the fused outer loops and vectorize the contiguous inner loop.

    Example:
        >>> schedule_injective(sch, info, RuleContext())  # doctest: +SKIP
    """
    block = sch.get_block(info.name)
    loops = sch.get_loops(block)
    if not loops:
        return
    inner_var = info.iter_var(info.loops[-1])
    contiguous = inner_var is not None and stride_in(info.store.indices, inner_var) == 1
    source = _transposed_source(info) if contiguous else None
    if source is not None:
        _tile_transpose(sch, info, ctx, loops, source)
        return
    if contiguous and _short_rows(info, ctx):
        loops = [*loops[:-2], sch.fuse(loops[-2], loops[-1])]
    outer = loops[:-1] if contiguous else loops
    if contiguous:
        sch.vectorize(loops[-1])
    work = work_size(info)
    if outer and (work is None or work >= ctx.parallel_min_copy):
        extents = [const_extent(lp) for lp in info.loops[: len(outer)]]
        parallel_prefix(sch, outer, extents, ctx)


def _short_rows(info: BlockInfo, ctx: RuleContext) -> bool:
    """Whether the innermost loop is a row of a constant length that whole vectors do not
    cover, which the loop outside it continues in every buffer (`rows_fusable`): then the
    two are vectorized as one.  RegNet's squeeze-and-excitation scaling of NCHW 14x14
    pixels (208 channels) ran in vectors of 14: 14.2 -> 5.1 us alone."""
    width = const_extent(info.loops[-1])
    if width is None or width < 2 or width % ctx.lanes == 0:
        return False  # (a row of one: a mean's 1 x 1 output, nothing to join)
    return rows_fusable(info)


_TRANSPOSE_TILE = 16
"""Side of the square tile a transposing copy moves at a time (16 x 16 floats: 16 cache
lines read, 16 written, all in L1)."""


def _transposed_source(info: BlockInfo) -> int | None:
    """Position of the loop whose variable walks the block's one source contiguously,
    when the innermost loop (contiguous in the output) walks that source with a stride:
    a transpose (attention's `K^T`, NHWC <-> NCHW).  None otherwise.

    The source's indices are simplified with the iteration domains first: a reshape
    inlined before a transpose reads ``x[(((b * s + j) * 12 + h) * 64 + d) // 768 ...]``,
    which is ``x[b, j, h * 64 + d]``."""
    loads = [ld for ld in loads_of(info.store.value) if ld.buffer is not info.store.buffer]
    if len(loads) != 1 or len(loads[0].indices) < 2:
        return None
    analyzer = Analyzer()
    for iv in info.block.iter_vars:
        analyzer.bind(iv.var, iv.dom)
    uncast = _VarCasts()
    indices = tuple(uncast.visit_expr(analyzer.simplify(i)) for i in loads[0].indices)
    inner = info.iter_var(info.loops[-1])
    if not any(inner in used_vars(index) for index in indices) or stride_in(indices, inner) == 1:
        return None
    for pos, loop in enumerate(info.loops[:-1]):
        var, extent = info.iter_var(loop), const_extent(loop)
        if var is None or extent is None or extent % _TRANSPOSE_TILE:
            continue
        if stride_in(indices, var) == 1 or _contiguous_in_tiles(indices, var, extent, analyzer):
            return pos
    return None


def _contiguous_in_tiles(
    indices: tuple[PrimExpr, ...], var: Var, extent: int, analyzer: Analyzer
) -> bool:
    """True when, within each aligned tile of `var`, the source is walked contiguously:
    with ``var = q * 16 + r`` the indices use `r` only in the last one, with stride 1 (an
    NCHW16c -> NCHW reshape reads ``x[n, c // 16, h, w, c % 16]``)."""
    tile = _TRANSPOSE_TILE
    q, r = Var(f"{var.name}_q", var.dtype), Var(f"{var.name}_r", var.dtype)
    analyzer.bind(q, Range(const(0, var.dtype), const(extent // tile, var.dtype)))
    analyzer.bind(r, Range(const(0, var.dtype), const(tile, var.dtype)))
    split = {var: q * const(tile, var.dtype) + r}
    return stride_in(tuple(analyzer.simplify(substitute(i, split)) for i in indices), r) == 1


class _VarCasts(ExprMutator):
    """Drop integer casts of variables (``int64(v_i1)`` -> ``v_i1``), so strides read
    through them (only to read strides: the block keeps its casts)."""

    def visit_cast_(self, cast: Cast) -> PrimExpr:
        value = self.visit_expr(cast.value)
        if isinstance(value, Var) and "int" in cast.dtype and "int" in value.dtype:
            return value
        return cast if value is cast.value else Cast(cast.dtype, value)


def _tile_transpose(
    sch: Schedule, info: BlockInfo, ctx: RuleContext, loops: list[LoopRV], source: int
) -> None:
    """Move the copy in square tiles: per tile, the rows of the output (the source's
    contiguous loop, unrolled innermost) and a run of its columns (the output's
    contiguous loop), so that both sides stay in L1.  The output's loop may be symbolic
    (a sequence): its last tile is guarded.  Attention's `K^T` for seq 128 (a reshape and
    a transpose, 98k floats) ran 65 us vectorized along the output (a gather with stride
    768 per vector) and 16 us in tiles on Zen 3."""
    tile = _TRANSPOSE_TILE
    rows0, rows1 = sch.split(loops[source], [None, tile])
    cols0, cols1 = sch.split(loops[-1], [None, tile])
    outer = [*loops[:source], rows0, *loops[source + 1 : -1]]
    sch.reorder(*outer, cols0, cols1, rows1)
    sch.unroll(rows1)
    extents = [const_extent(lp) for lp in info.loops[:-1]]
    extents[source] = extents[source] // tile
    work = work_size(info)
    if work is None or work >= ctx.parallel_min_copy:
        parallel_prefix(sch, outer, extents, ctx)


def parallel_prefix(
    sch: Schedule, loops: list[LoopRV], extents: list[int | None], ctx: RuleContext
) -> LoopRV:
    """Fuse the shortest prefix of `loops` with at least `_TASKS_PER_CORE` tasks per core
    into one parallel loop; the loops after it stay nested.  The outermost loop's symbolic
    extent (a batch) counts as 1, a later one (rows of a symbolic image size) as enough:
    SqueezeNet's concats over a symbolic size fused their rows' columns too, 5.6x slower.

    Fusing every loop made each innermost row recompute its indices from `//` and `%` of
    one flat index, and kept a concat's branch test per vector: blocked concats of
    SqueezeNet ran 4.4-5.7x, an NCHW one 1.4x faster with the rows nested.

    Example:
        >>> parallel_prefix(sch, [n, c, y, x], [1, 8, 55, 55], RuleContext())  # doctest: +SKIP
    """
    want, count, total = _TASKS_PER_CORE * ctx.num_cores, 0, 1
    for k, extent in enumerate(extents):
        count += 1
        if extent is None and k > 0:
            break  # a size inside a sample (an image's rows): enough tasks, the rest nested
        total *= extent or 1  # the outermost symbolic extent (a batch) may well be 1
        if total >= want:
            break
    return parallel_outer(sch, loops[:count])


_TASKS_PER_CORE = 8
"""Parallel iterations per core that a fused prefix of an injective nest reaches."""


def parallel_outer(sch: Schedule, loops: list[LoopRV]) -> LoopRV:
    """Fuse consecutive loops (outermost first) into one and make it parallel.

    Example:
        >>> parallel_outer(sch, sch.get_loops(block)[:2])  # doctest: +SKIP
    """
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    sch.parallel(fused)
    return fused


def parallel_choice(extents: list[int | None], ctx: RuleContext) -> int:
    """The index of the loop `parallel_one` takes among loops of `extents` (None:
    symbolic), outermost first.

    Example:
        >>> ctx = RuleContext(num_cores=2)
        >>> parallel_choice([1, 2, 56], ctx), parallel_choice([None, 6, 4], ctx)
        (2, 1)
        >>> parallel_choice([None, 2, None], ctx), parallel_choice([None, 1, 1], ctx)
        (2, 0)
    """
    want = 4 * ctx.num_cores
    pick = next((k for k, e in enumerate(extents) if e is not None and e >= want), None)
    if pick is None:
        pick = next((k for k in reversed(range(1, len(extents))) if extents[k] is None), None)
    constant = [k for k, e in enumerate(extents) if e is not None]
    if pick is None and constant:
        pick = max(constant, key=lambda k: extents[k])  # type: ignore[arg-type, return-value]
        if extents[pick] == 1 and extents[0] is None:
            pick = 0
    return 0 if pick is None else pick  # one loop, of symbolic extent


def parallel_one(
    sch: Schedule,
    loops: list[LoopRV],
    extents: list[int | None],
    ctx: RuleContext,
    hoist: bool = False,
    pick: int | None = None,
) -> LoopRV | None:
    """Make ONE of `loops` (a perfect nest, outermost first) parallel, without fusing; return
    it (None when every loop has one iteration).

    Takes the outermost loop with at least `4 * num_cores` iterations, else the innermost
    loop of symbolic extent other than the outermost (the outer ones are batch sizes,
    which may well be 1: a conv over a symbolic batch and image size ran its pixel tiles
    on one core), else the constant loop with the most iterations, when it has more than
    one, else a symbolic outermost loop, else the one with the most.  Over a symbolic batch
    and a fixed image the batch had been taken where no loop reached `4 * num_cores`
    iterations, so that at batch 1 the conv ran on one core: DenseNet-121's sixteen 1x1
    convs at 7 x 7 (4 channel tiles x 4 pixel tiles), GoogLeNet's seven 1x1 convs at 7 x 7,
    MnasNet's 1152 -> 192 at 7 x 7 (6 x 4).
    `pick` (an index into `loops`) overrides the choice.  With `hoist`, the chosen loop
    moves outermost, so the nest launches the thread pool
    once.  Used above a register tile accumulated in a `local` buffer: a fused loop's
    `//` and `%` indices keep `CompactBufferAllocation` from proving the tiles disjoint,
    and the tile would stay a full-size buffer.

    Example:
        >>> parallel_one(sch, [n, o0, y], [1, 2, 56], RuleContext())  # doctest: +SKIP
    """
    if not loops:
        return None
    if pick is None:
        pick = parallel_choice(extents, ctx)
    if extents[pick] == 1:
        return None
    if hoist and pick:
        sch.reorder(loops[pick], *loops[:pick])  # one parallel launch, not one per outer step
    sch.parallel(loops[pick])
    return loops[pick]
