"""CallTIRRewrite: call_tir outputs become explicit `alloc_tensor`s passed to the kernel."""

import pytest

from unity import te, topi
from unity.ir.diagnostics import DiagnosticError
from unity.ir.structural import assert_structural_equal
from unity.relax import (
    BindingBlock,
    BlockBuilder,
    Call,
    Function,
    SeqExpr,
    ShapeExpr,
    TensorStructInfo,
    Tuple,
    TupleStructInfo,
    Var,
    VarBinding,
    analysis,
    op,
    sym,
)  # fmt: skip
from unity.relax.transform import CallTIRRewrite, ToNonDataflow
from unity.relax.vm import alloc_tensor

VOID = TupleStructInfo(())
MAIN = {"global_symbol": "main"}


def alloc(name, sinfo):
    return VarBinding(
        Var(name, sinfo),
        alloc_tensor(ShapeExpr(sinfo.shape), sinfo.dtype).replace(struct_info_=sinfo),
    )


def kernel(gv, args):
    return VarBinding(Var("_", VOID), Call(gv, tuple(args), sinfo_args=(VOID,), struct_info_=VOID))


def test_single_output():
    x = Var("x", TensorStructInfo(("n", 4), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit_output(bb.call_te(topi.exp, x))
        bb.emit_func_output(y)
    before = ToNonDataflow()(bb.get())
    after = CallTIRRewrite()(before)
    sinfo = TensorStructInfo(("n", 4), "float32")
    a = alloc("alloc", sinfo)
    k = kernel(before.get_global_var("exp"), [x, a.var])
    yb = VarBinding(Var("y", sinfo), a.var)
    expected = Function((x,), SeqExpr((BindingBlock((a, k, yb)),), yb.var), sinfo, attrs=MAIN)
    assert_structural_equal(after["main"], expected)
    assert analysis.well_formed(after)


@pytest.mark.ill_formed  # builds un-normalized IR on purpose
def test_tuple_output_and_tir_vars():
    x = Var("x", TensorStructInfo(("n",), "float32"))
    bb = BlockBuilder()

    def two(a, m):  # outputs (n,) and (m,): m is only known from the call
        return [topi.exp(a), te.compute((m,), lambda i: a[0], name="fill")]

    with bb.function("main", [x]):
        call = bb.call_te(two, x, sym("m"))
        pair = bb.emit(call)
        bb.emit_func_output(pair)
    before = bb.get()
    after = CallTIRRewrite()(before)
    s0, s1 = TensorStructInfo(("n",), "float32"), TensorStructInfo(("m",), "float32")
    a0, a1 = alloc("alloc", s0), alloc("alloc1", s1)
    tir_vars = call.args[2]
    k = kernel(before.get_global_var("two"), [x, a0.var, a1.var, tir_vars])
    out = VarBinding(Var("gv", TupleStructInfo((s0, s1))), Tuple((a0.var, a1.var)))
    expected = Function(
        (x,), SeqExpr((BindingBlock((a0, a1, k, out)),), out.var), out.var.struct_info, attrs=MAIN
    )
    assert_structural_equal(after["main"], expected)


def test_nothing_to_rewrite_returns_the_module():
    x = Var("x", TensorStructInfo((4,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        bb.emit_func_output(bb.emit(op.exp(x)))
    mod = bb.get()
    assert CallTIRRewrite()(mod) is mod


@pytest.mark.ill_formed  # builds un-normalized IR on purpose
def test_output_of_unknown_shape_is_an_error():
    from unity.ir.module import GlobalVar
    from unity.relax.op import call_tir

    x = Var("x", TensorStructInfo(("n",), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        y = bb.emit(call_tir(GlobalVar("f"), [x], TensorStructInfo(None, "float32", ndim=1)))
        bb.emit_func_output(y)
    with pytest.raises(DiagnosticError, match="output of unknown shape"):
        CallTIRRewrite()(bb.get())
