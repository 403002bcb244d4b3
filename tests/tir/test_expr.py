"""TIR expression construction: operators, dtype promotion, constants, errors."""

import pytest

from unity import tir


def test_operators_build_nodes_with_floor_semantics():
    i = tir.Var("i")
    assert isinstance(i // 4, tir.FloorDiv)
    assert isinstance(i % 4, tir.FloorMod)
    assert isinstance(tir.truncdiv(i, 4), tir.Div)
    assert isinstance(tir.truncmod(i, 4), tir.Mod)
    assert isinstance(-i, tir.Sub)
    assert isinstance(i < 3, tir.LT) and (i < 3).dtype == "bool"


def test_python_numbers_take_the_other_operands_dtype():
    n = tir.Var("n", "int64")
    e = n * 2 + 1
    assert e.dtype == "int64"
    assert e.b.dtype == "int64"


def test_integer_widths_promote_to_the_wider():
    i, n = tir.Var("i", "int32"), tir.Var("n", "int64")
    e = i + n
    assert e.dtype == "int64"
    assert isinstance(e.a, tir.Cast) and e.a.value is i


def test_int_meets_float_becomes_float():
    x = tir.Var("x", "float16")
    assert (x * 2).dtype == "float16"
    assert (tir.Var("i") * 0.5).dtype == "float32"


def test_equality_operator_stays_identity():
    i = tir.Var("i")
    assert i == i
    assert i != tir.Var("i")
    assert isinstance(tir.eq(i, 1), tir.EQ)


def test_expression_has_no_truth_value():
    with pytest.raises(TypeError, match="no Python truth value"):
        bool(tir.Var("i") < 3)


def test_const_picks_dtypes():
    assert tir.const(3).dtype == "int32"
    assert tir.const(2**40).dtype == "int64"
    assert tir.const(1.5).dtype == "float32"
    assert tir.const(True).dtype == "bool"
    assert tir.const(1, "float32x4").dtype == "float32x4"


def test_unknown_dtype_is_rejected_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown dtype 'float31'"):
        tir.Var("x", "float31")


def test_vector_dtypes():
    r = tir.Ramp(tir.const(0), tir.const(1), 8)
    assert r.dtype == "int32x8"
    assert tir.Broadcast(tir.const(1.0), 4).dtype == "float32x4"
    A = tir.decl_buffer((64,), "float32", "A")
    assert A[r].dtype == "float32x8"


def test_intrinsics_cast_ints_to_float():
    assert tir.exp(tir.Var("i")).dtype == "float32"
    assert tir.isnan(tir.Var("x", "float16")).dtype == "bool"
    assert tir.abs(tir.Var("i")).dtype == "int32"


def test_buffer_rank_mismatch_is_an_index_error():
    A = tir.decl_buffer((4, 4), "float32", "A")
    with pytest.raises(IndexError, match="buffer A has 2 dims, indexed with 1"):
        A[0]


def test_replace_returns_self_when_unchanged():
    i = tir.Var("i")
    e = i + 1
    assert e.replace(a=i) is e
    assert e.replace(a=tir.Var("j")) is not e


def test_select_takes_python_numbers_and_unifies_its_sides():
    """``tir.Select(j < 2, 3, j)`` kept the int 3 (no dtype: an AttributeError later)."""
    j = tir.Var("j", "int64")
    s = tir.Select(j < 2, 3, j)
    assert (s.dtype, s.true_value.dtype) == ("int64", "int64")
    f = tir.Select(True, tir.const(1.5), 2)
    assert f.dtype == "float32" and f.false_value.dtype == "float32" and f.condition.dtype == "bool"
