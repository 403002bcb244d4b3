"""well_formed / check_well_formed: scoping, SSA, dataflow rules, ANF, shape symbols."""

import pytest

from unity.ir import GlobalVar, IRModule
from unity.ir.diagnostics import DiagnosticError
from unity.relax import (
    BindingBlock, BlockBuilder, DataflowBlock, DataflowVar, Function, SeqExpr, TensorStructInfo,
    Var, VarBinding, analysis, op,
)  # fmt: skip

pytestmark = pytest.mark.ill_formed

S = TensorStructInfo(("n",), "float32")


def _func(params, blocks, body):
    return IRModule({"main": Function(tuple(params), SeqExpr(tuple(blocks), body), body.struct_info)})


def _call(call):
    return BlockBuilder().normalize(call)


def _fails(mod, match):
    assert not analysis.well_formed(mod)
    with pytest.raises(DiagnosticError, match=match):
        analysis.check_well_formed(mod)


def test_built_function_is_well_formed():
    x = Var("x", S)
    y = Var("y", S)
    assert analysis.well_formed(_func([x], [BindingBlock((VarBinding(y, _call(op.exp(x))),))], y))


def test_use_before_definition():
    x, y, z = Var("x", S), Var("y", S), Var("z", S)
    block = BindingBlock((VarBinding(y, _call(op.exp(z))), VarBinding(z, _call(op.exp(x)))))
    _fails(_func([x], [block], y), r"var z is used before it is defined or out of scope \(in @main\)")


def test_var_defined_twice():
    x, y = Var("x", S), Var("y", S)
    block = BindingBlock((VarBinding(y, _call(op.exp(x))), VarBinding(y, _call(op.exp(x)))))
    _fails(_func([x], [block], y), "var y is defined more than once")


def test_dataflow_var_escaping_its_block():
    x, lv = Var("x", S), DataflowVar("lv", S)
    block = DataflowBlock((VarBinding(lv, _call(op.exp(x))),))
    _fails(_func([x], [block], lv), "DataflowVar lv is used outside its dataflow block")


def test_dataflow_var_outside_dataflow_block():
    x, lv = Var("x", S), DataflowVar("lv", S)
    y = Var("y", S)
    block = BindingBlock((VarBinding(lv, _call(op.exp(x))), VarBinding(y, _call(op.exp(lv)))))
    _fails(_func([x], [block], y), "DataflowVar lv is bound outside a dataflow block")


def test_nested_call_is_not_anf():
    x, y = Var("x", S), Var("y", S)
    nested = _call(op.exp(op.exp(x)))
    _fails(_func([x], [BindingBlock((VarBinding(y, nested),))], y), "not ANF")


def test_missing_struct_info():
    x, y = Var("x", S), Var("y", S)
    _fails(_func([x], [BindingBlock((VarBinding(y, op.exp(x)),))], y), "the value bound to y has no struct info")


def test_undefined_shape_symbol():
    x = Var("x", S)
    y = Var("y", TensorStructInfo(("m",), "float32"))
    _fails(_func([x], [BindingBlock((VarBinding(y, _call(op.exp(x))),))], y), "shape symbol m of y is never defined")


def test_call_of_unknown_global():
    x, y = Var("x", S), Var("y", S)
    call = _call(op.call_tir(GlobalVar("missing"), [x], S))
    _fails(_func([x], [BindingBlock((VarBinding(y, call),))], y), "@missing")


def test_error_text_names_the_problem_and_function():
    x, y, z = Var("x", S), Var("y", S), Var("z", S)
    mod = _func([x], [BindingBlock((VarBinding(y, _call(op.exp(z))),))], y)
    with pytest.raises(DiagnosticError) as info:
        analysis.check_well_formed(mod)
    assert info.value.message == "var z is used before it is defined or out of scope (in @main)"
    assert info.value.node is z


def test_rendered_error_underlines_the_use():
    x, y, z = Var("x", S), Var("y", S), Var("z", S)
    mod = _func([x], [BindingBlock((VarBinding(y, _call(op.exp(z))),))], y)
    with pytest.raises(DiagnosticError) as info:
        analysis.check_well_formed(mod)
    text = str(info.value)
    assert text.startswith("var z is used before it is defined or out of scope (in @main)\n")
    expected_tail = "\n".join([
        "    @R.function(private=True)",
        '    def main(x: R.Tensor((n,), dtype="float32")) -> R.Tensor((n,), dtype="float32"):',
        "        n = T.int64()",
        '        y: R.Tensor((n,), dtype="float32") = R.exp(z)',
        "                                                   ^",
        "        return y",
    ])
    assert text.endswith(expected_tail)
