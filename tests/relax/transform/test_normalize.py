"""Normalize: fill struct info and bind nested calls; a normal module is returned as is."""

import pytest

from unity.ir import IRModule
from unity.relax import (
    BindingBlock, BlockBuilder, Function, SeqExpr, TensorStructInfo, Var, VarBinding, analysis, op,
    sym,
)  # fmt: skip
from unity.relax.transform import Normalize


@pytest.mark.ill_formed  # builds un-normalized IR on purpose
def test_normalize_binds_nested_calls_and_infers_struct_info():
    # Before: y = exp(add(x, x)) with no struct info; after: gv = add(x, x); y = exp(gv).
    x = Var("x", TensorStructInfo(("n", 4), "float32"))
    y = Var("y")
    before = IRModule({"main": Function((x,), SeqExpr((BindingBlock((VarBinding(y, op.exp(op.add(x, x))),)),), y))})
    assert not analysis.well_formed(before)
    after = Normalize()(before)
    func = after["main"]
    bindings = func.body.blocks[0].bindings
    assert [b.value.op for b in bindings] == [op.add, op.exp]
    assert bindings[1].value.args[0] is bindings[0].var
    assert bindings[1].var.struct_info.shape == (sym("n"), 4)
    assert func.body.body is bindings[1].var
    assert analysis.well_formed(after)


def test_normalize_binds_a_call_body():
    x = Var("x", TensorStructInfo((2,), "float32"))
    before = IRModule({"main": Function((x,), SeqExpr((), op.exp(x)))})
    after = Normalize()(before)
    body = after["main"].body
    assert isinstance(body.body, Var) and body.blocks[0].bindings[0].value.op is op.exp
    assert analysis.well_formed(after)


@pytest.mark.parametrize("dataflow", [False, True])
def test_normalize_returns_a_normal_module_unchanged(dataflow):
    x = Var("x", TensorStructInfo(("n",), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        if dataflow:
            with bb.dataflow():
                y = bb.emit_output(op.exp(x))
        else:
            y = bb.emit(op.exp(x))
        bb.emit_func_output(y)
    mod = bb.get()
    assert Normalize()(mod) is mod


@pytest.mark.ill_formed  # builds un-normalized IR on purpose
def test_normalize_handles_if_branches():
    from unity.relax import If

    c = Var("c", TensorStructInfo((), "bool"))
    x = Var("x", TensorStructInfo(("n",), "float32"))
    t = Var("t")
    branch_true = SeqExpr((BindingBlock((VarBinding(t, op.exp(op.exp(x))),)),), t)
    branch_false = SeqExpr((), x)
    r = Var("r")
    body = SeqExpr((BindingBlock((VarBinding(r, If(c, branch_true, branch_false)),)),), r)
    after = Normalize()(IRModule({"main": Function((c, x), body)}))
    func = after["main"]
    (binding,) = func.body.blocks[0].bindings
    assert binding.var.struct_info.shape == (sym("n"),)
    assert [b.value.op for b in binding.value.true_branch.blocks[0].bindings] == [op.exp, op.exp]
    assert analysis.well_formed(after)


@pytest.mark.ill_formed  # builds un-normalized IR on purpose
def test_inference_error_in_pass_names_pass_and_underlines_call():
    from unity.ir.diagnostics import DiagnosticError

    a = Var("a", TensorStructInfo((3, 4), "float32"))
    b = Var("b", TensorStructInfo((5, 6), "float32"))
    y = Var("y")
    block = BindingBlock((VarBinding(y, op.matmul(a, b)),))
    mod = IRModule({"main": Function((a, b), SeqExpr((block,), y))})
    with pytest.raises(DiagnosticError) as info:
        Normalize()(mod)
    assert str(info.value) == "\n".join([
        "matmul reduces over mismatched dims: 4 vs 5 (shapes (3, 4) and (5, 6))",
        "  in pass: Normalize",
        "  at: @main.body.blocks[0].bindings[0].value",
        "",
        "@I.ir_module",
        "class Module:",
        "    @R.function(private=True)",
        '    def main(a: R.Tensor((3, 4), dtype="float32"), b: R.Tensor((5, 6), dtype="float32")) -> R.Object:',
        "        y: R.Object = R.matmul(a, b, out_dtype=None)",
        "                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "        return y",
    ])
