"""Default rule for the Winograd transforms (`topi.nn.winograd`): a tile's two passes in
registers, the constant coefficients folded.

Claims the blocks annotated ``unity.winograd``.  Each transform is a row pass (a block
`rows`, annotated ``"data_rows"`` / ``"output_rows"``) feeding a column pass (``"data"`` /
``"output"``) whose value picks the coefficients of its point with a chain of selects on
an iteration variable.  The rule computes the row pass per tile in a `local` buffer, and
unrolls the points, so that every select folds to one sum of loads with constant
coefficients; the channels' lanes are the vector:

- data: ``p parallel / g / cb / (rows: e, j unrolled / lane vector) / k unrolled / lane
  vector``, writing ``V[k, g, p, cb * b + lane]`` (group `g`);
- output: the elementwise epilogue (bias, residual, activation) inlined into the column
  pass, then ``(n, ob, ty) one parallel / tx / (rows: a, xi unrolled / lane vector) / yi,
  xi unrolled / lane vector``.

Before (the data transform, abridged)::

    for p, c, e, j, l in T.grid(52, 2, 4, 4, 8):
        with T.block("T_winograd_rows"): ...   # rows[p, c, e, j, l] = select(e == 0, ...)
    for k, g, p, c in T.grid(16, 1, 52, 16):
        with T.block("T_winograd_data"): ...   # V[k, g, p, c] = select(k % 4 == 0, ...)

After ``schedule_winograd``::

    for p in T.parallel(52):
        for g, cb in T.grid(1, 2):
            for e, j in T.grid(4, 4):            # unrolled
                for l in T.vectorized(8): rows_local[e, j, l] = ...
            for k in T.unroll(16):
                for l in T.vectorized(8): V[k, g, p, cb * 8 + l] = ...
"""

from __future__ import annotations

from unity.schedule.default.analysis import BlockInfo, RuleContext, const_extent
from unity.schedule.default.epilogue import inline_epilogue
from unity.schedule.default.injective import parallel_one
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule
from unity.schedule.state import BlockRV
from unity.topi.nn.winograd import WINOGRAD

__all__ = ["applies", "schedule_winograd"]

_ROWS = {"data_rows": "data", "output_rows": "output"}


def applies(info: BlockInfo) -> bool:
    """True for a block annotated as a Winograd transform's row pass or column pass.

    Example:
        >>> applies(info)  # doctest: +SKIP
        True
    """
    return info.block.annotations.get(WINOGRAD) in (*_ROWS, *_ROWS.values())


def schedule_winograd(sch: Schedule, info: BlockInfo, ctx: RuleContext) -> list[str]:
    """Schedule the transform that `info` (either of its passes) belongs to; return the
    names of the other blocks taken (the other pass, an inlined epilogue).

    Example:
        >>> schedule_winograd(sch, info, RuleContext())  # doctest: +SKIP
        ['T_winograd_output', 'T_relu']
    """
    rows, final = _passes(sch, sch.get_block(info.name))
    kind = sch.get(final).annotations[WINOGRAD]
    names = [sch.get(b).name_hint for b in (rows, final)]
    lanes = const_extent(sch.get(sch.get_loops(rows)[-1]))
    if lanes is None:
        raise ScheduleError("default winograd", "the lanes' extent is not a constant")
    if kind == "data":
        _schedule_data(sch, rows, final, lanes, ctx)
        return names
    return names + _schedule_output(sch, rows, final, info, ctx)


def _passes(sch: Schedule, block: BlockRV) -> tuple[BlockRV, BlockRV]:
    """`(rows, final)`: the row pass and the column pass of `block`'s transform."""
    kind = sch.get(block).annotations[WINOGRAD]
    if kind in _ROWS:
        found = [c for c in sch.get_consumers(block) if _kind(sch, c) == _ROWS[kind]]
        pair = (block, found[0] if len(found) == 1 else None)
    else:
        found = [p for p in sch.get_producers(block) if _kind(sch, p) in _ROWS]
        pair = (found[0] if len(found) == 1 else None, block)
    if pair[0] is None or pair[1] is None:
        raise ScheduleError("default winograd", f"no {kind!r} pass pairs with this block")
    return pair  # type: ignore[return-value]


def _kind(sch: Schedule, block: BlockRV) -> str | None:
    return sch.get(block).annotations.get(WINOGRAD)


def _schedule_data(
    sch: Schedule, rows: BlockRV, final: BlockRV, lanes: int, ctx: RuleContext
) -> None:
    k, g, p, c = sch.get_loops(final)
    cb, lane = sch.split(c, [None, lanes])
    sch.reorder(p, g, cb, k, lane)
    _rows_at(sch, rows, cb)
    sch.unroll(k)
    sch.vectorize(lane)
    parallel_one(sch, [p], [const_extent(sch.get(p))], ctx)


def _schedule_output(
    sch: Schedule, rows: BlockRV, final: BlockRV, info: BlockInfo, ctx: RuleContext
) -> list[str]:
    m = const_extent(sch.get(sch.get_loops(rows)[-2]))  # the row pass's columns of a tile
    if m is None:
        raise ScheduleError("default winograd", "the output tile's extent is not a constant")
    taken = inline_epilogue(sch, final, info)
    n, ob, y, x, lane = sch.get_loops(final)
    ty, yi = sch.split(y, [None, m])
    tx, xi = sch.split(x, [None, m])
    sch.reorder(n, ob, ty, tx, yi, xi, lane)
    _rows_at(sch, rows, tx)
    sch.unroll(yi)
    sch.unroll(xi)
    sch.vectorize(lane)
    outer = [n, ob, ty]
    parallel_one(sch, outer, [const_extent(sch.get(lp)) for lp in outer], ctx, hoist=True)
    return taken


def _rows_at(sch: Schedule, rows: BlockRV, loop) -> None:
    """Compute the row pass under `loop` in a `local` buffer: its two point loops unrolled,
    its lanes vectorized."""
    sch.compute_at(rows, loop)
    sch.set_scope(rows, 0, "local")
    *points, lane = sch.get_loops(rows)[-3:]
    for point in points:
        sch.unroll(point)
    sch.vectorize(lane)
