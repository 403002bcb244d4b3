"""Default rule for conv2d on channel-blocked activations ("NCHW16c", `topi.nn.conv2d_blocked`).

Claims a reduction block ``Y[n, oc, y, x, ob] += X[n, cb, y*sh + ry*dh, x*sw + rx*dw, l] *
K[oc*b + ob, i, ry, rx]`` (optional casts) whose output lanes `ob` are `X`'s lanes `l`
(depthwise) or absent from `X` (the input lane `l` is then a reduction, `rc1`), or whose
`X` is NCHW (``X[n, rc, y*sh + ry*dh, x*sw + rx*dw]``: an image read as it is, written
blocked):

- **dense and block-aligned grouped**: `K` is packed into ``[O/to, I/b, KH, KW, b, to]``
  (``[O/to, C, KH, KW, to]`` for NCHW data; a constant kernel at compile time); per
  reduction step one input value per pixel is broadcast against `to/b` contiguous
  vectors of packed weights; the tile is `to` output channels x `tx` pixels, of one row
  or, where a row is not a multiple of `tx` (and for pointwise convs, also over a
  symbolic height or width), of the flattened pixels ``y * W + x`` (`flatten_rows`: the
  tile crosses rows, only the last tile of the image is guarded; a symbolic `W` leaves
  ``p // W, p % W`` in the indices, which flattening the buffers merges back into `p`
  where it can, as for a pointwise conv); a conv with a window over a symbolic image
  tiles its rows, each row's last tile moved back; it is written back as whole vectors,
  with the elementwise epilogue;
- **depthwise**: the lanes are channels, so each tap is `tx` contiguous vector loads of
  `X` times one vector of packed weights ``[O/b, KH, KW, b]``; over a large image the
  taps read through the zero padding (`padded_window`: few border tiles, whose taps are
  checked; `HoistPadChecks` gives the interior tiles a version without checks), else the
  padding is computed per channel block inside the parallel loop (one launch, the padded
  block stays in cache); reading through the padding, channel blocks that would leave a
  core idle (1 or 3 on 2 cores) give way to the rows in parallel.

Loops ``(n, oc0, y) parallel / x0 / reduction / x1, oc1 (unrolled) / ob (vector)`` (with
flattened pixels ``(n, oc0, p0)``); the kernel-column loop of a row tile is unrolled
when the input has few channel blocks (`_unroll_window`); a tile whose weights reach
`_PREFETCH_WEIGHT_BYTES` (16 KiB) prefetches them 16 input lanes ahead (`InjectPrefetch`).  Where
a tile's weights would not stay in L2's share of a core (`reduction_block`), row tiles
split the input channel blocks: ``(n, oc0, y) parallel / rc0o / x0 / rc0i, ry, rx, rc1
/ ...``, the row's accumulators kept in a local row buffer between chunks (its tiles
stay in registers within one), so the chunk's weights and input rows stay in L1 for the
whole row.  Tiles
of the flattened pixels take chunks only by the ``conv.rc_block`` knob (the tuner's):
``(n, oc0) parallel / rc0o / p0 / ...``, the whole image's accumulators in the buffer
(3x3 512->512 at 14x14 on Zen 3 ran 10-25% faster in chunks of 4 blocks, but 512->512
at 7x7 2.5x slower).

Before::

    for n, oc, y, x, ob, rc0, ry, rx, rc1 in T.grid(1, 16, 56, 56, 16, 4, 3, 3, 16):
        with T.block("conv"): ...

After ``schedule_conv2d_blocked`` (dense, abridged)::

    for oc0 in T.parallel(8):
        for y, x0 in T.grid(56, 7):
            ... init ...
            for rc0, ry, rx, rc1 in T.grid(4, 3, 3, 16):
                for x1, oc1 in T.grid(8, 2):            # unrolled
                    for ob in T.vectorized(16):
                        conv_local[...] += X[..., rc1] * K_packed[oc0, rc0, ry, rx, rc1, oc1 * 16 + ob]
            ... write-back (+ epilogue), whole vectors ...
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir import dtype as dt
from unity.schedule.analysis import linear, used_vars
from unity.schedule.default.analysis import (
    BlockInfo,
    RuleContext,
    const_extent,
    multiply_accumulate,
)
from unity.schedule.default.conv2d import (
    LONG_ROW,
    padding_block,
    raise_unsupported,
    symbolic_width,
    typical_extent,
)
from unity.schedule.default.conv2d_tiles import flatten_rows, parallel_tile_loops, pointwise_pixels
from unity.schedule.default.epilogue import inline_epilogue
from unity.schedule.default.prepack import PREPACK
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule
from unity.schedule.state import BlockRV, LoopRV
from unity.tir.expr import BufferLoad, FloorDiv, IntImm, IterType, PrimExpr, Var
from unity.tir.functor import post_order_visit
from unity.tir.stmt import Block
from unity.tir.transform.inject_prefetch import PREFETCH

__all__ = [
    "BlockedConv", "BlockedTiling", "PaddedWindow", "applies", "blocked_tiling", "match",
    "padded_window", "schedule_conv2d_blocked", "tile_vectors",
]  # fmt: skip


@dataclass(frozen=True)
class BlockedConv:
    """What `match` found in a blocked conv2d block.

    Attributes:
        x_load: The load of the (padded) data.
        k_load: The load of the OIHW kernel.
        depthwise: Whether the output lanes are the data's lanes.
        out_blocks_per_group: Output channel blocks sharing one input group (all of them
            when the conv is not grouped).

    Example:
        >>> match(info).depthwise  # doctest: +SKIP
        False
    """

    x_load: BufferLoad
    k_load: BufferLoad
    depthwise: bool
    out_blocks_per_group: int


def match(info: BlockInfo) -> BlockedConv | None:
    """The data and kernel loads of a blocked conv2d block, else None.

    Example:
        >>> match(info) is None  # doctest: +SKIP
        False
    """
    found = _product(info)
    if found is None:
        return None
    n, oc, y, x, ob = info.store.indices  # type: ignore[union-attr]  # _product checked it
    lhs, rhs = found
    x_load, k_load = (lhs, rhs) if _reads(lhs, x) else (rhs, lhs)
    if len(x_load.indices) not in (4, 5) or len(k_load.indices) != 4:
        return None
    lane = x_load.indices[-1] if len(x_load.indices) == 5 else None
    depthwise = lane is ob and x_load.indices[1] is oc
    if not depthwise and _reads(x_load, ob):
        return None
    lin = linear(x_load.indices[3])
    if lin is None or lin[0].get(x, 0) < 1 or any(x in used_vars(i) for i in x_load.indices[:3]):
        return None  # `x` must reach the data's width only, linearly
    if any(_reads(k_load, v) for v in (n, y, x)):
        return None
    blocks = const_extent(info.loops[1])
    per_group = blocks if depthwise else _out_blocks_per_group(x_load.indices[1], oc, blocks)
    if per_group is None:
        return None
    return BlockedConv(x_load, k_load, depthwise, per_group)


def applies(info: BlockInfo) -> bool:
    """True when `match` recognizes the block.

    Example:
        >>> applies(info)  # doctest: +SKIP
        True
    """
    return match(info) is not None


@dataclass(frozen=True)
class BlockedTiling:
    """What the rule chooses for a blocked conv block, and what a tuner may vary
    (``conv.tile`` = `(to, tx)`, ``conv.flatten``, ``conv.unroll_window``, ``conv.parallel``).

    Attributes:
        block: Lanes of a channel block.
        out_blocks: Output channel blocks.
        per_group: Output channel blocks sharing one input group (a tile's `to / block`
            must divide it, unless the conv is ungrouped: its last tile is then guarded).
        width: Output width (None when symbolic).
        pixels: Output pixels ``H*W`` (None for a symbolic height or width).
        depthwise: Whether the output lanes are the data's lanes.
        flatten: Whether a tile runs over the flattened pixels (crossing rows) rather
            than along one row.
        tile: The default `(to, tx)`: `to` output channels x `tx` pixels.
        window: Whether the kernel has more than one column (`rx` may be unrolled).
        unroll_window: Whether row tiles unroll `rx` by default (`_unroll_window`).
        in_blocks: Input channel blocks of the reduction (None for NCHW data).
        rc_block: Input channel blocks per reduction chunk of a row (None: the whole
            reduction in each tile; see `reduction_block`).
        rows: The output's `(height, width)` where either is symbolic: its tiles cross
            rows too (`flatten`), only the image's last one guarded.

    Example:
        >>> BlockedTiling(8, 32, 32, 14, 196, False, True, (16, 4), True, False).tile
        (16, 4)
    """

    block: int
    out_blocks: int
    per_group: int
    width: int | None
    pixels: int | None
    depthwise: bool
    flatten: bool
    tile: tuple[int, int]
    window: bool = False
    unroll_window: bool = False
    in_blocks: int | None = None
    rc_block: int | None = None
    rows: tuple[PrimExpr, PrimExpr] | None = None


def blocked_tiling(info: BlockInfo, ctx: RuleContext) -> BlockedTiling | None:
    """The rule's choices for a blocked conv block of constant channels, else None.

    A dense conv's tiles cross rows when it is pointwise with stride 1 (1x1 at 14x14 and
    28x28 ~5% faster), when its rows are not a multiple of the row tile (on Zen, 3x3 at
    7x7 and 14x14 3-10% faster: no guarded last tile per row), or when it has a window,
    its weights need no reduction chunks and a tile crossing rows is wider than a row's
    (Zen 3, alone: 3x3 64->64 at 56x56 15-22% faster as 2 x 5 crossing rows than as
    2 x 4 in a row, 128->128 at 28x28 16-20%, at 112x112 28%; inside ResNet-50 10-20%).
    Over a symbolic image a conv with a window tiles its rows, in tiles of the typical
    width's (`typical_extent`): crossing rows cost a division of the pixel index by the
    width per pixel (Sapphire Rapids, kernels of the symbolic / static builds: MobileNet
    v3's 3x3/2 stem 0.119 -> 0.069 ms, static 0.069; DenseNet-121's 3x3 128 -> 32 at
    56x56 0.72 -> 0.63, static 0.66; the models' kernels, old / new / static, ms:
    SqueezeNet 2.49 / 2.41 / 2.36, MobileNet v2 3.03 / 2.95 / 2.84, DenseNet-121 23.7 /
    22.8 / 22.2, GoogLeNet 8.69 / 8.47 / 8.50).

    Example:
        >>> blocked_tiling(info, RuleContext(lanes=8)).tile  # doctest: +SKIP
        (16, 4)
    """
    conv = match(info)
    block, width = const_extent(info.loops[4]), const_extent(info.loops[3])
    out_blocks, height = const_extent(info.loops[1]), const_extent(info.loops[2])
    if conv is None or block is None or out_blocks is None:
        return None
    # a symbolic width (wav2vec's conv1d over the samples): row tiles, the last guarded
    pixels = None if height is None or width is None else height * width
    if conv.depthwise:
        tile = (block, pixel_tile(width or symbolic_width(height), 1, ctx, fill=width is None and height == 1))
        return BlockedTiling(block, out_blocks, 1, width, pixels, True, False, tile)
    vectors = tile_vectors(conv.out_blocks_per_group, guard=conv.out_blocks_per_group == out_blocks)
    row_tile = pixel_tile(width or LONG_ROW, vectors, ctx, fill=width is None)
    pointwise = pointwise_pixels(info, conv.x_load) is not None
    window, unroll = _unroll_window(info)
    in_blocks = const_extent(info.loops[5]) if len(conv.x_load.indices) == 5 else None
    # rows of unknown length keep the whole reduction in each tile: between chunks a row's
    # accumulators sit in a buffer, which for wav2vec2's 1599-sample rows (512 -> 512, k=3,
    # s=2) streamed from L2 (Zen 4: 32.7 -> 12.9 ms whole), and 3x3 convs over a symbolic
    # size ran 2.2x slower in chunks (512 -> 512 at 14x14: 12.2 -> 5.5 ms; 128 at 56x56:
    # 11.6 -> 6.6 ms; onnxruntime 4.5-5.0)
    dtype = conv.k_load.buffer.dtype
    rc_block = reduction_block(info, vectors * block, in_blocks, block, dtype) if width else None
    if pixels is None and height is None and not pointwise and _has_window(info):
        # an image of symbolic size: tiles along a row, of the typical width's size (each
        # row's last tile moved back by `HoistGuards`); the flattened pixels' ``p // W``
        # and ``p % W`` by a symbolic width cost a division per pixel
        tile = (vectors * block, pixel_tile(typical_extent(info.loops[3].extent), vectors, ctx))
        return BlockedTiling(
            block, out_blocks, conv.out_blocks_per_group, None, None, False, False, tile,
            window, unroll, in_blocks, None,
        )  # fmt: skip
    if pixels is None:  # a symbolic size: tiles of the flattened pixels, the widest
        rows = (info.loops[2].extent, info.loops[3].extent)
        tile = (vectors * block, pixel_tile(LONG_ROW, vectors, ctx, fill=True))
        return BlockedTiling(
            block, out_blocks, conv.out_blocks_per_group, width, None, False, True, tile,
            window, False, in_blocks, None, rows,
        )  # fmt: skip
    wide = pixel_tile(pixels, vectors, ctx, fill=True)
    flatten = pixels > 1 and (
        pointwise or width % row_tile != 0 or (window and rc_block is None and row_tile < wide)  # type: ignore[operator]
    )  # one pixel (squeeze-and-excitation): nothing to flatten
    tile = (vectors * block, wide if flatten else row_tile)
    return BlockedTiling(
        block, out_blocks, conv.out_blocks_per_group, width, pixels, False, flatten, tile,
        window, unroll and not flatten, in_blocks, None if flatten else rc_block,
    )  # fmt: skip


def schedule_conv2d_blocked(sch: Schedule, info: BlockInfo, ctx: RuleContext) -> list[str]:
    """Tile the blocked conv2d block and take its epilogue (and, for a depthwise conv, its
    padding); return the names of the blocks taken.

    Example:
        >>> schedule_conv2d_blocked(sch, info, RuleContext())  # doctest: +SKIP
        ['T_add', 'T_relu']
    """
    conv, tiling = match(info), blocked_tiling(info, ctx)
    assert conv is not None, "the caller checked `applies`"
    if tiling is None:
        raise_unsupported("symbolic channel blocks")
    to, tx = ctx.knob("conv.tile") or tiling.tile
    ungrouped = tiling.per_group == tiling.out_blocks  # the last channel tile may be guarded
    if to % tiling.block or (tiling.per_group % (to // tiling.block) and not ungrouped) or tx < 1:
        raise_unsupported(f"the tile {(to, tx)} ({tiling.per_group} channel blocks per group)")
    if conv.depthwise:
        return _depthwise(sch, info, conv, tiling.block, tx, ctx)
    flatten = ctx.knob("conv.flatten", tiling.flatten) and (tiling.pixels is not None or tiling.rows is not None)
    tile = (to // tiling.block, tx)
    if not flatten:
        return _dense(sch, info, conv, tiling, tile, None, ctx)
    if tiling.rows is None:
        return _dense(sch, info, conv, tiling, tile, (tiling.width, tiling.pixels), ctx)  # type: ignore[arg-type]
    height, width = tiling.rows
    trial = sch.copy()
    try:
        taken = _dense(trial, info, conv, tiling, tile, (width, height * width), ctx)
    except ScheduleError:  # extents the analyzer cannot relate (the output's and the write-back's)
        return _dense(sch, info, conv, tiling, tile, None, ctx)
    sch.state, sch.trace = trial.state, trial.trace
    return taken


def _dense(
    sch: Schedule,
    info: BlockInfo,
    conv: BlockedConv,
    tiling: BlockedTiling,
    tile: tuple[int, int],
    flat: tuple[int | PrimExpr, int | PrimExpr] | None,
    ctx: RuleContext,
) -> list[str]:
    vectors, tx = tile
    pixels = flat[1] if flat else None
    c = sch.get_block(info.name)
    n, oc, y, x, ob, *red = sch.get_loops(c)
    guarded = tiling.out_blocks % vectors != 0  # the packed weights: whole tiles or blocks
    to = (1 if guarded else vectors) * tiling.block  # the packed weights' tile
    packed = _pack_kernel(sch, c, info, conv, tiling.block, to)
    acc = sch.cache_write(c, 0, "local")
    taken = inline_epilogue(sch, acc, info)
    n_blocks = [const_extent(info.loops[0]), -(-tiling.out_blocks // vectors)]
    if pixels is not None:  # tiles of the flattened pixels: no guarded last tile per row
        flatten_rows(sch, c, acc, flat[0])  # type: ignore[index]
        n, oc, x, ob, *red = sch.get_loops(c)
    oc0, oc1 = sch.split(oc, [None, vectors])
    x0, x1 = sch.split(x, [None, tx])
    rows = [y] if pixels is None else []
    kc = ctx.knob("conv.rc_block", tiling.rc_block)
    if kc and (tiling.in_blocks is None or tiling.in_blocks % kc):
        raise_unsupported(f"reduction chunks of {kc} of {tiling.in_blocks} channel blocks")
    init, red = _order_loops(sch, (c, acc), [n, oc0, *rows], x0, red, [x1, oc1, ob], kc)
    if pixels is None:
        parallel_tile_loops(sch, [n, oc0, y], [*n_blocks, const_extent(info.loops[2])], ctx)
    elif kc:  # the image's tiles share each chunk of weights: channel tiles in parallel
        parallel_tile_loops(sch, [n, oc0], n_blocks, ctx)
    else:
        tiles = -(-pixels // tx) if isinstance(pixels, int) else None
        parallel_tile_loops(sch, [n, oc0, x0], [*n_blocks, tiles], ctx)
    sch.unroll(x1)
    sch.unroll(oc1)
    if pixels is None and tiling.window and ctx.knob("conv.unroll_window", tiling.unroll_window):
        sch.unroll(red[2])
    sch.vectorize(ob)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.vectorize(sch.get_loops(acc)[-1])
    weights = _tile_weight_bytes(info, vectors * tiling.block, conv.k_load.buffer.dtype)
    if weights >= _PREFETCH_WEIGHT_BYTES:
        sch.annotate(red[-1], PREFETCH, (packed, _PREFETCH_AHEAD))
    return taken


_PREFETCH_WEIGHT_BYTES = 1 << 14
"""Packed weights of one output-channel tile from which its innermost reduction loop
prefetches them `_PREFETCH_AHEAD` steps ahead (`InjectPrefetch`): large weights stream
from L3 into the first pixel tile of each task, past the 4 KiB pages where the hardware
prefetchers stop.  Sapphire Rapids, the models' kernels over a symbolic / static size,
without / with (from 64 KiB): ResNet-50 23.74 / 22.37 and 23.09 / 21.44 ms (3x3 512 ->
512 at 7x7 1.12 -> 0.85), DenseNet-121 19.76 / 18.94 and 19.38 / 18.88, GoogLeNet -2%,
MobileNet v2 level.  From 16 KiB (stop 42; 64 KiB had left the 1x1 convs at 7x7 of the
mobile models, 25-40 KiB a tile, waiting on their weights): MnasNet's 320 -> 1280 at 7x7
0.144 -> 0.129 ms, 192 -> 1152 0.084 -> 0.074; kernels back to back MnasNet 3.01 -> 2.94,
MobileNet v2 3.24 -> 3.09, EfficientNet-B0 4.71 -> 4.48, GoogLeNet 8.96 -> 8.42,
SqueezeNet 2.39 -> 2.34, ResNet-50 level; whole runs after a pause MnasNet 3.90 -> 3.77,
MobileNet v2 4.12 -> 4.00, GoogLeNet 9.75 -> 9.65."""

_PREFETCH_AHEAD = 16
"""Steps of the innermost reduction loop (the input lanes of a channel block) ahead."""


def _tile_weight_bytes(info: BlockInfo, to: int, dtype: str) -> int:
    """Bytes of the packed weights one tile of `to` output channels reads (its reduction
    loops' extents times `to`; a symbolic extent counts as 1)."""
    elems = to
    for loop in info.loops[5:]:
        elems *= const_extent(loop) or 1
    return elems * max(1, dt.bits(dtype) // 8)


_TILE_WEIGHT_BYTES = 1 << 17
"""Packed weights of one output-channel tile above which row tiles take reduction chunks:
a quarter of a 512 KiB L2 (Zen's), which streams them once per tile otherwise."""


def reduction_block(
    info: BlockInfo, to: int, in_blocks: int | None, block: int, dtype: str = "float32"
) -> int | None:
    """Input channel blocks per reduction chunk of a row tile: 2 where the `to` output
    channels' weights (of `dtype`) exceed `_TILE_WEIGHT_BYTES`, else None (the whole
    reduction per tile).  Measured on Zen 3 (AVX2, 2 x 8-lane tiles), same-process A/B of
    the kernel alone: 3x3 256->256 at 56x56 8-12% faster, 512->512 at 28x28 18-27%; at 128
    channels and less (weights within 74 KiB) level or up to 5% slower, so those keep one
    chunk.  Inside VGG-19 (weights cold, inputs just written) the gain shrinks to 0-5%.

    Example:
        >>> reduction_block(info, 16, 64, 8)  # doctest: +SKIP
        2
    """
    if in_blocks is None or in_blocks % 2:
        return None
    taps = 1
    for loop in info.loops[6:8]:  # ry, rx
        taps *= const_extent(loop) or 1
    weight_bytes = in_blocks * block * taps * to * max(1, dt.bits(dtype) // 8)
    return 2 if weight_bytes > _TILE_WEIGHT_BYTES else None


def _order_loops(
    sch: Schedule,
    blocks: tuple[BlockRV, BlockRV],
    outer: list[LoopRV],
    x0: LoopRV,
    red: list[LoopRV],
    inner: list[LoopRV],
    kc: int | None,
) -> tuple[BlockRV, list[LoopRV]]:
    """Order the tile loops ``outer / x0 / red / inner``, the tile's write-back after its
    reduction, and return the init block and the reduction loops inside the tile.  With
    `kc`, the first reduction loop splits into chunks of `kc` outside `x0`: the tiles of
    the row accumulate in the write-back's buffer, which takes the whole row."""
    c, acc = blocks
    if not kc:
        sch.reorder(*outer, x0, *red, *inner)
        sch.reverse_compute_at(acc, x0)
        return sch.decompose_reduction(c, red[0]), red
    chunks, within = sch.split(red[0], [None, kc])
    sch.reorder(*outer, chunks, x0, within, *red[1:], *inner)
    sch.reverse_compute_at(acc, outer[-1])
    return sch.decompose_reduction(c, chunks), [within, *red[1:]]


def _unroll_window(info: BlockInfo) -> tuple[bool, bool]:
    """`(window, unroll)`: whether a blocked conv's kernel has more than one column `rx`,
    and whether row tiles unroll it by default: where the input has at most 8 channel
    blocks or the rows are long (measured on Zen's AVX2: 3x3 convs over 32-64 channels
    16-17% faster unrolled, over 128-256 channels at width 112 10-18% faster; over
    128-512 channels at widths 7-56 3-7% slower; tiles that cross rows, one address per
    pixel, spilled unrolled and ran 37% slower, so they never unroll by default)."""
    loops = info.loops[5:]  # rc0, ry, rx, rc1 for blocked data
    window = len(loops) == 4 and (const_extent(loops[2]) or 1) > 1
    few_blocks = (const_extent(loops[0]) or 0) <= 8
    return window, window and (few_blocks or (const_extent(info.loops[3]) or 0) >= 112)


def _has_window(info: BlockInfo) -> bool:
    """Whether the conv's kernel has more than one row or column (its last two reduction
    loops, on NCHW and on blocked data alike)."""
    ry, rx = info.loops[-2:] if len(info.loops) == 8 else info.loops[-3:-1]
    return any((const_extent(loop) or 2) > 1 for loop in (ry, rx))


def _pack_kernel(
    sch: Schedule, c: BlockRV, info: BlockInfo, conv: BlockedConv, block: int, to: int
) -> str:
    """Pack the OIHW kernel for `to`-channel tiles (at compile time when it is constant);
    return the packed buffer's name."""
    index = [r.buffer for r in info.block.reads].index(conv.k_load.buffer)
    packed = sch.cache_read(c, index, "global")
    if len(conv.x_load.indices) == 5:  # blocked data: the kernel's input channels by block
        sch.transform_layout(
            packed, ("write", 0), lambda o, i, r, s: (o // to, i // block, r, s, i % block, o % to)
        )
        sch.annotate(packed, PREPACK, f"oihw_blocked:{block}:{to}")
    else:  # NCHW data (an image's few channels): each input channel is one broadcast
        sch.transform_layout(packed, ("write", 0), lambda o, i, r, s: (o // to, i, r, s, o % to))
        sch.annotate(packed, PREPACK, f"oihw:{to}")
    po, *prest = sch.get_loops(packed)
    po0, po1 = sch.split(po, [None, to])
    sch.reorder(po0, *prest, po1)
    sch.parallel(po0)
    sch.vectorize(po1)
    return sch.get(packed).writes[0].buffer.name


def _depthwise(
    sch: Schedule, info: BlockInfo, conv: BlockedConv, block: int, tx: int, ctx: RuleContext
) -> list[str]:
    c = sch.get_block(info.name)
    n, oc, y, x, ob, *red = sch.get_loops(c)
    index = [r.buffer for r in info.block.reads].index(conv.k_load.buffer)
    packed = sch.cache_read(c, index, "global")
    sch.transform_layout(
        packed, ("write", 0), lambda o, i, r, s: (o // block, i, r, s, o % block)
    )
    sch.annotate(packed, PREPACK, f"oihw:{block}")
    acc = sch.cache_write(c, 0, "local")
    taken = inline_epilogue(sch, acc, info)
    x0, x1 = sch.split(x, [None, tx])
    sch.reorder(n, oc, y, x0, *red, x1, ob)
    sch.reverse_compute_at(acc, x0)
    init = sch.decompose_reduction(c, red[0])
    pad = padding_block(sch, c, conv.x_load.buffer)
    copied = pad is not None and not _reads_through_padding(padded_window(info, sch.get(pad), tx))
    if pad is not None and not copied:
        sch.compute_inline(pad)  # each tap checked; interior tiles unchecked (`HoistPadChecks`)
    extents = [const_extent(info.loops[k]) for k in range(3)]
    tasks = (extents[0] or 1) * (extents[1] or 1)  # a symbolic batch taken as 1
    if copied or tasks % ctx.num_cores == 0 or tasks >= 4 * ctx.num_cores:
        outer = sch.fuse(n, oc) if extents[0] == 1 else oc  # a channel block's own padding
        sch.parallel(outer)
    else:  # channel blocks that leave a core idle (3 on 2 cores): the rows when many
        outer = parallel_tile_loops(sch, [n, oc, y], extents, ctx)
    if copied:
        sch.compute_at(pad, outer)
        sch.vectorize(sch.get_loops(pad)[-1])
        taken.append(sch.get(pad).name_hint)
    sch.unroll(x1)
    sch.vectorize(ob)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.vectorize(sch.get_loops(acc)[-1])
    ploops = sch.get_loops(packed)
    sch.vectorize(ploops[-1])
    return taken


_CHECKED_TAPS_PER_COPIED_PIXEL = 5.0
"""A depthwise conv reads its input through the zero padding, each tap of a border tile
checked, rather than from a padded copy, when its checked taps per output pixel are at
most this many times the input pixels it copies per output pixel (its strides'
product).  Sapphire Rapids, MnasNet's kernels over a symbolic / a static image, copy ->
read through (checked taps per output pixel): 3x3 at 112x112 0.108 -> 0.067 ms / 0.110
-> 0.062 (1.3 / 1.2); 3x3/2 112 -> 56 0.108 -> 0.060 / 0.105 -> 0.050 (1.3 / 1.2, four
pixels copied per output); 3x3 at 56x56 0.067 -> 0.050 (2.5, tiles of 7) / 0.059 -> 0.041
(4.7, tiles of 14); 5x5/2 56 -> 28 0.043 -> 0.045 (13.5); 5x5 at 28x28 0.030 -> 0.042
(14.3), at 14x14 0.026 -> 0.056 (25), 3x3 at 14x14 0.018 -> 0.020 (9): a border tile
checks every tap, and the copy of a small image stays in cache."""


@dataclass(frozen=True)
class PaddedWindow:
    """How a conv's window meets its input's padding, at the typical image size.

    Attributes:
        share: The share of output tiles (a row by the tile's pixels, the last moved back)
            whose taps all read inside the input.
        taps: Taps per output pixel (3x3: 9).
        copied: Padded input pixels per output pixel (the strides' product).

    Example:
        >>> PaddedWindow(0.5, 9, 1).checked_taps
        4.5
    """

    share: float
    taps: int
    copied: int

    @property
    def checked_taps(self) -> float:
        """Taps per output pixel that a border tile checks, on average."""
        return self.taps * (1 - self.share)


def padded_window(info: BlockInfo, pad: Block, tx: int) -> PaddedWindow | None:
    """How the conv block's window meets the padding `pad` writes around its input, in
    output tiles of one row by `tx` pixels (typical sizes for symbolic ones), or None
    where the reads are not ``y * s + ry * d`` per axis.

    Example:
        >>> padded_window(info, sch.get(pad), 7).share  # 3x3 at 56x56  # doctest: +SKIP
        0.7232142857142857
    """
    conv = match(info)
    source = next((r.buffer for r in pad.reads), None)
    padded = pad.writes[0].buffer
    if conv is None or source is None or len(source.shape) != len(padded.shape):
        return None
    domains = {iv.var: iv for iv in info.block.iter_vars}
    share, taps, copied = 1.0, 1, 1
    for axis, tile in ((2, 1), (3, tx)):
        lin = linear(conv.x_load.indices[axis])
        if lin is None or not all(v in domains for v in lin[0]):
            return None
        spatial = [v for v in lin[0] if domains[v].iter_type is IterType.SPATIAL]
        window = [v for v in lin[0] if domains[v].iter_type is not IterType.SPATIAL]
        if len(spatial) != 1 or len(window) > 1:
            return None
        out, stride = typical_extent(domains[spatial[0]].dom.extent), lin[0][spatial[0]]
        extent = typical_extent(domains[window[0]].dom.extent) if window else 1
        span = lin[0][window[0]] * (extent - 1) if window else 0
        size = typical_extent(source.shape[axis])
        before = (typical_extent(padded.shape[axis]) - size) // 2 - lin[1]
        starts = sorted({max(0, min(t * tile, out - tile)) for t in range(-(-out // tile))})
        inside = [
            t for t in starts
            if t * stride >= before and (t + tile - 1) * stride + span - before < size
        ]  # fmt: skip
        share *= len(inside) / len(starts) if starts else 0.0
        taps, copied = taps * extent, copied * stride
    return PaddedWindow(share, taps, copied)


def _reads_through_padding(window: PaddedWindow | None) -> bool:
    if window is None:
        return False
    return window.checked_taps <= _CHECKED_TAPS_PER_COPIED_PIXEL * window.copied


def tile_vectors(blocks: int, guard: bool = False) -> int:
    """Output channel blocks (vectors) in a register tile, a divisor of the `blocks` per
    group: 2, else 3 or 5 (their tiles of 3 x 3 or 5 x 2 pixels fill the registers as
    2 x 5 does), else 1.  On Zen 3, alone: 1x1 512->1000 at 13x13 (125 blocks) 82% of
    peak as 5 x 2 against 69% as 1 x 10; 512->984 (123 blocks) 80% as 3 x 3 against
    56%; 3x3 240->120 at 28x28 (15 blocks) 79% as 3 x 3, 63% as 5 x 2, 51% as 1 x 10.

    With `guard` (an ungrouped conv, whose last channel tile may be partial), 7 blocks
    or more that none of these divide (a prime count) take 2, the last tile guarded.
    On Zen 3, in a model of one conv (weights prepacked): 1x1 48->104 at 56x56 (13
    blocks) 83 -> 170 GFLOP/s, 104->104 at 28x28 139 -> 172, 64->56 at 28x28 (7 blocks)
    135 -> 159, 176->88 at 14x14 (11 blocks) 122 -> 167.

    Example:
        >>> [tile_vectors(b) for b in (64, 125, 123, 15, 7)]
        [2, 5, 3, 3, 1]
        >>> tile_vectors(13, guard=True), tile_vectors(1, guard=True)
        (2, 1)
    """
    vectors = next(v for v in (2, 3, 5, 1) if blocks % v == 0)
    return 2 if vectors == 1 and guard and blocks >= 7 else vectors


def pixel_tile(width: int, vectors: int, ctx: RuleContext, fill: bool = False) -> int:
    """Pixels of one row (or of the flattened pixels) in a register tile of `vectors`
    accumulators each.

    The accumulators fit the register file (all but 6 registers, which hold the operands:
    on Zen's AVX2, 2 vectors x 5 pixels beat 2 x 4 by 4-10% on 7x7 outputs; a whole row
    may take all but 4: 1x1 and 3x3 convs at width 14 ran as fast with 28 accumulators as
    with 14), and number at least 8 where they can (the FMA latency); among those sizes
    the one wasting the fewest computed pixels (the last tile is guarded), then the
    largest.  With `fill` (the flattened pixels), the largest: one guarded tile per image
    costs less than the smaller tile (Zen 3, 3x3 convs alone: 2 x 5 against 2 x 4 over
    14x14 5-8% faster, over 28x28 and 56x56 5-15%; ResNet-50's 1x1 convs inside the
    model at 56x56 and 28x28 3-9% faster, at 14x14 level).

    Example:
        >>> [pixel_tile(w, 2, RuleContext(lanes=16)) for w in (56, 28, 14, 7, 55, 13, 27)]
        [8, 7, 14, 7, 11, 13, 9]
        >>> avx2 = RuleContext(lanes=8)
        >>> pixel_tile(196, 2, avx2), pixel_tile(196, 2, avx2, fill=True)
        (4, 5)
    """
    registers = ctx.vector_registers
    if width * vectors <= registers - 4:
        return width
    limit = max(1, (registers - 6) // vectors)
    if fill:
        return limit
    least = min(limit, -(-8 // vectors))

    def waste(t: int) -> float:
        return -(-width // t) * t / width

    return min(range(least, limit + 1), key=lambda t: (waste(t), -t))


def _product(info: BlockInfo) -> tuple[BufferLoad, BufferLoad] | None:
    """The two loads multiplied in ``Y[...] = Y[...] + A[...] * B[...]``, else None."""
    factors = multiply_accumulate(info)
    if factors is None:
        return None
    if len(info.loops) < 7 or info.loop_kinds[:5] != ["S"] * 5:
        return None
    if any(kind != "R" for kind in info.loop_kinds[5:]):
        return None
    out = info.store.indices  # type: ignore[union-attr]  # a store: factors found
    if len(set(out)) != 5 or not all(isinstance(v, Var) for v in out):
        return None
    if [info.iter_var(lp) for lp in info.loops[:5]] != list(out):
        return None
    lhs, rhs = factors
    if not (isinstance(lhs, BufferLoad) and isinstance(rhs, BufferLoad)):
        return None
    return lhs, rhs


def _reads(load: BufferLoad, var: Var) -> bool:
    return any(var in used_vars(i) for i in load.indices)


def _out_blocks_per_group(channel: PrimExpr, oc: Var, blocks: int | None) -> int | None:
    """How many output channel blocks share an input group: all of them when `X`'s
    channel block does not depend on `oc`, `c` when it reads `oc` only as ``oc // c``."""
    if blocks is None:
        return None
    uses, divisors = [0], set()

    def visit(node: object) -> None:
        if node is oc:
            uses[0] += 1
        elif isinstance(node, FloorDiv) and node.a is oc and isinstance(node.b, IntImm):
            divisors.add(int(node.b.value))

    post_order_visit(channel, visit)
    if uses[0] == 0:
        return blocks
    if uses[0] == 1 and len(divisors) == 1:
        return next(iter(divisors))
    return None
