"""`const_int_bound`, `can_prove`, `can_prove_equal` and constraint scopes."""

import pytest

from unity import tir
from unity.tir.arith import NEG_INF, POS_INF, Analyzer, ConstIntBound

R = tir.Range.from_min_extent
i, j, x, y, n = (tir.Var(name) for name in ("i", "j", "x", "y", "n"))


@pytest.fixture
def ana() -> Analyzer:
    a = Analyzer()
    a.bind(i, R(0, 32))
    a.bind(j, R(-4, 8))
    return a


@pytest.mark.parametrize(
    ("expr", "lo", "hi"),
    [
        (i, 0, 31),
        (i * 4 + 3, 3, 127),
        (i - i, 0, 0),
        (j * -2, -6, 8),
        (i // 8, 0, 3),
        (j // 3, -2, 1),
        (i % 8, 0, 7),
        (j % 8, 0, 7),
        ((i + 64) % 32, 0, 31),
        ((i % 8) + 64, 64, 71),
        (tir.truncdiv(j, 3), -1, 1),
        (tir.truncmod(j, 3), -2, 2),
        (tir.min(i, j), -4, 3),
        (tir.max(i, j), 0, 31),
        (i * j, -124, 93),
        (tir.select(x < 3, i, j), -4, 31),
        (i < x, 0, 1),
        (tir.cast("int8", i), 0, 31),
        (tir.cast("int8", i * 8), -128, 127),
    ],
)
def test_const_int_bound_examples(ana, expr, lo, hi):
    assert ana.const_int_bound(expr) == ConstIntBound(lo, hi)


def test_unbound_variables_use_the_dtype_range(ana):
    assert ana.const_int_bound(x) == ConstIntBound(-(2**31), 2**31 - 1)
    assert ana.const_int_bound(tir.SizeVar("m")) == ConstIntBound(0, 2**31 - 1)
    assert ana.const_int_bound(tir.Var("u", "uint8")) == ConstIntBound(0, 255)


def test_int64_ends_saturate_at_the_sentinels(ana):
    b = ana.const_int_bound(tir.Var("w", "int64") * 4)
    assert b.is_unbounded_below() and b.is_unbounded_above()
    assert (b.min_value, b.max_value) == (NEG_INF, POS_INF)


def test_const_int_bound_rejects_floats(ana):
    with pytest.raises(TypeError, match="integer expression"):
        ana.const_int_bound(tir.Var("f", "float32"))


def test_can_prove(ana):
    assert ana.can_prove(i < 64)
    assert ana.can_prove(i * 4 + 3 <= 127)
    assert not ana.can_prove(i * 4 + 3 < 127)
    assert not ana.can_prove(x < 3)  # unknown is not proven
    assert ana.can_prove(tir.eq((i * 32 + 5) // 32, i))


def test_can_prove_equal(ana):
    assert ana.can_prove_equal((x + 3) + 5, x + 8)
    assert ana.can_prove_equal(x // 8 * 8 + x % 8, x)
    assert not ana.can_prove_equal(x, y)
    f = tir.Var("f", "float32")
    assert ana.can_prove_equal(f * 1.0, f)


def test_symbolic_extent_gives_a_fact():
    a = Analyzer()
    a.bind(i, R(0, n))
    assert a.can_prove(i < n)
    assert a.can_prove(i - n < 0)
    assert a.can_prove(i + 1 <= n)
    assert not a.can_prove(i + 1 < n)
    assert a.can_prove(i >= 0)
    assert a.simplify(i // n).value == 0
    assert a.simplify(i % n) is i


def test_constraint_scope_adds_and_removes_facts(ana):
    assert not ana.can_prove(x < 10)
    with ana.constraint_scope(tir.logical_and(x < 8, x >= 0)):
        assert ana.can_prove(x < 10)
        assert ana.const_int_bound(x) == ConstIntBound(0, 7)
        assert ana.simplify(x // 8).value == 0
        with ana.constraint_scope(x < y):
            assert ana.can_prove(x - y < 0)
            assert ana.can_prove(x + 1 <= y)
        assert not ana.can_prove(x < y)
    assert not ana.can_prove(x < 10)
    assert ana.const_int_bound(x) == ConstIntBound(-(2**31), 2**31 - 1)


def test_constraint_scope_knows_opaque_conditions(ana):
    flag = tir.Var("flag", "bool")
    with ana.constraint_scope(flag):
        assert ana.can_prove(flag)
    with ana.constraint_scope(~flag):
        assert ana.can_prove(~flag)
    assert not ana.can_prove(flag)


def test_constraint_scope_on_a_modulus(ana):
    with ana.constraint_scope(tir.eq(x % 4, 0)):
        assert ana.simplify(x % 4).value == 0


def test_bind_rejects_non_variables(ana):
    with pytest.raises(TypeError, match="tir.Var"):
        ana.bind(i + 1, R(0, 4))  # type: ignore[arg-type]


def test_a_quotient_times_its_divisor_is_at_most_the_dividend():
    """``x // s * (s * 3072)``: corners alone give x.max * s.max * 3072."""
    a = Analyzer()
    s = tir.SizeVar("s")
    a.bind(x, R(0, 65536))
    a.bind(s, R(1, 512))
    for expr, hi in ((x // s * (s * 3072), 65535 * 3072), (x // s * s, 65535), ((3 * s) * (x // s), 65535 * 3)):
        assert a.const_int_bound(expr) == ConstIntBound(0, hi), expr
    a.bind(y, R(0, 513))  # y may be 0: no such bound
    assert a.const_int_bound(x // y * y).max_value > 65535
