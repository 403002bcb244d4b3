"""Default rule for conv2d in NCHW/OIHW (as legalized): a direct, register-tiled schedule.

Claims a reduction block ``Y[n, o, y, x] += X[n, c(o, rc), y*sh + ry*dh, x*sw + rx*dw] *
W[o, rc, ry, rx]`` (optional casts; the output's last index `x` reaches only `X`'s last
index, linearly).  Two variants, both tiles of the output accumulated in a `local`
buffer that LLVM keeps in registers:

- **channels in the vector** (`X` depends on `o` at most as ``o // (O/groups)``, and
  the channels of a group are a multiple of 8 or at most 3 vectors): `W` is packed
  into ``[O/to, C, KH, KW, to]``; per
  reduction step, `tx` input values are broadcast and multiplied with one `to`-wide
  vector of packed weights; the tile is `to` channels x `tx` columns;
- **columns in the vector** (depthwise, other groupings, odd channel counts, and stride-1
  convs over at most 64 input channels with rows of 3-4 vectors): the tile is `to`
  channels x `tx` columns of one output row, `x` vectorized, weights broadcast.

A tuner may fix the variant and the tile (`RuleContext.knob`: ``conv.variant``,
``conv.tile``, ``conv.parallel``).

Loops ``(n, o0, y) parallel / x0 / rc, ry, rx / inner tile``; the tile's zeroing moves
out of the reduction (`decompose_reduction`) and the write-back takes the elementwise
epilogue (bias, relu...).  The padding block stays a separate, parallel loop nest.

Before::

    for n, o, y, x, rc, ry, rx in T.grid(1, 64, 56, 56, 64, 3, 3):
        with T.block("conv"): ...

After ``schedule_conv2d`` (channels in the vector, abridged)::

    for n_o0_y_fused in T.parallel(112):
        for x0 in range(7):
            ... init ...
            for rc, ry, rx in T.grid(64, 3, 3):
                for x1 in T.unroll(8):
                    for o1 in T.vectorized(32):
                        conv_local[...] += X[...] * W_packed[o0, rc, ry, rx, o1]
            ... write-back (+ epilogue) ...
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from unity.schedule.analysis import linear, used_vars
from unity.schedule.default.analysis import (
    BlockInfo,
    RuleContext,
    const_extent,
    multiply_accumulate,
    vector_registers,
)
from unity.schedule.default.conv2d_tiles import (
    TYPICAL_IMAGE_SIZE,
    channel_tile,
    columns_tile,
    flatten_rows,
    parallel_tile_loops,
    pixel_tile,
    pointwise_pixels,
    pointwise_tile,
    typical_extent,
)
from unity.schedule.default.epilogue import inline_epilogue
from unity.schedule.default.prepack import PREPACK
from unity.schedule.schedule import Schedule
from unity.schedule.state import BlockRV
from unity.tir.buffer import Buffer
from unity.tir.expr import BufferLoad, PrimExpr, Var

__all__ = [
    "TYPICAL_IMAGE_SIZE", "ConvTiling", "applies", "conv_tiling", "match", "padding_block",
    "raise_unsupported", "schedule_conv2d", "symbolic_width", "typical_extent",
]  # fmt: skip

def match(info: BlockInfo) -> tuple[BufferLoad, BufferLoad] | None:
    """`(X load, W load)` of a conv2d-like block, else None.

    Example:
        >>> x_load, w_load = match(info)  # doctest: +SKIP
    """
    factors = multiply_accumulate(info)
    if factors is None:
        return None
    if info.loop_kinds != ["S"] * 4 + ["R"] * (len(info.loops) - 4) or len(info.loops) < 5:
        return None
    out = info.store.indices  # type: ignore[union-attr]  # a store: factors found
    if len(out) != 4 or not all(isinstance(v, Var) for v in out) or len(set(out)) != 4:
        return None
    if [info.iter_var(lp) for lp in info.loops[:4]] != list(out):
        return None
    lhs, rhs = factors
    if not (isinstance(lhs, BufferLoad) and isinstance(rhs, BufferLoad)):
        return None
    n, o, y, x = out
    if _uses(rhs.indices, x) and not _uses(lhs.indices, x):
        lhs, rhs = rhs, lhs
    if len(lhs.indices) != 4 or len(rhs.indices) != 4:
        return None
    if not all(isinstance(v, Var) for v in rhs.indices) or rhs.indices[0] is not o:
        return None
    if any(_uses(rhs.indices, v) for v in (n, y, x)):
        return None
    lin = linear(lhs.indices[-1])
    if lin is None or lin[0].get(x, 0) < 1 or _uses(lhs.indices[:-1], x):
        return None
    return lhs, rhs


def _uses(indices: tuple[PrimExpr, ...], var: Var) -> bool:
    return any(var in used_vars(i) for i in indices)


def applies(info: BlockInfo) -> bool:
    """True when `match` recognizes the block.

    Example:
        >>> applies(info)  # doctest: +SKIP
        True
    """
    return match(info) is not None


LONG_ROW = 1 << 20
"""What a symbolic output width is taken to be when choosing a tile for a 1-D conv (one
row: samples or frames); its tiles' last is guarded."""

SYMBOLIC_IMAGE_WIDTH = 7
"""What a symbolic output width of an image (height not 1) is taken to be: tiles of 7
pixels or columns divide the rows of a 224 x 224 image's stages (112 down to 7); other
rows take one partial tile, moved back to end with the row.  (A long row's tiles, 26
pixels or 32 columns, ran MobileNet v2's and ShuffleNet's depthwise convs at 14x14 and
7x7 in one partial tile each: MobileNet v2 8.7 ms, 5.4 for the static build; with 7
pixels, level with it.)"""


def symbolic_width(height: int | None) -> int:
    """The row length a tile over a symbolic width is chosen for: a long one for a 1-D conv
    over a sequence (height 1), an image's row otherwise.

    Example:
        >>> symbolic_width(1) == LONG_ROW, symbolic_width(None)
        (True, 7)
    """
    return LONG_ROW if height == 1 else SYMBOLIC_IMAGE_WIDTH


def _group_size(x_load: BufferLoad, o_var: Var) -> int | None:
    """How many output channels share one input-channel group: 0 when `X` does not
    depend on `o` (groups = 1), `pg` when `o` reaches `X` only as ``o // pg``, else None.

    Example:
        >>> _group_size(x_load, o)  # doctest: +SKIP
        0
    """
    from unity.tir.expr import FloorDiv, IntImm
    from unity.tir.functor import post_order_visit

    uses: list[int] = [0]
    sizes: set[int] = set()

    def visit(node: object) -> None:
        if node is o_var:
            uses[0] += 1
        elif isinstance(node, FloorDiv) and node.a is o_var and isinstance(node.b, IntImm):
            sizes.add(int(node.b.value))

    for index in x_load.indices:
        post_order_visit(index, visit)
    if uses[0] == 0:
        return 0
    if len(sizes) == 1 and uses[0] == 1 and 1 < next(iter(sizes)):
        return next(iter(sizes))
    return None


@dataclass(frozen=True)
class ConvTiling:
    """What the rule chooses for a conv2d block, and what a tuner may vary.

    Attributes:
        per_group: Output channels per group when the channels-in-vector variant
            applies (all of them for an ungrouped conv), else None.
        out_channels: Output channels.
        width: Output width (None when symbolic: columns only, the last tile guarded).
        variant: ``"channels"``, ``"columns"`` or ``"pixels"``, the rule's choice.
        channel_tile: The channels-in-vector ``(to, tx)`` (None when it does not apply).
        column_tile: The columns-in-vector ``(to, tx)``.
        whole_rows: Whether `column_tile` is the whole-row tile of `_row_tile` (then
            threads split the rows).
        pixels: ``H*W`` of a pointwise stride-1 conv, whose rows the pixels-in-vector
            variant flattens (an expression when symbolic; None for other convs).
        pixel_tile: The pixels-in-vector ``(to, tx)`` (None when it does not apply).

    Example:
        >>> ConvTiling(64, 64, 56, "channels", (32, 8), (8, 28)).tile
        (32, 8)
    """

    per_group: int | None
    out_channels: int
    width: int | None
    variant: str
    channel_tile: tuple[int, int] | None
    column_tile: tuple[int, int]
    whole_rows: bool = False
    pixels: int | PrimExpr | None = None
    pixel_tile: tuple[int, int] | None = None

    @property
    def tile(self) -> tuple[int, int]:
        """The tile of the chosen variant."""
        tiles = {"channels": self.channel_tile, "pixels": self.pixel_tile}
        return tiles.get(self.variant) or self.column_tile


def conv_tiling(info: BlockInfo, lanes: int, width: int | None = None) -> ConvTiling | None:
    """The rule's choices for a conv2d block of constant channels, else None.

    A symbolic width (a 1-D conv over samples or frames, as wav2vec2's positional conv,
    grouped in 24 channels that no 16-lane block holds) takes the channels-in-vector tile
    (else the columns one) of a long row, the row's last tile guarded: its 384 channels in
    16 groups, kernel 128, over 49 frames ran 32.8 ms in the fallback rule and 1.2 ms here
    (static width: 1.6; onnxruntime 2.2).  `width`, when given, is what a symbolic output
    width is taken to be (`width_versions`: a version per range of widths).  A pointwise
    conv over a symbolic height and width that makes `_MANY_TYPICAL_PIXELS` at a typical
    size (`typical_extent`) takes the pixels-in-vector tile instead: in the channels one
    (8 output channels x 7 pixels) RegNet-Y's 1x1 convs on NCHW data ran ~2x slower
    (48 -> 104 at 56 x 56 0.22 ms against 0.12, 104 -> 104 at 28 x 28 0.11 against
    0.057, 64 -> 256 at 56 x 56 0.52 against 0.28).  So does an ungrouped one over a
    constant size on AVX-512 (`pointwise_tile`: 1.2-2.5x faster than the columns tile),
    whose tile a symbolic one takes too, within `SYMBOLIC_PIXELS` vectors (4 x 32 rather
    than `pixel_tile`'s 8 x 32: 48 -> 104 at 56 x 56 0.118 ms against 0.141, 32 -> 48 at
    112 x 112 0.154 against 0.178, the others level).

    Example:
        >>> conv_tiling(info, 16).tile  # doctest: +SKIP
        (32, 8)
    """
    found = match(info)
    if found is None:
        return None
    oc, ow = const_extent(info.loops[1]), const_extent(info.loops[3])
    if oc is None:
        return None
    per_group = _group_size(found[0], info.store.indices[1])  # X's channel: (o // pg) * C/G + rc
    width = ow or width or symbolic_width(const_extent(info.loops[2]))
    channel = channel_tile(per_group or oc, width, lanes) if per_group is not None else None
    row = None if ow is None else _row_tile(info, found[0], oc, ow, lanes)
    column = row or columns_tile(oc, width, lanes)
    pixels = pointwise_pixels(info, found[0])
    span = pixels if isinstance(pixels, int) else SYMBOLIC_PIXELS * lanes  # a tile spans at most
    pixel = None if pixels is None else pixel_tile(oc, span, lanes)
    # pixels in vectors before the other variants: an ungrouped conv with AVX-512's
    # registers in `pointwise_tile`'s tile over a constant size; over a symbolic size, where
    # an image of a typical size makes many (each thread reads the whole weight)
    channels = const_extent(info.loops[4])
    first = False
    if pixels is not None and per_group == 0 and channels and vector_registers(lanes) >= 32:
        tile = pointwise_tile(oc, span, channels, lanes)
        pixel = tile or pixel
        first = tile is not None and isinstance(pixels, int)
    if pixel is not None and not isinstance(pixels, int):
        first = typical_extent(pixels) >= _MANY_TYPICAL_PIXELS
    variant = (
        "pixels" if first
        else "channels" if channel and not row
        else "pixels" if pixel and not row
        else "columns"
    )  # fmt: skip
    usable = (per_group or oc) if channel is not None else None
    return ConvTiling(usable, oc, ow, variant, channel, column, row is not None, pixels, pixel)


def schedule_conv2d(sch: Schedule, info: BlockInfo, ctx: RuleContext) -> list[str]:
    """Tile the conv2d block and take its epilogue; return the epilogue blocks taken.

    Example:
        >>> schedule_conv2d(sch, info, RuleContext())  # doctest: +SKIP
    """
    rule = conv_tiling(info, ctx.lanes, ctx.knob("conv.width"))
    if rule is None:
        raise_unsupported("symbolic output channels")
    variant = ctx.knob("conv.variant") or rule.variant
    tuned = ctx.knob("conv.tile")
    if variant == "channels":
        if rule.per_group is None or (tuned is not None and rule.per_group % tuned[0]):
            raise_unsupported(f"the channel tile {tuned} (channels per group: {rule.per_group})")
        return _channels_in_vector(sch, info, match(info)[1], *(tuned or rule.channel_tile), ctx)
    if variant == "pixels":
        to, tx = tuned or rule.pixel_tile or (0, 0)
        symbolic = rule.pixels is not None and not isinstance(rule.pixels, int)
        if rule.pixels is None or not to or rule.out_channels % to or (not symbolic and rule.pixels % tx):
            raise_unsupported(f"the pixel tile {(to, tx)} ({rule.pixels} pixels)")
        many = symbolic or rule.pixels // tx >= _PIXEL_TASKS * ctx.num_cores
        if many and not ctx.knob("conv.parallel"):
            ctx = replace(ctx, knobs=(*ctx.knobs, ("conv.parallel", "rows")))
        return _pixels_in_vector(sch, info, to, tx, ctx)
    if tuned is not None and rule.out_channels % tuned[0]:
        raise_unsupported(f"the tile {tuned} (output channels: {rule.out_channels})")
    if rule.whole_rows and not ctx.knob("conv.parallel"):
        ctx = replace(ctx, knobs=(*ctx.knobs, ("conv.parallel", "rows")))  # rows stay cached
    return _columns_in_vector(sch, info, *(tuned or rule.column_tile), ctx)


_MANY_TYPICAL_PIXELS = 400
"""Pixels of a pointwise conv over a symbolic size, at `TYPICAL_IMAGE_SIZE`, from which
its pixels fill the vectors: each thread then reads the whole (unpacked) weight, and at
7 x 7 (RegNet-Y's 440 -> 440, seven of them) it ran 0.30 ms cold inside the model, 0.066
alone in the channels tile against 0.072."""


SYMBOLIC_PIXELS = 2
"""Vectors of pixels a pointwise conv's pixel tile holds at most when the image size is
symbolic (ShuffleNet's 1x1 convs over 116 and 232 channels, not blocked, at 28x28 down to
7x7: the tile whole for 49 pixels, the image's last tile moved back)."""

_PIXEL_TASKS = 2
"""Pixel tiles per core from which a pointwise conv's pixels-in-vector tiles run in
parallel over the pixels (each thread reads its own slice of `X`, all of the small `W`)
rather than over the output channels (every thread reads all of `X`): on Zen 3, inside
ShuffleNet, the grouped 1x1 convs at 272@14 (7 tiles of 28 pixels) 5-10% and at 136@28
(49 tiles of 16) 17% faster, the model's kernels 3.03 -> 2.92 ms."""


def _row_tile(
    info: BlockInfo, x_load: BufferLoad, oc: int, ow: int, lanes: int
) -> tuple[int, int] | None:
    """`(4, ow)` for a stride-1 conv over few input channels with rows of 3-4 vectors: four
    channels x a whole output row in registers, weights broadcast (measured here: 1x1
    64->256 and 3x3 64->64 at width 56 run 68% -> 90% and 85% -> 95% of one core's peak;
    with 256 input channels the channel tiles stay ahead).  Threads split the rows: each
    keeps its rows of the input in cache across all channel blocks (ResNet-50 1.6% faster
    than splitting the channel blocks).  AVX-512 only: with AVX2's 16 registers four
    channels of a 3-4 vector row spill, and two channels lose to the channel tiles (3x3
    32->128 at width 27 on Zen 3: 0.97 ms as (4, 27), 0.58 as (2, 27), 0.41 as (8, 9))."""
    if lanes < 16:
        return None
    lin = linear(x_load.indices[-1])
    x = info.store.indices[3]
    reduce_channels = const_extent(info.loops[4])
    if lin is None or lin[0].get(x) != 1 or reduce_channels is None or reduce_channels > 64:
        return None
    return (4, ow) if 3 * lanes <= ow <= 4 * lanes and oc % 4 == 0 else None


def raise_unsupported(what: str) -> None:
    """Raise the `ScheduleError` that sends a block to the next rule.

    Example:
        >>> raise_unsupported("a symbolic width")  # doctest: +SKIP
        Traceback (most recent call last):
        ScheduleError: ...
    """
    from unity.schedule.error import ScheduleError

    raise ScheduleError("default conv2d", what)


def _channels_in_vector(
    sch: Schedule, info: BlockInfo, w_load: BufferLoad, to: int, tx: int, ctx: RuleContext
) -> list[str]:
    c = sch.get_block(info.name)
    n, o, y, x, *red = sch.get_loops(c)
    index = [r.buffer for r in info.block.reads].index(w_load.buffer)
    packed = sch.cache_read(c, index, "global")
    sch.transform_layout(packed, ("write", 0), lambda a, b, r, s: (a // to, b, r, s, a % to))
    sch.annotate(packed, PREPACK, f"oihw:{to}")  # a constant weight is packed at compile time
    po, *prest = sch.get_loops(packed)
    po0, po1 = sch.split(po, [None, to])
    sch.reorder(po0, *prest, po1)
    sch.parallel(po0)
    sch.vectorize(po1)
    acc = sch.cache_write(c, 0, "local")
    taken = inline_epilogue(sch, acc, info)
    sch.transform_layout(c, ("write", 0), lambda a, b, r, s: (a, r, s, b))  # channels innermost
    o0, o1 = sch.split(o, [None, to])
    x0, x1 = sch.split(x, [None, tx])
    sch.reorder(n, o0, y, x0, *red, x1, o1)
    sch.reverse_compute_at(acc, x0)
    init = sch.decompose_reduction(c, red[0])
    parallel_tile_loops(sch, [n, o0, y], _outer_extents(info, to), ctx)
    sch.unroll(x1)
    sch.vectorize(o1)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.vectorize(sch.get_loops(acc)[-1])
    return taken


def _columns_in_vector(
    sch: Schedule, info: BlockInfo, to: int, tx: int, ctx: RuleContext
) -> list[str]:
    c = sch.get_block(info.name)
    pad = None
    if _unit_stride_depthwise(info) and ctx.knob("conv.parallel", "auto") in ("auto", "channels"):
        pad = padding_block(sch, c, match(info)[0].buffer)  # type: ignore[index]  # matched
    if pad is not None:  # each channel block pads its own channels, inside its thread
        ctx = replace(ctx, knobs=(*ctx.knobs, ("conv.parallel", "channels")))
    n, o, y, x, *red = sch.get_loops(c)
    acc = sch.cache_write(c, 0, "local")
    taken = inline_epilogue(sch, acc, info)
    o0, o1 = sch.split(o, [None, to])
    x0, x1 = sch.split(x, [None, tx])
    sch.reorder(n, o0, y, x0, *red, o1, x1)
    sch.reverse_compute_at(acc, x0)
    init = sch.decompose_reduction(c, red[0])
    outer = parallel_tile_loops(sch, [n, o0, y], _outer_extents(info, to), ctx)
    if pad is not None and outer is not None:  # the knob made it the channel-block loop
        sch.compute_at(pad, outer)
        sch.vectorize(sch.get_loops(pad)[-1])
        taken.append(sch.get(pad).name_hint)
    sch.unroll(o1)
    sch.vectorize(x1)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.vectorize(sch.get_loops(acc)[-1])
    return taken


def _pixels_in_vector(
    sch: Schedule, info: BlockInfo, to: int, tx: int, ctx: RuleContext
) -> list[str]:
    """A pointwise conv as ``Y[o, p] += W[o, c] * X[c, p]`` over the flattened pixels
    ``p = y * W + x`` (contiguous in `X` and `Y`): both the conv block and its write-back
    iterate `p` (`transform_block_layout`), so a tile of `tx` pixels may cross rows."""
    c = sch.get_block(info.name)
    width = const_extent(info.loops[3]) or info.loops[3].extent
    acc = sch.cache_write(c, 0, "local")
    taken = inline_epilogue(sch, acc, info)
    flatten_rows(sch, c, acc, width)
    n, o, p, *red = sch.get_loops(c)
    o0, o1 = sch.split(o, [None, to])
    p0, p1 = sch.split(p, [None, tx])
    sch.reorder(n, o0, p0, *red, o1, p1)
    sch.reverse_compute_at(acc, p0)
    init = sch.decompose_reduction(c, red[0])
    batch, channels, height = (const_extent(lp) for lp in info.loops[:3])
    tiles = height * width // tx if height is not None and isinstance(width, int) else None
    parallel_tile_loops(sch, [n, o0, p0], [batch, (channels or 0) // to, tiles], ctx)
    sch.unroll(o1)
    sch.vectorize(p1)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.vectorize(sch.get_loops(acc)[-1])
    return taken


def padding_block(sch: Schedule, conv: BlockRV, data: Buffer) -> BlockRV | None:
    """The block that writes the (padded) `data` a conv block reads, if there is one.

    Example:
        >>> padding_block(sch, sch.get_block("T_conv2d"), x_load.buffer)  # doctest: +SKIP
    """
    for rv in sch.get_producers(conv):
        if data in {r.buffer for r in sch.get(rv).writes}:
            return rv
    return None


def _unit_stride_depthwise(info: BlockInfo) -> bool:
    """One input channel per output channel (X's channel follows `o`, one reduced channel),
    stride 1 along the row.  Such a conv pads its channel block inside its thread: the
    padded rows are still in cache when the block reads them (544@7 0.033 -> 0.019 ms on
    two threads; 272@14 and 136@28 gain up to a third, within this machine's noise).  At stride 2 the block's padded row is one column short
    of the buffer's, an odd vector that ran 0.07 -> 0.13 ms: those keep the separate pass."""
    found = match(info)
    if found is None or const_extent(info.loops[4]) != 1:
        return False
    _, o, _, x = info.store.indices  # type: ignore[union-attr]  # match checked the store
    lin = linear(found[0].indices[-1])
    return _uses(found[0].indices[1:2], o) and lin is not None and lin[0].get(x) == 1


def _outer_extents(info: BlockInfo, to: int) -> list[int | None]:
    n, o, y = (const_extent(lp) for lp in info.loops[:3])
    return [n, None if o is None else o // to, y]
