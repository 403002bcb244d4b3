"""Struct-info inference of unary, binary (broadcasting), comparison, where and astype."""

import pytest

from unity.ir.diagnostics import DiagnosticError
from unity.relax import op, sym

from .helpers import infer, shape_of, tensor

UNARY = [op.abs, op.negative, op.exp, op.log, op.sqrt, op.rsqrt, op.sin, op.cos, op.tanh,
         op.sigmoid, op.erf, op.floor, op.ceil, op.round, op.square, op.sign]  # fmt: skip


@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.name)
def test_unary_keeps_shape_and_dtype(fn):
    x = tensor("x", ("n", 4))
    assert shape_of(fn(x)) == ("n", "4")
    assert infer(fn(tensor("y", (2, 3), "float16"))).dtype == "float16"


def test_float_only_unary_rejects_integers():
    with pytest.raises(DiagnosticError, match="exp expects a floating-point tensor, got dtype int32"):
        infer(op.exp(tensor("x", (2,), "int32")))


def test_predicates_give_bool():
    x = tensor("x", ("n",))
    assert infer(op.isnan(x)).dtype == "bool"
    assert infer(op.logical_not(tensor("b", (2,), "bool"))).dtype == "bool"


def test_clip_checks_bounds():
    x = tensor("x", ("n",))
    assert shape_of(op.clip(x, 0, 6)) == ("n",)
    with pytest.raises(DiagnosticError, match="clip expects min <= max"):
        infer(op.clip(x, 6, 0))


BINARY = [op.add, op.subtract, op.multiply, op.divide, op.floor_divide, op.power, op.maximum,
          op.minimum, op.mod, op.floor_mod]  # fmt: skip


@pytest.mark.parametrize("fn", BINARY, ids=lambda f: f.name)
def test_binary_broadcasts_static_and_symbolic(fn):
    assert shape_of(fn(tensor("a", (3, 1)), tensor("b", (4,)))) == ("3", "4")
    assert shape_of(fn(tensor("a", ("n", 1)), tensor("b", (1, "m")))) == ("n", "m")
    assert shape_of(fn(tensor("a", ("n", 4)), tensor("b", ("n", 4)))) == ("n", "4")


def test_comparisons_give_bool():
    for fn in (op.equal, op.not_equal, op.less, op.less_equal, op.greater, op.greater_equal):
        sinfo = infer(fn(tensor("a", ("n", 1)), tensor("b", (5,))))
        assert sinfo.dtype == "bool" and tuple(map(str, sinfo.shape)) == ("n", "5")


def test_broadcast_mismatch_is_a_clear_error():
    with pytest.raises(DiagnosticError, match=r"add cannot broadcast shapes \(3, 4\) and \(5,\): dims 4 and 5 differ"):
        infer(op.add(tensor("a", (3, 4)), tensor("b", (5,))))
    with pytest.raises(DiagnosticError, match="dims n and n \\+ 1 differ"):
        infer(op.add(tensor("a", ("n",)), tensor("b", (sym("n") + 1,))))


def test_dtype_mismatch_is_a_clear_error():
    with pytest.raises(DiagnosticError, match="multiply expects matching dtypes, got float32 vs int32"):
        infer(op.multiply(tensor("a", (2,)), tensor("b", (2,), "int32")))


def test_undecidable_broadcast_gives_unknown_shape_of_known_rank():
    sinfo = infer(op.add(tensor("a", ("n",)), tensor("b", ("m",))))
    assert sinfo.shape is None and sinfo.ndim == 1


def test_where_broadcasts_three_inputs():
    c = tensor("c", ("n", 1), "bool")
    assert shape_of(op.where(c, tensor("x", (1, 4)), tensor("y", (4,)))) == ("n", "4")
    with pytest.raises(DiagnosticError, match="where expects a bool condition, got dtype float32"):
        infer(op.where(tensor("c", (2,)), tensor("x", (2,)), tensor("y", (2,))))


def test_astype_changes_dtype_only():
    sinfo = infer(op.astype(tensor("x", ("n", 3)), "int8"))
    assert sinfo.dtype == "int8" and tuple(map(str, sinfo.shape)) == ("n", "3")
    with pytest.raises(ValueError, match="unknown dtype"):
        op.astype(tensor("x", (2,)), "float33")


def test_non_tensor_argument_is_a_clear_error():
    from unity.relax import ShapeExpr

    with pytest.raises(DiagnosticError, match="exp expects a tensor as input, got ShapeStructInfo"):
        infer(op.exp(ShapeExpr((2,))))
