"""FoldConstant: calls on constants become constants; results unchanged."""

from __future__ import annotations

import numpy as np

from unity import topi
from unity.ir.module import IRModule
from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, Constant, TensorStructInfo, Var, const, op
from unity.relax.transform import FoldConstant

from .reference import evaluate


def _before() -> IRModule:
    x = Var("x", TensorStructInfo((2,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            c = bb.emit(op.add(const([1.0, 2.0]), const([3.0, 4.0])))
            out = bb.emit_output(op.multiply(x, c))
        bb.emit_func_output(out)
    return bb.get()


def _expected() -> IRModule:
    x = Var("x", TensorStructInfo((2,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            c = bb.emit(const([4.0, 6.0]))
            out = bb.emit_output(op.multiply(x, c))
        bb.emit_func_output(out)
    return bb.get()


def test_folds_add_of_two_constants():
    before = _before()
    after = FoldConstant()(before)
    assert_structural_equal(after, _expected())
    x = np.random.default_rng(0).standard_normal(2).astype("float32")
    reference = x * np.float32([4.0, 6.0])
    for mod in (before, after):
        np.testing.assert_allclose(evaluate(mod, x), reference, rtol=1e-6)


def test_nothing_to_fold_returns_the_module():
    after = FoldConstant()(_before())
    assert FoldConstant()(after) is after


def test_folds_chains_reshape_permute_concat_astype():
    x = Var("x", TensorStructInfo((3, 2), "float16"))
    w = np.arange(6, dtype="float32")
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            r = bb.emit(op.reshape(const(w), (2, 3)))
            t = bb.emit(op.permute_dims(r, (1, 0)))
            c = bb.emit(op.concat([t, t], axis=1))
            s = bb.emit(op.strided_slice(c, [1], [0], [2]))
            h = bb.emit(op.astype(s, "float16"))
            out = bb.emit_output(op.add(x, h))
        bb.emit_func_output(out)
    mod = bb.get()
    after = FoldConstant()(mod)
    main = after["main"]
    values = [b.value for b in main.body.blocks[0].bindings]
    assert all(isinstance(v, Constant) for v in values[:5])
    np.testing.assert_array_equal(values[2].data, np.concatenate([w.reshape(2, 3).T] * 2, 1))
    xv = np.ones((3, 2), "float16")
    np.testing.assert_array_equal(evaluate(after, xv), evaluate(mod, xv))


def test_folds_the_pad_of_a_bias_to_whole_channel_blocks():
    """A 24-channel bias padded to two blocks of 16 (`ConvertLayout`) becomes a constant
    (it ran as a kernel on every call: 14 of MobileNet v3-small's 89); `edge` padding
    stays a kernel."""
    x = Var("x", TensorStructInfo((1, 32, 1, 1), "float32"))
    b = np.arange(24, dtype="float32").reshape(1, 24, 1, 1)
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            padded = bb.emit(op.nn.pad(const(b), (0, 0, 0, 8, 0, 0, 0, 0)))
            out = bb.emit_output(op.add(x, padded))
        bb.emit_func_output(out)
    mod = bb.get()
    after = FoldConstant()(mod)
    values = [binding.value for binding in after["main"].body.blocks[0].bindings]
    assert isinstance(values[0], Constant)
    np.testing.assert_array_equal(values[0].data[0, :, 0, 0], [*range(24), *[0] * 8])
    xv = np.ones((1, 32, 1, 1), "float32")
    np.testing.assert_array_equal(evaluate(after, xv)[0, :, 0, 0], [*range(1, 25), *[1] * 8])
    edge = op.nn.pad(const(b), (0, 0, 0, 8, 0, 0, 0, 0), pad_mode="edge")
    assert op.nn.pad.get_attr("fold")(edge, b) is None


def test_folds_call_tir_of_constants_through_the_interpreter():
    x = Var("x", TensorStructInfo((4,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            e = bb.emit_te(topi.exp, const(np.arange(4, dtype="float32")))
            out = bb.emit_output(op.add(x, e))
        bb.emit_func_output(out)
    mod = bb.get()
    after = FoldConstant()(mod)
    folded = after["main"].body.blocks[0].bindings[0].value
    assert isinstance(folded, Constant)
    np.testing.assert_allclose(folded.data, np.exp(np.arange(4, dtype="float32")), rtol=1e-6)


def test_large_results_stay_unfolded():
    x = Var("x", TensorStructInfo((64,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        c = bb.emit(op.exp(const(np.zeros(64, "float32"))))
        bb.emit_func_output(op.add(x, c))
    mod = bb.get()
    assert FoldConstant(max_elements=16, max_same_size_elements=16)(mod) is mod


def test_large_results_no_larger_than_their_constant_inputs_fold():
    w = np.arange(64 * 32, dtype="float32").reshape(64, 32)
    x = Var("x", TensorStructInfo((32, 8), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        t = bb.emit(op.permute_dims(const(w), [1, 0]))  # a transposed weight: folds
        big = bb.emit(op.broadcast_to(const(w), (4, 64, 32)))  # grows the constants: stays
        bb.emit_func_output(op.add(op.sum(big, axis=[0]), op.permute_dims(t, [1, 0])))
    after = FoldConstant(max_elements=16)(bb.get())
    values = [b.value for b in after["main"].body.blocks[0].bindings]
    assert isinstance(values[0], Constant)
    np.testing.assert_array_equal(values[0].data, w.T)
    assert not isinstance(values[1], Constant)


def test_call_tir_with_too_much_work_stays_unfolded():
    x = Var("x", TensorStructInfo((4, 4), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        w = const(np.ones((4, 64), "float32"))
        m = bb.emit_te(topi.matmul, w, const(np.ones((64, 4), "float32")))
        bb.emit_func_output(op.add(x, m))
    mod = bb.get()
    assert FoldConstant(max_interpret_iterations=512)(mod) is mod
    folded = FoldConstant()(mod)["main"].body.blocks[0].bindings[0].value
    np.testing.assert_allclose(folded.data, np.full((4, 4), 64.0, "float32"))


def test_an_index_out_of_range_in_constants_is_an_error_naming_the_op():
    """A gather of a constant table by constant ids past its end: a diagnostic, not a raw
    IndexError from numpy (the op's fold rule) or the interpreter (its call_tir)."""
    import pytest

    from unity.ir.diagnostics import DiagnosticError

    table, ids = const(np.ones((10, 4), "float32")), const(np.array([1, 12], "int64"))
    x = Var("x", TensorStructInfo((2, 4), "float32"))
    for make in (lambda bb: bb.emit(op.take(table, ids, axis=0)), lambda bb: bb.emit_te(topi.take, table, ids)):
        bb = BlockBuilder()
        with bb.function("main", [x]):
            with bb.dataflow():
                out = bb.emit_output(op.add(x, make(bb)))
            bb.emit_func_output(out)
        with pytest.raises(DiagnosticError, match=r"on constants: .*(out of bounds|out of range)"):
            FoldConstant()(bb.get())
