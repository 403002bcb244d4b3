"""call_tir / call_dps_packed / call_pure_packed take their result struct info as given."""

import pytest

from unity.ir import GlobalVar
from unity.ir.diagnostics import DiagnosticError
from unity.relax import ObjectStructInfo, ShapeStructInfo, TensorStructInfo, TupleStructInfo, op

from .helpers import infer, shape_of, tensor


def test_call_tir_result_is_out_sinfo():
    x = tensor("x", ("n", 4))
    call = op.call_tir(GlobalVar("f"), [x], TensorStructInfo(("n", 4), "float32"))
    assert shape_of(call) == ("n", "4")
    multi = op.call_tir(GlobalVar("g"), [x], [x.struct_info, TensorStructInfo((2,), "int32")])
    assert isinstance(infer(multi), TupleStructInfo)
    with_vars = op.call_tir(GlobalVar("h"), [x], x.struct_info, tir_vars=["n"])
    assert isinstance(with_vars.args[2].struct_info, ShapeStructInfo)


def test_call_tir_rejects_non_tensor_outputs():
    x = tensor("x", (2,))
    with pytest.raises(DiagnosticError, match="call_tir expects tensor outputs, got ObjectStructInfo"):
        infer(op.call_tir(GlobalVar("f"), [x], ObjectStructInfo()))


def test_call_dps_packed_and_call_pure_packed():
    x = tensor("x", ("n",))
    assert shape_of(op.call_dps_packed("my_exp", [x], x.struct_info)) == ("n",)
    call = op.call_pure_packed("shape_of", x, sinfo_args=ShapeStructInfo(ndim=1))
    assert infer(call).ndim == 1
    assert isinstance(infer(op.call_pure_packed("noop", x)), ObjectStructInfo)
