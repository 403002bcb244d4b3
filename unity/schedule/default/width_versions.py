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
    widths = [info.loops[3].extent for info in block_infos(func) or [] if _versioned(info, ctx)]
    if len(widths) != 1:
        return None
    arms: list[tuple[PrimExpr | None, RuleContext]] = []
    for k, tile in enumerate(WIDTH_TILES):
        cond = None if k == len(WIDTH_TILES) - 1 else widths[0] >= tile
        arms.append((cond, replace(ctx, knobs=(*ctx.knobs, ("conv.width", tile)))))
    return arms


def _versioned(info: BlockInfo, ctx: RuleContext) -> bool:
    """A conv block of symbolic width (over an image: not one row) in the columns variant."""
    if not conv2d.applies(info) or const_extent(info.loops[2]) == 1:
        return False
    rules = [conv2d.conv_tiling(info, ctx.lanes, w) for w in WIDTH_TILES]
    # every version in the columns variant: none packs the weights (one packed layout
    # per kernel is what `split_prepacked` takes out)
    return all(r is not None and r.width is None and r.variant == "columns" for r in rules)


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
