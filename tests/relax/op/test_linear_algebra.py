"""Struct-info inference of matmul (batched, broadcasting, 1-D), nn.linear and det."""

import pytest

from unity.ir.diagnostics import DiagnosticError
from unity.relax import BlockBuilder, op

from .helpers import infer, shape_of, tensor


def test_matmul_symbolic_rows():
    assert shape_of(op.matmul(tensor("a", ("n", 4)), tensor("b", (4, 8)))) == ("n", "8")


def test_matmul_batched_with_broadcasting():
    a, b = tensor("a", ("b", 1, "n", 4)), tensor("w", (3, 4, 8))
    assert shape_of(op.matmul(a, b)) == ("b", "3", "n", "8")


def test_matmul_vector_operands():
    assert shape_of(op.matmul(tensor("v", (4,)), tensor("m", (4, 8)))) == ("8",)
    assert shape_of(op.matmul(tensor("m", ("n", 4)), tensor("v", (4,)))) == ("n",)
    assert shape_of(op.matmul(tensor("u", (4,)), tensor("v", (4,)))) == ()


def test_matmul_out_dtype():
    call = op.matmul(tensor("a", (2, 4), "int8"), tensor("b", (4, 3), "int8"), out_dtype="int32")
    assert infer(call).dtype == "int32"


def test_matmul_mismatch_names_both_dims():
    with pytest.raises(DiagnosticError, match=r"matmul reduces over mismatched dims: 4 vs 5 \(shapes \(3, 4\) and \(5, 6\)\)"):
        infer(op.matmul(tensor("a", (3, 4)), tensor("b", (5, 6))))
    with pytest.raises(DiagnosticError, match="matching dtypes"):
        infer(op.matmul(tensor("a", (3, 4)), tensor("b", (4, 6), "float16")))


def test_linear_is_emitted_as_permute_matmul_add():
    x, w, b = tensor("x", ("n", 4)), tensor("w", (8, 4)), tensor("b", (8,))
    bb = BlockBuilder()
    with bb.function("main", [x, w, b]):
        y = bb.emit(op.nn.linear(x, w, b))
        bb.emit_func_output(y)
    func = bb.get()["main"]
    ops = [binding.value.op for binding in func.body.blocks[0].bindings]
    assert ops == [op.permute_dims, op.matmul, op.add]
    assert tuple(map(str, y.struct_info.shape)) == ("n", "8")


def test_det_drops_the_matrix_dims():
    assert shape_of(op.det(tensor("x", ("n", 3, 3)))) == ("n",)
    assert shape_of(op.det(tensor("x", (4, 4), "float64"))) == ()


def test_det_of_non_square_or_integer_matrices_fails():
    with pytest.raises(DiagnosticError, match=r"det expects square matrices, got shape \(2, 3, 4\)"):
        infer(op.det(tensor("x", (2, 3, 4))))
    with pytest.raises(DiagnosticError, match="det expects a float tensor, got int32"):
        infer(op.det(tensor("x", (3, 3), "int32")))
