"""`Analyzer.int_set` / `eval_set`: symbolic ranges of expressions over loop domains."""

from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.tir.arith import Analyzer, IntervalSet, eval_set

R = tir.Range.from_min_extent
i, j, k, n, m = (tir.Var(name) for name in ("i", "j", "k", "n", "m"))


def ends(s: IntervalSet) -> tuple[int | None, int | None]:
    return (
        None if s.min_value is None else s.min_value.value,
        None if s.max_value is None else s.max_value.value,
    )


def test_split_index_covers_the_whole_range():
    doms = {i: R(0, 4), j: R(0, 32)}
    assert ends(Analyzer().int_set(i * 32 + j, doms)) == (0, 127)


def test_linear_terms_cancel_before_interval_arithmetic():
    doms = {i: R(0, 4), j: R(0, 32)}
    assert ends(Analyzer().int_set(i * 32 + j - i * 32, doms)) == (0, 31)


def test_negative_coefficients_swap_the_ends():
    assert ends(Analyzer().int_set(10 - i * 2, {i: R(0, 4)})) == (4, 10)


def test_division_and_modulo():
    ana = Analyzer()
    assert ends(ana.int_set(i // 8, {i: R(0, 64)})) == (0, 7)
    assert ends(ana.int_set(i % 8, {i: R(0, 64)})) == (0, 7)
    assert ends(ana.int_set(i % 8, {i: R(8, 4)})) == (0, 3)  # one period: a shift
    assert ends(ana.int_set(tir.min(i, 5) + tir.max(j, 2), {i: R(0, 8), j: R(0, 4)})) == (2, 8)
    assert ends(ana.int_set(tir.select(k < 2, i, j), {i: R(0, 8), j: R(-3, 4), k: R(0, 4)})) == (
        -3,
        7,
    )


def test_symbolic_extents_give_symbolic_ends():
    ana = Analyzer()
    s = ana.int_set(i * 4 + j, {i: R(0, n), j: R(0, 4)})
    assert s.min_value.value == 0
    assert_structural_equal(s.max_value, n * 4 - 1, map_free_vars=False)
    r = s.to_range(ana)
    assert_structural_equal(r.extent, n * 4, map_free_vars=False)


def test_region_of_a_tile():
    # rows touched by a tile loop: [io*16, io*16 + 15] for a fixed io
    io, ii = tir.Var("io"), tir.Var("ii")
    s = Analyzer().int_set(io * 16 + ii, {ii: R(0, 16)})
    assert_structural_equal(s.min_value, io * 16, map_free_vars=False)
    assert_structural_equal(s.max_value, io * 16 + 15, map_free_vars=False)


def test_free_variables_are_points():
    s = Analyzer().int_set(m + 1, {i: R(0, 4)})
    assert s.is_single_point()


def test_uses_bound_ranges_without_a_dom_map():
    ana = Analyzer()
    ana.bind(i, R(0, 16))
    assert ends(ana.int_set(i * 2)) == (0, 30)


def test_unknown_atoms_fall_back_to_constant_bounds():
    s = eval_set(Analyzer(), i * j, {i: R(0, 4), j: R(0, 3)})
    assert ends(s) == (0, 6)
    s = eval_set(Analyzer(), i * m, {i: R(0, 4)})
    assert ends(s) == (None, None)


def test_union_and_intersect():
    ana = Analyzer()
    a, b = IntervalSet(tir.const(0), tir.const(7)), IntervalSet(tir.const(4), tir.const(12))
    assert ends(a.union(b, ana)) == (0, 12)
    assert ends(a.intersect(b, ana)) == (4, 7)
    assert ends(a.union(IntervalSet.everything(), ana)) == (None, None)
