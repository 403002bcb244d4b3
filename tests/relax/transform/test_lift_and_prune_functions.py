"""LambdaLift and RemoveUnusedParameters: module functions after the pass, and numbers."""

from __future__ import annotations

import numpy as np

from unity.ir.module import IRModule
from unity.ir.structural import assert_structural_equal
from unity.relax import (
    BlockBuilder, Call, Function, SeqExpr, TensorStructInfo, Var, VarBinding, BindingBlock,
    analysis, op,
)  # fmt: skip
from unity.relax.transform import LambdaLift, RemoveUnusedParameters

from .reference import evaluate

T4 = TensorStructInfo((4,), "float32")


def _local_function_module() -> IRModule:
    x = Var("x", T4)
    y = Var("y", T4)
    s = Var("s", T4)
    inner = Function((y,), SeqExpr((BindingBlock((VarBinding(s, op.add(x, y).replace(struct_info_=T4)),)),), s), T4)
    f = Var("inner", inner.struct_info)
    bb = BlockBuilder()
    with bb.function("main", [x]):
        bb.emit_normalized(VarBinding(f, inner))
        gv = bb.emit(Call(f, (x,)))
        bb.emit_func_output(op.multiply(gv, x))
    return bb.get()


def _lifted_expected() -> IRModule:
    x, y, s = Var("x", T4), Var("y", T4), Var("s", T4)
    bb = BlockBuilder()
    with bb.function("main_inner", [x, y]):
        bb.emit_normalized(VarBinding(s, op.add(x, y).replace(struct_info_=T4)))
        bb.emit_func_output(s)
    mod = bb.get()
    gv = mod.get_global_var("main_inner")
    mod.update_func(gv, mod[gv].without_attr("global_symbol"))
    xm = Var("x", T4)
    bb = BlockBuilder(mod)
    with bb.function("main", [xm]):
        lv = bb.emit(Call(gv, (xm, xm)))
        bb.emit_func_output(op.multiply(lv, xm))
    return bb.get()


def test_lambda_lift_moves_the_local_function_and_passes_captures():
    before = _local_function_module()
    after = LambdaLift()(before)
    assert analysis.well_formed(after)
    assert_structural_equal(after, _lifted_expected())
    x = np.arange(4, dtype="float32")
    np.testing.assert_allclose(evaluate(after, x), evaluate(before, x))
    np.testing.assert_allclose(evaluate(after, x), (x + x) * x)
    assert LambdaLift()(after) is after


def _helper_module(with_unused: bool) -> IRModule:
    x, unused = Var("x", T4), Var("unused", T4)
    bb = BlockBuilder()
    with bb.function("helper", [x, unused] if with_unused else [x]):
        out = bb.emit(op.exp(x))
        bb.emit_func_output(out)
    mod = bb.get()
    gv = mod.get_global_var("helper")
    mod.update_func(gv, mod[gv].without_attr("global_symbol"))
    a = Var("a", T4)
    bb = BlockBuilder(mod)
    with bb.function("main", [a]):
        lv = bb.emit(Call(gv, (a, a) if with_unused else (a,)))
        bb.emit_func_output(lv)
    return bb.get()


def test_remove_unused_parameters_updates_the_callers():
    before = _helper_module(True)
    after = RemoveUnusedParameters()(before)
    assert_structural_equal(after, _helper_module(False))
    assert analysis.well_formed(after)
    x = np.arange(4, dtype="float32")
    np.testing.assert_allclose(evaluate(after, x), np.exp(x), rtol=1e-6)
    assert RemoveUnusedParameters()(after) is after


def test_remove_unused_parameters_keeps_public_signatures():
    x, unused = Var("x", T4), Var("unused", T4)
    bb = BlockBuilder()
    with bb.function("main", [x, unused]):
        bb.emit_func_output(bb.emit(op.exp(x)))
    mod = bb.get()
    assert RemoveUnusedParameters()(mod) is mod
