"""FoldScaleAxis: per-channel scales and shifts fold into conv/matmul weights; results unchanged."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

import unity
from tests.relax.frontend.onnx_helpers import FLOAT, model, run_ort, tensor
from unity import relax
from unity.ir.instrument_dump import WellFormedInstrument
from unity.ir.module import IRModule
from unity.ir.structural import assert_structural_equal
from unity.ir.transform import PassContext, Sequential
from unity.relax import Call, op
from unity.relax.frontend.onnx import from_onnx
from unity.relax.pipeline import get_pipeline
from unity.relax.transform import FoldScaleAxis, LegalizeOps
from unity.script import ir as I
from unity.script import relax as R
from unity.topi.testing import conv2d_python, to_blocked

RNG = np.random.default_rng(7)


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype("float32")


def _run(mod: IRModule, *inputs: np.ndarray) -> np.ndarray:
    """Compile `mod` as it is (FoldScaleAxis disabled) and run `main` on the CPU."""
    with PassContext(disabled_pass=["FoldScaleAxis"], instruments=[WellFormedInstrument()]):
        ex = unity.compile(mod, target="llvm")
    return relax.VirtualMachine(ex, unity.cpu())["main"](*inputs).numpy()


def _check_numbers(before: IRModule, after: IRModule, *inputs: np.ndarray) -> None:
    """The folded module computes what the original does, up to rounding."""
    np.testing.assert_allclose(_run(after, *inputs), _run(before, *inputs), rtol=1e-5, atol=1e-5)


def _per_channel(vector: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = -1
    return vector.reshape(shape)


def test_docstring_example_folds_bias_scale_and_shift_into_the_conv():
    W, b, s, t = _rand(4, 3, 3, 3), _rand(4, 1, 1), _rand(4, 1, 1), _rand(4, 1, 1)
    W_s, b_s_t = W * s.reshape(4, 1, 1, 1), b * s + t

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 3, 8, 8), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W), padding=1)
                lv1 = R.add(lv, R.const(b))
                lv2 = R.multiply(lv1, R.const(s))
                gv = R.add(lv2, R.const(t))
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 3, 8, 8), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W_s), padding=1)
                gv = R.add(lv, R.const(b_s_t))
                R.output(gv)
            return gv

    After = FoldScaleAxis()(Before)
    assert_structural_equal(After, Expected)
    _check_numbers(Before, After, _rand(1, 3, 8, 8))


def test_nothing_to_do_returns_the_module():
    @I.ir_module
    class NoConv:
        @R.function
        def main(x: R.Tensor(("n", 4), "float32")):
            with R.dataflow():
                lv = R.nn.relu(x)
                gv = R.multiply(lv, R.const(2.0, "float32"))
                R.output(gv)
            return gv

    assert FoldScaleAxis()(NoConv) is NoConv
    assert FoldScaleAxis()(IRModule()).functions == {}


@pytest.mark.parametrize("scale_shape", [(4, 1, 1), (1, 4, 1, 1), (), (1,)])
def test_folds_a_per_channel_scale_into_the_conv_weight(scale_shape: tuple[int, ...]):
    W, s = _rand(4, 3, 3, 3), _rand(*scale_shape)
    W_s = W * _per_channel(np.broadcast_to(s.reshape(-1), (4,)), 4, 0)

    @I.ir_module
    class ScaleLast:
        @R.function
        def main(x: R.Tensor(("n", 3, 6, 6), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W), strides=2)
                gv = R.multiply(lv, R.const(s))
                R.output(gv)
            return gv

    @I.ir_module
    class ScaleFirst:
        @R.function
        def main(x: R.Tensor(("n", 3, 6, 6), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W), strides=2)
                gv = R.multiply(R.const(s), lv)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor(("n", 3, 6, 6), "float32")):
            with R.dataflow():
                gv = R.nn.conv2d(x, R.const(W_s), strides=2)
                R.output(gv)
            return gv

    x = _rand(2, 3, 6, 6)
    for before in (ScaleLast, ScaleFirst):
        after = FoldScaleAxis()(before)
        assert_structural_equal(after, Expected)
        _check_numbers(before, after, x)


def test_folds_the_scale_into_a_conv_bias_and_the_weight():
    W, b, s = _rand(4, 3, 1, 1), _rand(1, 4, 1, 1), _rand(4, 1, 1)
    W_s, b_s = W * s.reshape(4, 1, 1, 1), b * s

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 3, 5, 5), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W))
                lv1 = R.add(R.const(b), lv)
                gv = R.multiply(R.const(s), lv1)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 3, 5, 5), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W_s))
                gv = R.add(lv, R.const(b_s))
                R.output(gv)
            return gv

    After = FoldScaleAxis()(Before)
    assert_structural_equal(After, Expected)
    _check_numbers(Before, After, _rand(1, 3, 5, 5))


def test_folds_weights_bound_to_vars_and_drops_their_bindings():
    W, s = _rand(4, 3, 3, 3), _rand(4, 1, 1)
    W_s = W * s.reshape(4, 1, 1, 1)

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 3, 6, 6), "float32")):
            with R.dataflow():
                w = R.const(W)
                sc = R.const(s)
                lv = R.nn.conv2d(x, w, padding=1)
                gv = R.multiply(lv, sc)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 3, 6, 6), "float32")):
            with R.dataflow():
                gv = R.nn.conv2d(x, R.const(W_s), padding=1)
                R.output(gv)
            return gv

    After = FoldScaleAxis()(Before)
    assert_structural_equal(After, Expected)
    _check_numbers(Before, After, _rand(1, 3, 6, 6))


def test_merges_two_constant_shifts_into_one_add():
    b1, b2 = _rand(4), _rand(3, 1)

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor(("n", 3, 4), "float32")):
            with R.dataflow():
                lv = R.add(x, R.const(b1))
                gv = R.add(R.const(b2), lv)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor(("n", 3, 4), "float32")):
            with R.dataflow():
                gv = R.add(x, R.const(b1 + b2))
                R.output(gv)
            return gv

    After = FoldScaleAxis()(Before)
    assert_structural_equal(After, Expected)
    _check_numbers(Before, After, _rand(2, 3, 4))


def test_keeps_shifts_whose_sum_would_grow_the_tensor():
    b1, b2 = _rand(4), _rand(3, 4)

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                lv = R.add(x, R.const(b1))
                gv = R.add(lv, R.const(b2))
                R.output(gv)
            return gv

    assert FoldScaleAxis()(Before) is Before


@pytest.mark.parametrize("scale_shape", [(16,), (1, 16), (1,)])
def test_folds_a_column_scale_into_the_matmul_weight(scale_shape: tuple[int, ...]):
    W, s = _rand(8, 16), _rand(*scale_shape)
    W_s = W * np.broadcast_to(s.reshape(-1), (16,))

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor(("n", 8), "float32")):
            with R.dataflow():
                lv = R.matmul(x, R.const(W))
                gv = R.multiply(lv, R.const(s))
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor(("n", 8), "float32")):
            with R.dataflow():
                gv = R.matmul(x, R.const(W_s))
                R.output(gv)
            return gv

    After = FoldScaleAxis()(Before)
    assert_structural_equal(After, Expected)
    _check_numbers(Before, After, _rand(3, 8))


def test_keeps_a_matmul_scale_that_varies_along_the_rows():
    W, s = _rand(8, 16), _rand(2, 1)

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 8), "float32")):
            with R.dataflow():
                lv = R.matmul(x, R.const(W))
                gv = R.multiply(lv, R.const(s))
                R.output(gv)
            return gv

    assert FoldScaleAxis()(Before) is Before


@pytest.mark.parametrize("scale_shape", [(4, 6, 1), (1, 1, 6), (2, 4, 1, 1), (1, 1, 4, 1, 1)])
def test_keeps_a_scale_that_is_not_per_output_channel(scale_shape: tuple[int, ...]):
    W, s = _rand(4, 3, 3, 3), _rand(*scale_shape)

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3, 6, 6), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W), padding=1)
                gv = R.multiply(lv, R.const(s))
                R.output(gv)
            return gv

    assert FoldScaleAxis()(Before) is Before


def test_keeps_a_scale_or_weight_that_is_not_constant():
    W, s = _rand(4, 3, 3, 3), _rand(4, 1, 1)

    @I.ir_module
    class VarScale:
        @R.function
        def main(x: R.Tensor((1, 3, 6, 6), "float32"), s: R.Tensor((4, 1, 1), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W))
                gv = R.multiply(lv, s)
                R.output(gv)
            return gv

    @I.ir_module
    class VarWeight:
        @R.function
        def main(x: R.Tensor((1, 3, 6, 6), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, w)
                gv = R.multiply(lv, R.const(s))
                R.output(gv)
            return gv

    for mod in (VarScale, VarWeight):
        assert FoldScaleAxis()(mod) is mod


def test_keeps_intermediates_used_twice():
    W, b, s, t = _rand(4, 3, 3, 3), _rand(4, 1, 1), _rand(4, 1, 1), _rand(4, 1, 1)

    @I.ir_module
    class ConvUsedTwice:
        @R.function
        def main(x: R.Tensor((1, 3, 6, 6), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W))
                lv1 = R.multiply(lv, R.const(s))
                gv = R.add(lv1, lv)
                R.output(gv)
            return gv

    @I.ir_module
    class BiasedUsedTwice:
        @R.function
        def main(x: R.Tensor((1, 3, 6, 6), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W))
                lv1 = R.add(lv, R.const(b))
                lv2 = R.multiply(lv1, R.const(s))
                gv = (lv1, lv2)
                R.output(gv)
            return gv

    @I.ir_module
    class ShiftUsedTwice:
        @R.function
        def main(x: R.Tensor((1, 4, 6, 6), "float32")):
            with R.dataflow():
                lv = R.add(x, R.const(b))
                lv1 = R.add(lv, R.const(t))
                gv = R.multiply(lv1, lv)
                R.output(gv)
            return gv

    for mod in (ConvUsedTwice, BiasedUsedTwice, ShiftUsedTwice):
        assert FoldScaleAxis()(mod) is mod


def test_keeps_convs_in_other_layouts_and_bindings_outside_dataflow():
    W, s = _rand(4, 3, 3, 3), _rand(4)

    @I.ir_module
    class NHWC:
        @R.function
        def main(x: R.Tensor((1, 6, 6, 3), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W), data_layout="NHWC", kernel_layout="OHWI")
                gv = R.multiply(lv, R.const(s))
                R.output(gv)
            return gv

    @I.ir_module
    class NoDataflow:
        @R.function
        def main(x: R.Tensor((1, 3, 6, 6), "float32")):
            lv = R.nn.conv2d(x, R.const(W))
            gv = R.multiply(lv, R.const(s.reshape(4, 1, 1)))
            return gv

    for mod in (NHWC, NoDataflow):
        assert FoldScaleAxis()(mod) is mod


def test_keeps_a_conv_writing_a_blocked_result():
    # (16, 1, 1) broadcasts along the rows of the (1, 1, 16, 16, 16) result, not its channels
    W, s = _rand(16, 3, 3, 3), _rand(16, 1, 1)

    @I.ir_module
    class Blocked:
        @R.function
        def main(x: R.Tensor((1, 3, 16, 16), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W), padding=1, out_layout="NCHW16c")
                gv = R.multiply(lv, R.const(s))
                R.output(gv)
            return gv

    assert FoldScaleAxis()(Blocked) is Blocked
    x = _rand(1, 3, 16, 16)
    want = to_blocked(conv2d_python(x, W, padding=(1, 1, 1, 1)), 16) * s
    ex = unity.compile(Blocked, target="llvm")  # the default pipeline, FoldScaleAxis included
    got = relax.VirtualMachine(ex, unity.cpu())["main"](x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("groups", "out_channels"), [(2, 6), (4, 4)], ids=["grouped", "depthwise"])
def test_folds_into_grouped_and_depthwise_convs(groups: int, out_channels: int):
    W, s = _rand(out_channels, 4 // groups, 3, 3), _rand(out_channels, 1, 1)
    W_s = W * s.reshape(out_channels, 1, 1, 1)

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 4, 6, 6), "float32")):
            with R.dataflow():
                lv = R.nn.conv2d(x, R.const(W), padding=1, groups=groups)
                gv = R.multiply(lv, R.const(s))
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 4, 6, 6), "float32")):
            with R.dataflow():
                gv = R.nn.conv2d(x, R.const(W_s), padding=1, groups=groups)
                R.output(gv)
            return gv

    After = FoldScaleAxis()(Before)
    assert_structural_equal(After, Expected)
    _check_numbers(Before, After, _rand(1, 4, 6, 6))


def _conv_bn_relu(channels: int, out_channels: int, bias: bool) -> onnx.ModelProto:
    """An ONNX Conv (with or without a bias) + BatchNormalization + Relu model."""
    weights = {
        "W": _rand(out_channels, channels, 3, 3), "B": _rand(out_channels),
        "gamma": _rand(out_channels), "beta": _rand(out_channels), "mean": _rand(out_channels),
        "var": RNG.random(out_channels).astype("float32") + 0.5,
    }  # fmt: skip
    if not bias:
        del weights["B"]
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"][: 3 if bias else 2], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["y"]),
    ]
    x, y = tensor("x", FLOAT, [1, channels, 8, 8]), tensor("y", FLOAT, [1, out_channels, 8, 8])
    return model(nodes, [x], [y], weights)


@pytest.mark.parametrize("bias", [True, False], ids=["conv_bias", "no_bias"])
def test_onnx_conv_batch_norm_relu_folds_and_matches_onnxruntime(bias: bool):
    proto = _conv_bn_relu(3, 4, bias)
    mod = from_onnx(proto)
    passes = get_pipeline("default").passes
    graph_passes = passes[: next(i for i, p in enumerate(passes) if isinstance(p, LegalizeOps))]
    optimized = Sequential(graph_passes)(mod)
    bindings = optimized["main"].body.blocks[0].bindings
    calls = [b.value.op for b in bindings if isinstance(b.value, Call)]
    assert calls == [op.nn.conv2d, op.add, op.nn.relu]  # no multiply between the conv and the add

    x = _rand(1, 3, 8, 8)
    expected = run_ort(proto, {"x": x})[0]
    got = relax.VirtualMachine(unity.compile(mod, target="llvm"), unity.cpu())["main"](x).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
