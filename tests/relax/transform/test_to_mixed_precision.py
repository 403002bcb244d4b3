"""ToMixedPrecision: float16 compute with float32 accumulation; results within fp16 tolerance."""

from __future__ import annotations

import numpy as np

from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, Constant, TensorStructInfo, Var, analysis, op
from unity.relax.transform import ToMixedPrecision

from .reference import evaluate


def _params():
    return Var("x", TensorStructInfo((2, 8), "float32")), Var("w", TensorStructInfo((8, 4), "float32"))


def _before():
    x, w = _params()
    bb = BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            lv = bb.emit(op.matmul(x, w))
            lv1 = bb.emit(op.nn.relu(lv))
            gv = bb.emit_output(op.nn.softmax(lv1))
        bb.emit_func_output(gv)
    return bb.get()


def _expected():
    x, w = _params()
    bb = BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            x16 = bb.emit(op.astype(x, "float16"))
            w16 = bb.emit(op.astype(w, "float16"))
            acc = bb.emit(op.matmul(x16, w16, out_dtype="float32"))
            lv = bb.emit(op.astype(acc, "float16"))
            lv1 = bb.emit(op.nn.relu(lv))
            back = bb.emit(op.astype(lv1, "float32"))
            gv = bb.emit_output(op.nn.softmax(back))
        bb.emit_func_output(gv)
    return bb.get()


def test_matmul_runs_in_float16_and_softmax_in_float32():
    before = _before()
    after = ToMixedPrecision()(before)
    assert analysis.well_formed(after)
    assert_structural_equal(after, _expected())
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 8)).astype("float32"), rng.standard_normal((8, 4)).astype("float32")
    np.testing.assert_allclose(evaluate(after, x, w), evaluate(before, x, w), rtol=1e-2, atol=1e-3)
    assert ToMixedPrecision()(after) is after


def test_escaping_vars_keep_their_dtype_and_constants_are_cast_statically():
    x = Var("x", TensorStructInfo((1, 2, 6, 6), "float32"))
    wt = np.random.default_rng(1).standard_normal((3, 2, 3, 3)).astype("float32")
    bias = np.random.default_rng(2).standard_normal((1, 3, 1, 1)).astype("float32")
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            c = bb.emit(op.nn.conv2d(x, Constant(wt), padding=1))
            gv = bb.emit_output(op.add(c, Constant(bias)))
        bb.emit_func_output(gv)
    before = bb.get()
    after = ToMixedPrecision()(before)
    assert analysis.well_formed(after)
    main = after["main"]
    assert main.ret_struct_info.dtype == "float32"
    consts = [a for b in main.body.blocks[0].bindings for a in getattr(b.value, "args", ())
              if isinstance(a, Constant)]  # fmt: skip
    assert consts and all(c.data.dtype == np.float16 for c in consts)
    xv = np.random.default_rng(3).standard_normal((1, 2, 6, 6)).astype("float32")
    from unity.relax.transform import LegalizeOps

    ref = evaluate(LegalizeOps()(before), xv)
    got = evaluate(LegalizeOps()(after), xv)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref, rtol=1e-2, atol=1e-2)


def test_compiled_conv_matmul_net_stays_within_float16_tolerance():
    import unity
    from unity.relax import VirtualMachine

    rng = np.random.default_rng(4)
    x = Var("x", TensorStructInfo(("n", 3, 8, 8), "float32"))
    w = rng.standard_normal((8, 3, 3, 3)).astype("float32")
    w2 = rng.standard_normal((512, 10)).astype("float32") * 0.05
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            c = bb.emit(op.nn.conv2d(x, Constant(w), padding=1))
            r = bb.emit(op.nn.relu(c))
            f = bb.emit(op.reshape(r, (x.struct_info.shape[0], 512)))
            m = bb.emit(op.matmul(f, Constant(w2)))
            gv = bb.emit_output(op.nn.softmax(m))
        bb.emit_func_output(gv)
    mod = bb.get()
    mixed = ToMixedPrecision()(mod)
    ops = [b.value.op.name for b in mixed["main"].body.blocks[0].bindings]
    assert ops.count("relax.astype") == 4  # x in, conv out, matmul out, softmax in
    xv = rng.standard_normal((2, 3, 8, 8)).astype("float32")
    full = VirtualMachine(unity.compile(mod, "llvm"), unity.cpu())["main"](xv).numpy()
    half = VirtualMachine(unity.compile(mixed, "llvm"), unity.cpu())["main"](xv).numpy()
    assert half.dtype == np.float32
    np.testing.assert_allclose(half, full, rtol=1e-2, atol=2e-3)
