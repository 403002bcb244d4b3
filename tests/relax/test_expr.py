"""Relax expression nodes: construction, struct info of leaves, identity equality."""

import numpy as np
import pytest

from unity.ir.diagnostics import DiagnosticError
from unity.ir.structural import structural_equal
from unity.relax import (
    Call, Constant, DataflowVar, DataTypeImm, ExternFunc, Function, PrimValue, SeqExpr, ShapeExpr,
    StringImm, TensorStructInfo, Tuple, TupleGetItem, Var, const, op, sym,
)  # fmt: skip


def test_leaves_carry_struct_info():
    c = Constant(np.zeros((2, 3), "float32"))
    assert c.struct_info.shape == (2, 3) and c.struct_info.dtype == "float32"
    assert ShapeExpr(("n", 2)).struct_info.values == (sym("n"), 2)
    assert PrimValue(3).struct_info.value == 3
    assert PrimValue("n").value == sym("n")
    assert StringImm("s").struct_info_ is not None
    assert DataTypeImm("int8").value == "int8"
    assert ExternFunc("f").struct_info.params is None


def test_const_defaults_to_float32():
    assert const([1.0, 2.0]).data.dtype == np.float32
    assert const(3, "int32").struct_info.shape == ()


def test_vars_compare_by_identity_and_dataflow_var_is_a_var():
    s = TensorStructInfo((2,), "float32")
    a, b = Var("x", s), Var("x", s)
    assert a != b and a == a  # noqa: PLR0124 - identity equality is the point
    assert isinstance(DataflowVar("lv", s), Var)
    assert a.replace(name_hint="x") is a


def test_call_has_no_struct_info_until_normalized():
    x = Var("x", TensorStructInfo((2,), "float32"))
    call = op.exp(x)
    assert isinstance(call, Call) and call.op is op.exp and call.args == (x,)
    with pytest.raises(DiagnosticError, match="Call has no struct info: normalize it first"):
        _ = call.struct_info


def test_tuple_and_function_struct_info():
    x = Var("x", TensorStructInfo(("n",), "float32"))
    t = Tuple((x, x))
    assert len(t.struct_info.fields) == 2
    f = Function((x,), SeqExpr((), TupleGetItem(t, 0)), x.struct_info)
    assert f.struct_info.params == (x.struct_info,)


def test_alpha_equivalent_functions_are_structurally_equal():
    def make():
        x = Var("x", TensorStructInfo(("n",), "float32"))
        return Function((x,), SeqExpr((), x), x.struct_info)

    assert structural_equal(make(), make())
