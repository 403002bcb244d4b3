"""Struct-info inference of reductions, cumsum, creation ops and tril/triu."""

import pytest

from unity.ir.diagnostics import DiagnosticError
from unity.relax import PrimValue, op

from .helpers import infer, shape_of, tensor


@pytest.mark.parametrize("fn", [op.sum, op.mean, op.max, op.min, op.prod, op.variance])
def test_reductions(fn):
    x = tensor("x", ("n", 4, 5))
    assert shape_of(fn(x, axis=1)) == ("n", "5")
    assert shape_of(fn(x, axis=[1, 2], keepdims=True)) == ("n", "1", "1")
    assert shape_of(fn(x)) == ()
    assert infer(fn(x, axis=-1)).dtype == "float32"


def test_arg_reductions_give_int64():
    x = tensor("x", ("n", 4))
    sinfo = infer(op.argmax(x, axis=1))
    assert sinfo.dtype == "int64" and tuple(map(str, sinfo.shape)) == ("n",)
    assert shape_of(op.argmin(x, axis=0, keepdims=True)) == ("1", "4")


def test_reduction_axis_out_of_range():
    with pytest.raises(DiagnosticError, match="sum axis 3 is out of range for a tensor of rank 2"):
        infer(op.sum(tensor("x", (2, 3)), axis=3))


def test_cumsum():
    x = tensor("x", ("n", 4))
    assert shape_of(op.cumsum(x, axis=1)) == ("n", "4")
    assert shape_of(op.cumsum(x)) == ("4*n",)
    assert infer(op.cumsum(x, axis=0, dtype="float64")).dtype == "float64"


def test_creation_ops():
    assert shape_of(op.zeros(("n", 3), "int32")) == ("n", "3")
    assert infer(op.ones((2,), "float16")).dtype == "float16"
    assert shape_of(op.full((2, "m"), 1.5)) == ("2", "m")
    assert shape_of(op.full((2,), PrimValue(3), "int64")) == ("2",)
    with pytest.raises(DiagnosticError, match="full expects a scalar fill value"):
        infer(op.full((2,), tensor("v", (2,))))
    assert shape_of(op.arange(5)) == ("5",)
    assert shape_of(op.arange(1, 10, 3)) == ("3",)
    assert shape_of(op.arange(0, 1, 0.25, "float32")) == ("4",)
    assert shape_of(op.arange(5, 0)) == ("0",)
    with pytest.raises(DiagnosticError, match="arange expects a nonzero step"):
        infer(op.arange(0, 5, 0))


def test_tril_triu():
    x = tensor("x", ("n", "n"))
    assert shape_of(op.tril(x)) == ("n", "n")
    assert shape_of(op.triu(x, 1)) == ("n", "n")
    with pytest.raises(DiagnosticError, match="tril expects a tensor of rank at least 2, got rank 1"):
        infer(op.tril(tensor("v", (3,))))
