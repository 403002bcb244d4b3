"""The graph passes chained on a conv-bn-relu-add net with a symbolic batch, compiled and run."""

from __future__ import annotations

import numpy as np

import unity
from unity.ir.transform import PassContext, Sequential
from unity.relax import BlockBuilder, TensorStructInfo, TupleGetItem, Var, VirtualMachine, op
from unity.relax.transform import (
    BindParams, CanonicalizeBindings, DeadCodeElimination, DecomposeOpsForInference,
    EliminateCommonSubexpr, FoldConstant,
)  # fmt: skip
from unity.instrument import WellFormedInstrument

RNG = np.random.default_rng(5)
C = 4
WEIGHTS = {
    "w": RNG.standard_normal((C, C, 3, 3)).astype("float32") * 0.2,
    "gamma": RNG.standard_normal(C).astype("float32"),
    "beta": RNG.standard_normal(C).astype("float32"),
    "mean": RNG.standard_normal(C).astype("float32"),
    "var": RNG.random(C).astype("float32") + 0.5,
}


def _net():
    x = Var("x", TensorStructInfo(("n", C, 6, 6), "float32"))
    w = Var("w", TensorStructInfo((C, C, 3, 3), "float32"))
    stats = [Var(k, TensorStructInfo((C,), "float32")) for k in ("gamma", "beta", "mean", "var")]
    bb = BlockBuilder()
    with bb.function("main", [x, w, *stats]):
        with bb.dataflow():
            conv = bb.emit(op.nn.conv2d(x, w, padding=1))
            bn = bb.emit(op.nn.batch_norm(conv, *stats))
            y = bb.emit(TupleGetItem(bn, 0))
            relu = bb.emit(op.nn.relu(y))
            relu2 = bb.emit(op.nn.relu(y))  # a repeat for CSE
            gv = bb.emit_output(op.add(op.add(relu, relu2), x))
        bb.emit_func_output(gv)
    return bb.get()


def test_passes_keep_compiled_results_on_a_conv_bn_relu_add_net():
    mod = _net()
    pipeline = Sequential([
        BindParams("main", WEIGHTS), DecomposeOpsForInference(), FoldConstant(),
        EliminateCommonSubexpr(), CanonicalizeBindings(), DeadCodeElimination(),
    ])  # fmt: skip
    with PassContext(instruments=[WellFormedInstrument()]):
        optimized = pipeline(mod)
    ops = [b.value.op.name for b in optimized["main"].body.blocks[0].bindings]
    assert ops == ["relax.nn.conv2d", "relax.multiply", "relax.add", "relax.nn.relu",
                   "relax.add", "relax.add"]  # fmt: skip
    x = RNG.standard_normal((2, C, 6, 6)).astype("float32")
    vm_before = VirtualMachine(unity.compile(mod, "llvm"), unity.cpu())
    vm_after = VirtualMachine(unity.compile(optimized, "llvm"), unity.cpu())
    expected = vm_before["main"](x, *WEIGHTS.values()).numpy()
    np.testing.assert_allclose(vm_after["main"](x).numpy(), expected, rtol=1e-4, atol=1e-5)
