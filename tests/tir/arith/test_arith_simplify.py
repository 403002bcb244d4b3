"""Rules of `Analyzer.simplify`: each case compares with an expected expression."""

import pytest

from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.tir.arith import Analyzer

R = tir.Range.from_min_extent
i, j, k, x, y, n = (tir.Var(name) for name in ("i", "j", "k", "x", "y", "n"))
i0, i1, f0, f1 = (tir.Var(name) for name in ("i0", "i1", "f0", "f1"))
f = tir.Var("f", "float32")


@pytest.fixture
def ana() -> Analyzer:
    a = Analyzer()
    for var, extent in ((i, 32), (j, 4), (k, 8), (i1, 32), (f0, 64), (f1, 8)):
        a.bind(var, R(0, extent))
    return a


def check(ana: Analyzer, before: tir.PrimExpr, expected: tir.PrimExpr | int | bool) -> None:
    assert_structural_equal(ana.simplify(before), tir.const(expected), map_free_vars=False)


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        (tir.const(7) + 5, 12),
        (tir.const(7) - 9, -2),
        (tir.const(-7) * 3, -21),
        (tir.truncdiv(tir.const(-7), 2), -3),  # Div truncates
        (tir.truncmod(tir.const(-7), 2), -1),  # Mod: sign of the dividend
        (tir.const(-7) // 2, -4),  # FloorDiv floors
        (tir.const(-7) % 2, 1),  # FloorMod: sign of the divisor
        (tir.const(7) % -2, -1),
        (tir.min(tir.const(3), 9), 3),
        (tir.max(tir.const(3), 9), 9),
        (tir.const(3) < 4, True),
        (tir.eq(tir.const(3), 4), False),
        (tir.const(2**31 - 1) + 1, -(2**31)),  # int32 wraps like the hardware
    ],
)
def test_folds_integer_constants_with_c_semantics(ana, before, expected):
    check(ana, before, expected)


def test_folds_float_constants_in_their_dtype(ana):
    check(ana, tir.const(1.5) + tir.const(2.25), 3.75)
    third = ana.simplify(tir.const(1.0) / tir.const(3.0))
    assert (
        third.value == pytest.approx(1 / 3, rel=1e-7) and third.value != 1 / 3
    )  # float32 rounding


def test_does_not_reassociate_floats(ana):
    before = (f + 1.0) + 2.0
    assert ana.simplify(before) is before
    assert ana.simplify(f + 0.0) is not f  # -0.0 + 0.0 is 0.0: not an identity


def test_float_times_one_is_exact(ana):
    assert ana.simplify(f * 1.0) is f


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        (i * 32 + j - i * 32, j),
        ((x + 3) + 5, x + 8),
        (x * 4 * 8, x * 32),
        ((x + 3) * 4 - 12, x * 4),
        (x - x, 0),
        (x + y - x, y),
        (5 - x + x, 5),
        ((x + 2) - (y + 7), x - y - 5),
    ],
)
def test_collects_linear_terms(ana, before, expected):
    check(ana, before, expected)


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        ((i0 * 32 + i1) // 32, i0),
        ((i0 * 32 + i1) % 32, i1),
        ((i * 8 + j) // 4, i * 2),
        ((i * 8 + j) % 4, j),
        ((x * 8 + j) // 4, x * 2),
        (((i * 4 + j) * 8 + k) // 8, i * 4 + j),
        (((i * 4 + j) * 8 + k) % 8, k),
        (((i * 4 + j) * 8 + k) // 32, i),
        (x // 1, x),
        (x % 1, 0),
        ((f0 * 8 + f1) // 16, f0 // 2),  # fuse then split: the low digit stays below 8
        ((f0 * 8 + f1) % 16, f0 % 2 * 8 + f1),
        (x // 8 * 8 + x % 8, x),  # div/mod pair recombines
        ((x * 6) // 4, (x * 3) // 2),
        ((x * 4) % 8, x % 2 * 4),
        (x // 4 // 8, x // 32),
        ((x // 16 + 1) // 2, (x + 16) // 32),  # a stride-2 size of a stride-16 one: ceil(x/32)
        ((x // 4 - 1) // 2, (x + 4) // 8 - 1),
        (x % 16 % 4, x % 4),
        ((i * 32 + i1 + 32) // 32, i + 1),
    ],
)
def test_simplifies_split_and_fuse_indices(ana, before, expected):
    check(ana, before, expected)


def test_keeps_division_it_cannot_prove(ana):
    check(ana, (i * 8 + x) // 4, i * 2 + x // 4)
    check(ana, (i * 3 + k) // 4, (i * 3 + k) // 4)


def test_divides_by_a_symbolic_length_whose_remainder_is_below_it():
    """``(b * seq + s) // seq`` is `b` and ``% seq`` is `s` when ``0 <= s < seq`` (a reshape
    over a symbolic sequence); with `s` possibly reaching `seq` both stay."""
    seq, batch = tir.SizeVar("seq", "int64"), tir.SizeVar("batch", "int64")
    b, s, t = (tir.Var(name, "int64") for name in ("b", "s", "t"))
    ana = Analyzer()
    ana.bind(b, R(tir.const(0, "int64"), batch))
    ana.bind(s, R(tir.const(0, "int64"), seq))
    ana.bind(t, R(tir.const(0, "int64"), seq + 1))
    check(ana, (b * seq + s) // seq, b)
    check(ana, (b * seq + s) % seq, s)
    check(ana, (seq * (b + 2) + s) // seq, b + 2)
    check(ana, (b * seq + t) // seq, (b * seq + t) // seq)
    check(ana, (b * seq + t) % seq, (b * seq + t) % seq)


def test_a_symbolic_split_and_merge_of_one_axis_cancels_whatever_the_divisor_sign():
    """A reshape chain over a symbolic length (GPT-2's heads merged back, ``(b, 6, seq,
    64) -> (b * seq, 384)``) indexes with ``i // seq * seq + i % seq`` (just `i`) and
    ``(h * seq + i % seq) // seq`` (just `h`: a remainder of `seq` is below it in
    magnitude with its sign), with nothing known of `seq`; the results hold for every
    value, negative `seq` included.  A transpose of such heads ran 7x faster."""
    from ._arith_eval import evaluate

    a, seq, h = tir.Var("a", "int64"), tir.Var("seq", "int64"), tir.Var("h", "int64")
    cases = [
        (a // seq * seq + a % seq, a),
        (a % seq + seq * (a // seq) + h, a + h),
        ((h * seq + a % seq) // seq, h),
        ((h * seq + a % seq) % seq, a % seq),
        ((h * seq + a % seq + 1) // seq, (h * seq + a % seq + 1) // seq),  # not a remainder
    ]
    for before, expected in cases:
        check(Analyzer(), before, expected)
        for env in ({a: 17, seq: 5, h: 3}, {a: -17, seq: 5, h: -2}, {a: 17, seq: -5, h: 4}):
            assert evaluate(before, env) == evaluate(expected, env)


def test_truncating_division_becomes_floor_on_nonnegative_operands(ana):
    check(ana, tir.truncdiv(i * 8 + j, 4), i * 2)
    check(ana, tir.truncmod(i * 8 + j, 4), j)
    before = tir.truncmod(x, 4)  # x may be negative: stays
    check(ana, before, before)


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        (tir.min(i, 40), i),
        (tir.max(i, 40), 40),
        (tir.max(i, i + 1), i + 1),
        (tir.min(x, x), x),
        (tir.min(x, tir.max(x, y)), x),
        (tir.min(tir.min(x, 3), 5), tir.min(x, 3)),
        (tir.max(tir.max(x, 3), 5), tir.max(x, 5)),
    ],
)
def test_min_max_with_provable_order(ana, before, expected):
    check(ana, before, expected)


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        (i < 64, True),
        (i >= 32, False),
        (tir.ne(i, 40), True),
        (i * 4 + j < 128, True),
        (x + 3 < 5, x < 2),
        (5 - x < 3, x > 2),
        (x * 4 < 8, x < 2),
        (x * 4 <= 9, x <= 2),
        (tir.eq(x * 2, 3), False),
        (x + 1 < y + 1, x < y),
    ],
)
def test_comparisons_from_bounds_and_normal_form(ana, before, expected):
    check(ana, before, expected)


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        (tir.logical_and(x < 3, tir.const(True)), x < 3),
        (tir.logical_and(x < 3, tir.const(False)), False),
        (tir.logical_or(x < 3, tir.const(True)), True),
        (tir.logical_or(tir.const(False), x < 3), x < 3),
        (tir.logical_and(x < 3, x < 3), x < 3),
        (tir.logical_and(i < 64, x < 3), x < 3),
        (tir.logical_and(x < 3, x < 5), x < 3),  # the stronger bound implies the other
        (tir.logical_and(x < n, x < n + 1), x < n),
        (tir.logical_or(x < 3, x < 5), x < 5),
        (tir.logical_and(x < 3, x > 5), False),
        (tir.logical_and(x < y, y < x), False),
        (tir.logical_or(x < n, x >= n), True),
        (~(x < 3), x >= 3),
        (~~(x < 3), x < 3),
    ],
)
def test_logic(ana, before, expected):
    check(ana, before, expected)


def test_float_comparison_is_not_negated(ana):
    before = ~(f < 1.0)  # NaN: !(f < 1) is not f >= 1
    assert ana.simplify(before) is before


def test_select(ana):
    check(ana, tir.select(i < 64, i, j), i)
    check(ana, tir.select(i >= 64, i, j), j)
    check(ana, tir.select(x < 3, y + 1, 1 + y), y + 1)
    check(ana, tir.select(~(x < 3), y, 2), tir.select(x >= 3, y, 2))


def test_casts_of_constants(ana):
    check(ana, tir.cast("int32", tir.const(3.7)), 3)
    check(ana, tir.cast("int32", tir.const(-3.7)), -3)  # C truncates toward zero
    check(ana, tir.cast("int8", tir.const(300)), tir.const(44, "int8"))
    check(ana, tir.cast("float32", tir.const(3)), 3.0)
    check(ana, tir.cast("bool", tir.const(3)), True)
    check(ana, tir.cast("int32", x), x)


def test_let_substitutes_simple_values_and_keeps_others(ana):
    v = tir.Var("v")
    check(ana, tir.Let(v, tir.const(3), v * 2 + x), x + 6)
    check(ana, tir.Let(v, x, v * 2 - x), x)
    kept = ana.simplify(tir.Let(v, x * y, v + v))
    assert_structural_equal(kept, tir.Let(v, x * y, v * 2), map_free_vars=False)
    check(ana, tir.Let(v, x * y, x + 1), x + 1)  # unused: dropped


def test_let_bound_is_scoped(ana):
    v = tir.Var("v")
    check(ana, tir.Let(v, i + 1, tir.const(0) < v), True)
    check(ana, tir.const(0) < v, v > 0)  # outside the let nothing is known of v


def test_returns_input_when_already_simple(ana):
    for e in (x, i * 4 + j, x // 3, tir.min(x, y), x < y, f + 1.0):
        assert ana.simplify(e) is e


def test_simplifies_inside_loads_and_calls(ana):
    A = tir.decl_buffer((128,), "float32", "A")
    load = tir.BufferLoad(A, ((i * 4 + j) // 4 * 4 + (i * 4 + j) % 4,))
    out = ana.simplify(tir.exp(load))
    assert_structural_equal(out, tir.exp(tir.BufferLoad(A, (i * 4 + j,))), map_free_vars=False)


def test_bind_to_expression_substitutes(ana):
    v = tir.Var("v")
    ana.bind(v, i * 2)
    check(ana, v + i, i * 3)
    assert ana.can_prove(v < 64)


def test_constant_unit_range_binds_the_value():
    a = Analyzer()
    a.bind(x, R(5, 1))
    check(a, x + 1, 6)


def test_unsigned_wraparound_is_respected():
    u = tir.Var("u", "uint8")
    a = Analyzer()
    for before in ((u - 1) // 2, tir.min(u - 1, u), u + 1 < 3):
        assert a.simplify(before) is before  # u = 0 wraps: no linear reasoning
    assert a.const_int_bound(u - 1).max_value == 255
    check(a, (u + 5) - 5, u)  # modular identities still hold


def test_long_sums_do_not_hit_the_recursion_limit():
    a = Analyzer()  # raises the limit before the long expression is built
    e = x
    for k in range(3000):
        e = e + (k % 7)
    check(a, e, x + 8994)


def test_tvm_spellings():
    a = Analyzer()
    check(a, a.rewrite_simplify(x + 1 - x), 1)
    check(a, a.canonical_simplify(x * 4 * 8), x * 32)
