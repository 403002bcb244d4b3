"""`prove_in_bounds`: flattened indices over symbolic sizes, each size at least 1."""

from __future__ import annotations

from unity import tir
from unity.tir.arith import Analyzer
from unity.tir.arith.poly_bound import prove_in_bounds
from unity.tir.expr import Range


def _i(v: int) -> tir.IntImm:
    return tir.const(v, "int64")


def _padded_read():
    """The index a padded copy of an (18 * 8, H, W) tensor reads, and its analyzer."""
    H, W = tir.SizeVar("H", "int64"), tir.SizeVar("W", "int64")
    c, j, y, x = (tir.Var(n, "int64") for n in ("c", "j", "y", "x"))
    ana = Analyzer()
    for var, rng in ((c, Range(_i(0), _i(18))), (j, Range(_i(0), _i(8))),
                     (y, Range(_i(0), H + 2)), (x, Range(_i(0), W + 2))):  # fmt: skip
        ana.bind(var, rng)
    row = tir.max(tir.min(y - 1, H - 1), _i(0))
    col = tir.max(tir.min(x - 1, W - 1), _i(0))
    return ana, (H, W), (c * 8 + j) * (W * H), row, col


def test_a_clamped_flattened_read_is_inside_for_sizes_of_at_least_one():
    ana, (H, W), plane, row, col = _padded_read()
    assert not ana.can_prove(plane + row * W + col < 144 * H * W)  # beyond the linear analyzer
    assert prove_in_bounds(ana, plane + row * W + col, 144 * H * W, {H, W}) == {H, W}


def test_reads_that_may_leave_the_buffer_are_not_proved():
    ana, (H, W), plane, row, col = _padded_read()
    y = next(v for v in ana._ranges if v.name == "y")
    short = prove_in_bounds(ana, plane + row * W + col, 143 * H * W, {H, W})  # a plane short
    unclamped = prove_in_bounds(ana, plane + y * W + col, 144 * H * W, {H, W})  # the row
    assert short is None and unclamped is None
    assert prove_in_bounds(ana, plane + row * W + col, 144 * H * W, {H}) is None  # W may be 0


def test_constant_and_divided_indices():
    ana = Analyzer()
    n = tir.SizeVar("n", "int64")
    i = tir.Var("i", "int64")
    ana.bind(i, Range(_i(0), (n + 7) // 8))
    assert prove_in_bounds(ana, i * 8 + 7 - 7, (n + 7) // 8 * 8, {n}) == {n}
    assert prove_in_bounds(ana, tir.floormod(i, _i(4)), _i(4), set()) == frozenset()
