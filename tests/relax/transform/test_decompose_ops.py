"""DecomposeOpsForInference: batch_norm becomes multiply/add with folded constants."""

from __future__ import annotations

import numpy as np

from unity.ir.structural import assert_structural_equal
from unity.relax import (
    BlockBuilder, Constant, TensorStructInfo, Tuple, TupleGetItem, Var, analysis, op,
)  # fmt: skip
from unity.relax.transform import CanonicalizeBindings, DecomposeOpsForInference

from .reference import evaluate

RNG = np.random.default_rng(3)
C = 4
G, B, M = (RNG.standard_normal(C).astype("float32") for _ in range(3))
V = RNG.random(C).astype("float32") + 0.5


def _bn_module(params_as_vars: bool = False):
    x = Var("x", TensorStructInfo(("n", C, 3, 3), "float32"))
    pv = [Var(k, TensorStructInfo((C,), "float32")) for k in "gbmv"]
    consts = [Constant(a) for a in (G, B, M, V)]
    bb = BlockBuilder()
    with bb.function("main", [x, *pv] if params_as_vars else [x]):
        with bb.dataflow():
            bn = bb.emit(op.nn.batch_norm(x, *(pv if params_as_vars else consts), epsilon=1e-3))
            gv = bb.emit_output(TupleGetItem(bn, 0))
        bb.emit_func_output(gv)
    return bb.get()


def _expected():
    x = Var("x", TensorStructInfo(("n", C, 3, 3), "float32"))
    scale = G.astype("float64") / np.sqrt(V.astype("float64") + 1e-3)
    shift = B - M * scale
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(op.multiply(x, Constant(scale.astype("float32").reshape(C, 1, 1))))
            y = bb.emit(op.add(lv, Constant(shift.astype("float32").reshape(C, 1, 1))))
            bn = bb.emit(Tuple((y, Constant(M), Constant(V))))
            gv = bb.emit_output(TupleGetItem(bn, 0))
        bb.emit_func_output(gv)
    return bb.get()


def _reference(x):
    shape = (1, C, 1, 1)
    return (x - M.reshape(shape)) / np.sqrt(V.reshape(shape) + 1e-3) * G.reshape(shape) + B.reshape(shape)


def test_batch_norm_with_constant_params_becomes_folded_multiply_add():
    before = _bn_module()
    after = DecomposeOpsForInference()(before)
    assert_structural_equal(after, _expected())
    x = RNG.standard_normal((2, C, 3, 3)).astype("float32")
    for mod in (before, after):
        np.testing.assert_allclose(evaluate(mod, x), _reference(x), rtol=1e-5, atol=1e-5)
    assert DecomposeOpsForInference()(after) is after


def test_batch_norm_with_param_vars_decomposes_into_ops():
    before = _bn_module(params_as_vars=True)
    after = CanonicalizeBindings()(DecomposeOpsForInference()(before))
    assert analysis.well_formed(after)
    names = {b.value.op.name for b in after["main"].body.blocks[0].bindings if hasattr(b.value, "op")}
    assert "relax.nn.batch_norm" not in names and "relax.rsqrt" in names
    x = RNG.standard_normal((1, C, 3, 3)).astype("float32")
    np.testing.assert_allclose(evaluate(after, x, G, B, M, V), _reference(x), rtol=1e-5, atol=1e-5)


def test_layer_norm_decomposes_on_request():
    x = Var("x", TensorStructInfo((2, 5), "float32"))
    g, b = (RNG.standard_normal(5).astype("float32") for _ in range(2))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(op.nn.layer_norm(x, Constant(g), Constant(b)))
        bb.emit_func_output(gv)
    mod = bb.get()
    assert DecomposeOpsForInference()(mod) is mod
    after = DecomposeOpsForInference(decompose_layer_norm=True)(mod)
    assert analysis.well_formed(after)
    xv = RNG.standard_normal((2, 5)).astype("float32")
    np.testing.assert_allclose(evaluate(after, xv), evaluate(mod, xv), rtol=1e-5, atol=1e-5)
