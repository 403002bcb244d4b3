"""Struct info: sympy dims, equality decided by sympy, unknown shapes."""

import pytest
import sympy

from unity.relax import (
    FuncStructInfo, ObjectStructInfo, PrimStructInfo, ShapeStructInfo, TensorStructInfo,
    TupleStructInfo, prove_equal, shapes_equal, struct_info_equal, sym,
)  # fmt: skip
from unity.relax.struct_info import as_dim, merge_floors, prove_equal, prove_not_equal, sym


def test_string_dims_become_positive_integer_symbols():
    sinfo = TensorStructInfo(("n", 4), "float32")
    n = sinfo.shape[0]
    assert isinstance(n, sympy.Symbol) and n.is_integer and n.is_positive
    assert n == sym("n")
    assert sinfo.shape[1] == 4 and sinfo.ndim == 2


def test_shape_equality_is_decided_by_sympy():
    n = sym("n")
    assert prove_equal(2 * n, n + n)
    assert shapes_equal((n * 4, sympy.Integer(3)), (4 * n, sympy.Integer(3)))
    assert not prove_equal(n, n + 1)
    assert prove_not_equal(n, n + 1)
    assert not prove_not_equal(n, 4)  # undecidable: not provably different


def test_unknown_shape_with_known_rank():
    sinfo = TensorStructInfo(None, "float32", ndim=3)
    assert sinfo.shape is None and sinfo.ndim == 3
    assert TensorStructInfo().dtype == "void" and TensorStructInfo().ndim == -1


def test_ndim_disagreeing_with_shape_is_rejected():
    with pytest.raises(ValueError, match="ndim=3 disagrees with a shape of 2 dims"):
        TensorStructInfo((1, 2), "float32", ndim=3)


def test_bad_dim_is_rejected():
    with pytest.raises(TypeError, match="int, a str or a sympy expr"):
        as_dim(1.5)


def test_struct_info_equal_compares_symbolically():
    n = sym("n")
    a = TensorStructInfo((2 * n, 4), "float32")
    b = TensorStructInfo((n + n, 4), "float32")
    assert struct_info_equal(a, b)
    assert not struct_info_equal(a, TensorStructInfo((2 * n, 4), "float16"))
    assert struct_info_equal(TupleStructInfo((a, ObjectStructInfo())), TupleStructInfo((b, ObjectStructInfo())))
    assert struct_info_equal(ShapeStructInfo(("n",)), ShapeStructInfo((n,)))
    assert struct_info_equal(PrimStructInfo("int64", n), PrimStructInfo("int64", n))
    assert struct_info_equal(FuncStructInfo((a,), b), FuncStructInfo((b,), a))
    assert not struct_info_equal(a, ObjectStructInfo())


def test_nested_floor_divisions_merge():
    n = sym("n")
    # two strided convs (wav2vec's feature encoder) against one with both strides
    assert merge_floors(sympy.floor((sympy.floor((n - 10) / 5) + 1 - 3) / 2) + 1) == sympy.floor(n / 10) - 1
    assert as_dim(sympy.floor(sympy.floor(n / 5) / 2)) == sympy.floor(n / 10)
    assert merge_floors(sympy.floor(sympy.floor(n / 2) / sym("m"))) == sympy.floor(sympy.floor(n / 2) / sym("m"))


def test_a_size_equals_its_maximum_with_zero():
    size = sympy.floor((sym("n") - 10) / 5) + 1  # may be negative for some n, but is a size
    assert prove_equal(size, sympy.Max(size, 0))
    assert not prove_equal(size, sympy.Max(size, 1))


def test_floors_with_constants_a_whole_step_apart_are_equal():
    """SEW: a pooled length ``floor(n/20 - 3/2) + 1`` sliced to a conv's ``floor(n/20 - 1/2)``
    (the same number): the add of the two must see one length."""
    n = sym("n")
    pooled = sympy.floor(n / 20 - sympy.Rational(3, 2)) + 1
    conv = sympy.floor(n / 20 - sympy.Rational(1, 2))
    assert prove_equal(pooled, conv)
    assert prove_equal(sympy.Max(0, sympy.Min(pooled, conv)), sympy.Max(0, conv))
    assert prove_equal(sympy.ceiling(n / 3 + sympy.Rational(7, 3)), sympy.ceiling(n / 3 + sympy.Rational(1, 3)) + 2)
    assert not prove_equal(pooled, conv + 1)
