"""Register tiles of the conv2d rules, and the loops above them: how many vector
accumulators a tile may take, and which `(to, tx)` each variant picks.

A tile is `to` output channels x `tx` output pixels, accumulated in vector registers
over the whole reduction.  Enough independent accumulators (8) hide the FMA latency;
more than the register file holds (`register_budget`) spill.  Which axis is in the
vector differs by variant: channels (`channel_tile`), the columns of one row
(`columns_tile`), or the pixels of a pointwise conv's flattened rows (`pixel_tile`).

Example:
    >>> channel_tile(64, 56, 16), columns_tile(272, 14, 8), pixel_tile(272, 196, 8)
    ((32, 8), (4, 14), (2, 28))
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from unity.schedule.analysis import as_int, linear, used_vars
from unity.schedule.default.analysis import BlockInfo, RuleContext, const_extent, vector_registers
from unity.schedule.default.injective import parallel_choice, parallel_one
from unity.schedule.schedule import Schedule
from unity.schedule.state import BlockRV, LoopRV
from unity.tir.arith import Analyzer
from unity.tir.expr import BufferLoad, IntImm, PrimExpr, Var
from unity.tir.functor import substitute

__all__ = [
    "TYPICAL_IMAGE_SIZE", "channel_tile", "channel_tiles", "column_tile", "columns_tile",
    "flatten_rows", "parallel_tile_loops", "pixel_tile", "pointwise_pixels", "pointwise_tile",
    "register_budget", "typical_extent", "vector_pieces",
]  # fmt: skip


def _divisor(extent: int, limit: int) -> int:
    return max(d for d in range(1, min(extent, limit) + 1) if extent % d == 0)


def vector_pieces(t: int, lanes: int) -> int:
    """Vector registers `t` float32 lanes take: full vectors, then LLVM's power-of-two
    pieces of the rest (40 lanes of 16: 16 + 16 + 8, three).

    Example:
        >>> vector_pieces(40, 16), vector_pieces(28, 16)
        (3, 3)
    """
    return t // lanes + (t % lanes).bit_count()


def _vector_cost(t: int, lanes: int) -> float:
    """Instructions per element of a vectorized loop of extent `t`: full vectors, then one
    narrower vector for the rest, which LLVM splits into power-of-two pieces."""
    return vector_pieces(t, lanes) / t


def column_tile(extent: int, lanes: int) -> int:
    """Columns of a vectorized tile: a divisor of the width, or a vector or two with the
    last tile of a row guarded (its guarded copy runs lane by lane), whichever costs the
    fewest instructions per column.

    Example:
        >>> [column_tile(w, 16) for w in (7, 28, 56, 111)]
        [7, 28, 28, 32]
    """
    def cost(t: int) -> float:
        if extent % t == 0:
            return _vector_cost(t, lanes)
        full, rest = divmod(extent, t)
        return (full * _vector_cost(t, lanes) * t + rest) / extent

    candidates = [d for d in range(1, min(extent, 2 * lanes) + 1) if extent % d == 0]
    candidates += [t for t in (lanes, 2 * lanes) if t < extent and extent % t]
    return min(candidates, key=lambda d: (cost(d), -d))


def register_budget(lanes: int, variant: str = "channels") -> int:
    """Vector accumulators a register tile may take: 24 of AVX-512's 32 registers; of
    AVX2's 16, 10 for channels in the vector and 12 for columns (the rest hold the
    operands).  Channel tiles of 12 spill on AVX2: 3x3 64->192 at width 56 on Zen 3 runs
    11.7 ms as (24, 4) and 5.1 ms as (16, 5); a 1x1 272->272 grouped at width 14 runs
    0.16 ms as 4 x 14 columns (12) and 0.20 ms as 2 x 14.

    Example:
        >>> register_budget(16), register_budget(8), register_budget(8, "columns")
        (24, 10, 12)
    """
    if vector_registers(lanes) >= 32:
        return 24
    return 10 if variant == "channels" else 12


def columns_tile(oc: int, ow: int, lanes: int) -> tuple[int, int]:
    """`(to, tx)` of the columns-in-vector variant: `tx` columns (`column_tile`) x up to 8
    channels (4 for rows narrower than a vector), fewer where the accumulators would not
    fit the registers (1x1 272->272 grouped at width 14 on AVX2: 8 x 14 spills and runs
    7x slower than 4 x 14).

    Example:
        >>> columns_tile(272, 14, 8), columns_tile(272, 14, 16)
        ((4, 14), (4, 14))
    """
    tx = column_tile(ow, lanes)
    fits = max(1, register_budget(lanes, "columns") // vector_pieces(tx, lanes))
    return _divisor(oc, min(8 if ow >= lanes else 4, fits)), tx


def channel_tiles(oc: int, lanes: int) -> list[int]:
    """The channel tiles `to` of the channels-in-vector variant for `oc` channels (per
    group): one or two vectors and the multiples of 8 up to 3 vectors that divide it,
    and all of them when that is at most 3 vectors.

    Example:
        >>> channel_tiles(1000, 16), channel_tiles(34, 16)
        ([8, 40], [34])
    """
    tiles = {t for t in (lanes, 2 * lanes, *range(8, 3 * lanes + 1, 8)) if oc % t == 0}
    return sorted(tiles | ({oc} if 8 < oc <= 3 * lanes else set()))


def channel_tile(oc: int, ow: int, lanes: int) -> tuple[int, int] | None:
    """`(to, tx)`: output channels (a multiple of 8 dividing `oc`, or all `oc` when that is
    at most 3 vectors) x columns of a register tile; None when no `to` divides `oc`.

    Enough independent vector accumulators (8) hide the FMA latency; more than the
    register file holds (`register_budget`) spill.  `tx` need not
    divide the width: the last tile of a row is guarded (`HoistGuards` keeps the others
    free of the guard), and a tile's worth is scaled by the share of its columns that
    are real, so a width of 111 takes 8-column tiles rather than 3.

    Example:
        >>> channel_tile(64, 56, 16), channel_tile(1000, 13, 16), channel_tile(192, 13, 16)
        ((32, 8), (40, 7), (16, 13))
    """
    budget = register_budget(lanes)
    best, best_key = None, None
    for to in sorted(channel_tiles(oc, lanes), reverse=True):
        vectors = vector_pieces(to, lanes)
        efficiency = to / (vectors * lanes)
        for tx in range(1, min(ow, 16) + 1):
            if vectors * tx > budget:
                continue
            real = ow / (-(-ow // tx) * tx)  # columns computed that exist
            key = (min(vectors * tx, 8) * efficiency * real, to * tx)
            if best_key is None or key > best_key:
                best, best_key = (to, tx), key
    return best


TYPICAL_IMAGE_SIZE = 224
"""The height and width of a symbolic image where a rule needs a size (an ImageNet image;
`Conv2dWinograd` takes it too)."""


def typical_extent(extent: PrimExpr) -> int:
    """`extent` (of symbolic image sizes) with every variable at `TYPICAL_IMAGE_SIZE`.

    Example:
        >>> h = Var("h", "int64")
        >>> typical_extent(((h - 1) // 32 + 1) * ((h - 1) // 32 + 1))
        49
    """
    size = {v: IntImm(v.dtype, TYPICAL_IMAGE_SIZE) for v in used_vars(extent)}
    value = Analyzer().simplify(substitute(extent, size))
    return value.value if isinstance(value, IntImm) else 0


def parallel_tile_loops(
    sch: Schedule, loops: list, extents: list[int | None], ctx: RuleContext
) -> LoopRV | None:
    """Fuse unit loops of ``[n, o0, y]`` into their neighbour (a unit loop above the tile
    keeps the tile buffer from being compacted), then make one loop parallel: the rows
    (`y`) or the channel blocks (`o0`) where the ``conv.parallel`` knob says so, else
    `parallel_one`'s choice, made over an image of symbolic size as at its typical size
    (`_typical_pick`: at 224 x 224, MnasNet's 1x1 1152 -> 192 at 7 x 7 splits its 6
    channel tiles rather than its 4 pixel tiles, each of which read all the weights:
    0.107 -> 0.089 ms after pauses, as over the fixed size).  Returns the parallel loop
    (None when nothing is parallel).

    Example:
        >>> parallel_tile_loops(sch, [n, o0, y], [1, 8, 56], RuleContext())  # doctest: +SKIP
    """
    names = ["n", "channels", "rows"][: len(loops)]
    while len(loops) > 1 and extents[0] == 1:
        loops = [sch.fuse(loops[0], loops[1]), *loops[2:]]
        extents = [extents[1], *extents[2:]]
        names = names[1:]
    want = ctx.knob("conv.parallel", "auto")
    pick = names.index(want) if want in names else None
    if pick is None and None in extents[1:]:
        pick = _typical_pick(sch, loops, extents, names, ctx)
    return parallel_one(sch, loops, extents, ctx, hoist=True, pick=pick)


def _typical_pick(
    sch: Schedule, loops: list, extents: list[int | None], names: list[str], ctx: RuleContext
) -> int | None:
    """`parallel_one`'s choice with each symbolic extent at its typical size (a batch
    of 1, an image of `TYPICAL_IMAGE_SIZE`), or None where a size has no typical value."""
    typical = []
    for loop, extent, name in zip(loops, extents, names, strict=True):
        if extent is None:
            extent = 1 if name == "n" else typical_extent(sch.get(loop).extent)
            if not extent:
                return None
        typical.append(extent)
    return parallel_choice(typical, ctx)


def pixel_tile(oc: int, pixels: int, lanes: int) -> tuple[int, int] | None:
    """`(to, tx)` of the pixels-in-vector variant (a pointwise conv over ``H*W`` contiguous
    `pixels`): `tx` divides `pixels` (a guarded last tile would run lane by lane) in at
    most 8 vector pieces, `to` divides `oc`; fewest instructions per pixel, then at least
    8 accumulators within the budget, then the fewest loads per FMA (`to` broadcasts and
    `tx`'s vectors); None when no tile fits.  Measured on Zen (AVX2), grouped 1x1 convs
    at 34-68 channels per group: 136@28 (4, 16) 60 GFLOP/s, 272@14 (2, 28) 57, 272@7
    (1, 49) 46; (4, 14) and (4, 28) ran at half that (3-piece vectors; 16 accumulators).

    Example:
        >>> pixel_tile(136, 784, 8), pixel_tile(272, 49, 8), pixel_tile(64, 3136, 16)
        ((4, 16), (1, 49), (4, 64))
    """
    budget = register_budget(lanes, "columns")
    best, best_key = None, None
    for tx in range(1, min(pixels, 8 * lanes) + 1):
        pieces = vector_pieces(tx, lanes)
        if pixels % tx or pieces > 8:
            continue
        for to in range(1, 9):
            if oc % to or to * pieces > budget:
                continue
            acc = to * pieces
            key = (-round(pieces / tx, 3), min(acc, 8), -(to + pieces) / acc, -tx)
            if best_key is None or key > best_key:
                best, best_key = (to, tx), key
    return best


_STRIP_BYTES = 32 << 10
"""Input bytes a pointwise tile's pixels take over all input channels at most (`tx * C`
floats), so that they stay in L1 (48 KiB) while the output channel tiles pass over them."""


def pointwise_tile(oc: int, pixels: int, channels: int, lanes: int) -> tuple[int, int] | None:
    """`(to, tx)` of an ungrouped pointwise conv's pixels-in-vector tile with 32 vector
    registers (AVX-512): 4 output channels (else 3, 2, 1: a divisor of `oc`) x the most
    pixels, from one to four vectors' worth and dividing `pixels`, whose input over
    `channels` fits `_STRIP_BYTES` (else the most pixels: 7 x 7 images).  None when no
    such count divides `pixels`.  Measured on a 2-core Sapphire Rapids, alone, against
    the columns tile and `pixel_tile`'s choice (ms): RegNet-Y's 104 -> 104 at 28 x 28
    (4, 56) 0.050 / 0.129 / 0.112 (2 x 112: its 46 KiB strip read again per 2 channels),
    208 -> 208 at 14 x 14 (4, 28) 0.060 / 0.076 / 0.099, 440 -> 440 at 7 x 7 (4, 49)
    0.068 / 0.120 / 0.058, 32 -> 48 at 112 x 112 (4, 64) 0.135 / 0.232 / 0.150;
    ShuffleNet's 232 -> 232 at 7 x 7 0.021 / 0.047; its 58 -> 58 at 28 x 28 (2, 56) 0.024
    / 0.023 / 0.021.

    Example:
        >>> pointwise_tile(104, 784, 104, 16), pointwise_tile(208, 196, 208, 16)
        ((4, 56), (4, 28))
        >>> pointwise_tile(440, 49, 440, 16), pointwise_tile(64, 169, 64, 16)
        ((4, 49), None)
    """
    to = next(t for t in (4, 3, 2, 1) if oc % t == 0)
    counts = [t for t in range(lanes, 4 * lanes + 1) if pixels % t == 0]
    fits = [t for t in counts if t * channels * 4 <= _STRIP_BYTES]
    tx = max(fits or counts, default=None)
    return None if tx is None else (to, tx)


def pointwise_pixels(info: BlockInfo, x_load: BufferLoad) -> int | PrimExpr | None:
    """``H * W`` when a conv block (output ``[n, o, y, x, ...]``) is pointwise with stride
    1 and its data `x_load` has the output's rows at dims 2 and 3 (``X[n, c, y, x, ...]``,
    unit reduction windows), so that ``y * W + x`` walks `X` contiguously; else None.  An
    expression when the height or width is symbolic (the data's rows proved as long).

    Example:
        >>> pointwise_pixels(info, x_load)  # doctest: +SKIP
        196
    """
    y, x = info.store.indices[2:4]  # type: ignore[union-attr]  # a conv block's store
    units = {info.iter_var(lp) for lp in info.loops if const_extent(lp) == 1}
    for index, var in zip(x_load.indices[2:4], (y, x)):
        lin = linear(index)
        if lin is None or lin[1] != 0 or lin[0].get(var) != 1:
            return None
        if any(v is not var and v not in units for v in lin[0]):
            return None
    height, width = const_extent(info.loops[2]), const_extent(info.loops[3])
    if height is not None and width is not None:
        shape = [as_int(d) for d in x_load.buffer.shape[2:4]]
        return height * width if shape == [height, width] else None
    rows = (info.loops[2].extent, info.loops[3].extent)
    analyzer = Analyzer()
    if not all(analyzer.can_prove_equal(d, e) for d, e in zip(x_load.buffer.shape[2:4], rows)):
        return None
    return rows[0] * rows[1]


def flatten_rows(sch: Schedule, conv: BlockRV, write_back: BlockRV, width: int | PrimExpr) -> None:
    """Make `conv` (accumulating in a cached buffer ``[n, o, y, x, ...]``) and its
    `write_back` iterate the flattened pixel ``p = y * width + x`` instead of `y` and `x`,
    the cached buffer stored as ``[n, o, p, ...]``: a tile of `p` is then a box of it,
    rows crossed or not (`transform_block_layout`).

    Example:
        >>> flatten_rows(sch, conv, acc, 14)  # doctest: +SKIP
    """
    rank = len(sch.get(conv).writes[0].buffer.shape)
    sch.transform_layout(conv, ("write", 0), _rows_flattened([f"i{k}" for k in range(rank)], width))
    for block in (conv, write_back):
        names = [iv.var.name for iv in sch.get(block).iter_vars]
        sch.transform_block_layout(block, _rows_flattened(names, width))


def _rows_flattened(names: list[str], width: int) -> Callable[..., tuple[PrimExpr, ...]]:
    """The index map ``(n, o, y, x, *rest) -> (n, o, y * width + x, *rest)`` over the
    variables `names` (its signature names them, so that the trace prints a lambda)."""

    def index_map(*v: PrimExpr) -> tuple[PrimExpr, ...]:
        return (v[0], v[1], v[2] * width + v[3], *v[4:])

    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names]
    index_map.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]  # for the trace
    return index_map
