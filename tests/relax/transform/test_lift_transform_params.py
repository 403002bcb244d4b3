"""LiftTransformParams: weight preprocessing moves to main_transform_params, results equal."""

from __future__ import annotations

import numpy as np

import unity
from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, Tuple, TensorStructInfo, Var, VirtualMachine, analysis, op
from unity.relax.transform import LiftTransformParams

from .reference import evaluate


def _before():
    x = Var("x", TensorStructInfo((2, 4), "float32"))
    w = Var("w", TensorStructInfo((3, 4), "float32"))
    b = Var("b", TensorStructInfo((3,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x, w, b], attrs={"num_input": 1}):
        with bb.dataflow():
            wt = bb.emit(op.permute_dims(w), "wt")
            b2 = bb.emit(op.multiply(b, b), "b2")
            lv = bb.emit(op.matmul(x, wt))
            gv = bb.emit_output(op.add(lv, b2))
        bb.emit_func_output(gv)
    return bb.get()


def _expected():
    w = Var("w", TensorStructInfo((3, 4), "float32"))
    b = Var("b", TensorStructInfo((3,), "float32"))
    bb = BlockBuilder()
    with bb.function("transform_params", [w, b]):
        with bb.dataflow():
            wt = bb.emit(op.permute_dims(w), "wt")
            b2 = bb.emit(op.multiply(b, b), "b2")
            gv = bb.emit_output(Tuple((wt, b2)), "gv")
        bb.emit_func_output(gv)
    transform = bb.get()["transform_params"].with_attr("global_symbol", "main_transform_params")
    x = Var("x", TensorStructInfo((2, 4), "float32"))
    b2 = Var("b2", TensorStructInfo((3,), "float32"))
    wt = Var("wt", TensorStructInfo((4, 3), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x, wt, b2], attrs={"num_input": 1}):
        with bb.dataflow():
            lv = bb.emit(op.matmul(x, wt))
            gv = bb.emit_output(op.add(lv, b2))
        bb.emit_func_output(gv)
    mod = bb.get()
    mod["main_transform_params"] = transform
    return mod


def test_lifts_weight_only_bindings_and_keeps_results():
    before = _before()
    after = LiftTransformParams()(before)
    assert analysis.well_formed(after)
    assert_structural_equal(after["main"], _expected()["main"])
    assert_structural_equal(after["main_transform_params"], _expected()["main_transform_params"])
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype("float32") for s in ((2, 4), (3, 4), (3,)))
    params = evaluate(after, w, b, func="main_transform_params")
    np.testing.assert_allclose(evaluate(after, x, *params), evaluate(before, x, w, b), rtol=1e-5)
    vm = VirtualMachine(unity.compile(after, "llvm"), unity.cpu())
    compiled = [p.numpy() for p in vm["main_transform_params"](w, b)]
    np.testing.assert_allclose(vm["main"](x, *compiled).numpy(), x @ w.T + b * b, rtol=1e-5)


def test_without_num_input_nothing_moves():
    mod = _before()
    gv = mod.get_global_var("main")
    mod.update_func(gv, mod[gv].without_attr("num_input"))
    assert LiftTransformParams()(mod) is mod
    lifted = LiftTransformParams()(_before())
    assert LiftTransformParams()(lifted) is lifted
