"""A conv over a symbolic image width, scheduled once per range of widths and chosen at
run time.

The columns-in-vector conv (depthwise convs, above all) puts a tile of an output row's
columns in the vector.  A static width picks the tile that fits it (28 columns at 28 or
56, 14 at 14); a symbolic one had one tile for every width: 7 columns, which divides the
rows of a 224 x 224 image's stages but fills half of an AVX-512 vector in three pieces
(4 + 2 + 1).  Here the function is scheduled once per tile of `WIDTH_TILES`, and the
versions run behind tests of the output width, widest first: each tile at most the
width, so that `HoistGuards` moves every row's last tile back (no guarded or clamped
tile)::

    if W >= 16:          # before: one version, tiles of 7 columns
        <the conv in tiles of 8 channels x 16 columns>
    elif W >= 8:
        <the conv in tiles of 4 x 8>
    else:
        <the conv in tiles of 4 x 4>

A grouped conv with a window in the channels-in-vector variant (a vector of output
channels per column) is versioned the same way, for tiles of 14 and 7 columns
(`CHANNEL_WIDTH_TILES`).

Each version after the first is a copy with its own loop and iteration variables and
its own intermediate buffers.  Only a function with one such conv is versioned, and not
one whose tile a tuner fixed (``conv.tile`` / ``conv.width`` knobs); `schedule_primfunc`
versions it only when the conv is its one anchor (another would be scheduled, and its
weights packed, once per version).

Example:
    >>> from unity import te, tir, topi
    >>> h, w = tir.SizeVar("h", "int32"), tir.SizeVar("w", "int32")
    >>> x, k = te.placeholder((1, 8, h, w), name="x"), te.placeholder((8, 1, 3, 3), name="k")
    >>> func = te.create_prim_func([x, k, topi.nn.conv2d(x, k, 1, 1, 1, 8)])
    >>> [str(cond) for cond, _ in width_versions(func, RuleContext(lanes=16))]
    ['w >= 16', 'w >= 8', 'None']
"""

from __future__ import annotations

from dataclasses import replace

from unity.schedule.default import conv2d
from unity.schedule.default.analysis import BlockInfo, RuleContext, block_infos, const_extent
from unity.tir.expr import PrimExpr
from unity.tir.function import PrimFunc
from unity.tir.functor import substitute
from unity.tir.stmt import Block, BlockRealize, IfThenElse
from unity.tir.transform.unroll_loop import copy_with_fresh_vars

__all__ = ["WIDTH_TILES", "merge_versions", "width_versions"]

WIDTH_TILES = (16, 8, 4)
"""The output widths the versions are scheduled for (`conv.width`), widest first; the tile
of each is as many columns (`columns_tile`: 8 channels x 16 columns, 4 x 8, 4 x 4).  One
vector of 16 columns beat 28 columns (the static tile at 28 and 56) where the width is no
multiple of 28 and came within 10% of it where it is: a depthwise 3 x 3 conv over 144
channels at widths 30 / 32 / 40 / 128 ran 0.044 / 0.052 / 0.085 / 0.76 ms in tiles of 16
and 0.068 / 0.074 / 0.095 / 0.77 in tiles of 28.  A 5 x 5 over 960 channels (MobileNet
v3's last) at 7 / 14 / 28 columns ran 0.082 / 0.237 / 0.877 ms in the one version of 7
columns, 0.075 / 0.139 / 0.391 in these; its static builds 0.052 / 0.104 / 0.255."""


CHANNEL_WIDTH_TILES = (14, 7)
"""The same for a grouped conv with a window in the channels variant (a vector of output
channels per column: RegNet-Y's groups of 8): one version had tiles of 7 columns, 7
accumulators that leave the FMA units waiting; tiles of 14 where the width allows
(an ImageNet image's widths are multiples of 7).  RegNet-Y-400MF's 3x3 convs over a
symbolic size, 7 columns / versions / static build, ms: 48 channels at 112 -> 56 0.362
/ 0.286 / 0.270, 104 at 56 -> 28 0.186 / 0.158 / 0.142, 104 at 28 0.152 / 0.123 /
0.111; at 14 and 7 the tile of 7 either way (tiles of 8 and 4 ran 10-15% slower)."""


def width_versions(
    func: PrimFunc, ctx: RuleContext
) -> list[tuple[PrimExpr | None, RuleContext]] | None:
    """The run-time conditions and rule contexts of `func`'s versions (the last one's
    condition None: the `else`), or None when `func` is scheduled once.

    Example:
        >>> [dict(c.knobs)["conv.width"] for _, c in width_versions(func, ctx)]  # doctest: +SKIP
        [16, 8, 4]
    """
    if ctx.knob("conv.tile") is not None or ctx.knob("conv.width") is not None:
        return None
    versioned = [(info, _tiles(info, ctx)) for info in block_infos(func) or []]
    versioned = [(info.loops[3].extent, tiles) for info, tiles in versioned if tiles is not None]
    if len(versioned) != 1:
        return None
    width, tiles = versioned[0]
    arms: list[tuple[PrimExpr | None, RuleContext]] = []
    for k, tile in enumerate(tiles):
        cond = None if k == len(tiles) - 1 else width >= tile
        arms.append((cond, replace(ctx, knobs=(*ctx.knobs, ("conv.width", tile)))))
    return arms


def _tiles(info: BlockInfo, ctx: RuleContext) -> tuple[int, ...] | None:
    """The widths to version a conv block of symbolic width (over an image: not one row)
    for: `WIDTH_TILES` in the columns variant, `CHANNEL_WIDTH_TILES` for a conv with a
    window in the channels variant; None when it is scheduled once."""
    if not conv2d.applies(info) or const_extent(info.loops[2]) == 1:
        return None
    # every version in one variant, the channels one with one channel tile: none packs
    # the weights otherwise (one packed layout per kernel is what `split_prepacked` takes
    # out)
    rules = [conv2d.conv_tiling(info, ctx.lanes, w) for w in WIDTH_TILES]
    if all(r is not None and r.width is None and r.variant == "columns" for r in rules):
        return WIDTH_TILES
    window = any((const_extent(loop) or 2) > 1 for loop in info.loops[5:7])
    rules = [conv2d.conv_tiling(info, ctx.lanes, w) for w in CHANNEL_WIDTH_TILES]
    channels = all(r is not None and r.width is None and r.variant == "channels" for r in rules)
    if not (window and channels):
        return None
    tiles = {r.channel_tile[0] for r in rules}  # type: ignore[index, union-attr]
    return CHANNEL_WIDTH_TILES if len(tiles) == 1 else None


def merge_versions(versions: list[tuple[PrimExpr | None, PrimFunc]]) -> PrimFunc:
    """One function running the body of each version where its condition holds (the
    first that does; the last version's condition is None).  The versions must come from
    one function: same parameters, each body under a root block.

    Example:
        >>> merged = merge_versions([(n >= 8, wide), (None, narrow)])  # doctest: +SKIP
    """
    base = versions[0][1]
    roots = [_root(base)]
    for _, f in versions[1:]:  # own loop/iteration variables and intermediate buffers
        root = copy_with_fresh_vars(_root(f), {})
        params = dict(zip(f.buffer_params(), base.buffer_params(), strict=True))
        roots.append(substitute(root, {}, params))
    stmt = roots[-1].body
    for (cond, _), root in zip(reversed(versions[:-1]), reversed(roots[:-1]), strict=True):
        if cond is None:
            raise ValueError("merge_versions: only the last version may run unconditionally")
        stmt = IfThenElse(cond, root.body, stmt)
    allocs = tuple(buf for root in roots for buf in root.alloc_buffers)
    merged = roots[0].replace(body=stmt, alloc_buffers=allocs)
    return base.replace(body=base.body.replace(block=merged))


def _root(func: PrimFunc) -> Block:
    if not isinstance(func.body, BlockRealize):
        raise ValueError("merge_versions: a version's body is not a root block")
    return func.body.block
