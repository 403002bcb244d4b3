"""Narrow quantized types through `from_onnx`: float8 QDQ (activations quantized at run time,
float8 weights) and blocked int4 weights, against onnxruntime, the ONNX reference
implementation and ml_dtypes' casts."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import unity
from unity import relax
from unity.relax.frontend.onnx import from_onnx

from .onnx_helpers import run_ort

RNG = np.random.default_rng(21)
FORMATS = {  # ml_dtypes type, largest finite value
    "float8_e4m3fn": (ml_dtypes.float8_e4m3fn, 448.0),
    "float8_e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, 240.0),
    "float8_e5m2": (ml_dtypes.float8_e5m2, 57344.0),
    "float8_e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, 57344.0),
}


def _model(nodes, inputs, outputs, inits, opset):
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run(model, **feeds):
    vm = relax.VirtualMachine(unity.compile(from_onnx(model)), unity.cpu())
    return vm["main"](*feeds.values()).numpy()


def _round_trip(fmt: str, saturate: int):
    """x -> QuantizeLinear (scale 1, a zero zero point of `fmt`) -> DequantizeLinear."""
    zero = np.zeros((), FORMATS[fmt][0])
    nodes = [helper.make_node("QuantizeLinear", ["x", "one", "zero"], ["q"], saturate=saturate),
             helper.make_node("DequantizeLinear", ["q", "one", "zero"], ["y"])]  # fmt: skip
    io = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])]
    return _model(nodes, io, out, {"one": np.float32(1.0), "zero": zero}, 21)


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_quantize_to_float8_rounds_as_ml_dtypes_casts(fmt: str, saturate: int):
    """Ties to even, subnormals, the largest values and what overflows (saturated to the
    largest finite value, or inf / NaN), infinities, NaN and zeros (``-0 / 1 + 0`` is +0, as
    in ONNX's reference)."""
    kind, top = FORMATS[fmt]
    grid = np.array(sorted({float(v) for v in np.arange(256, dtype=np.uint8).view(kind).astype(np.float32)
                            if np.isfinite(v)}), np.float32)  # fmt: skip
    mids = (grid[1:] + grid[:-1]) / 2  # the ties
    x = np.concatenate([grid, mids, mids * (1 + 1e-6), [top * 1.01, -top * 1.5, 1e30, np.inf, -np.inf, -0.0, np.nan]])
    x = x.astype(np.float32)
    got = _run(_round_trip(fmt, saturate), x=x)
    y = x / np.float32(1) + np.float32(0)
    with np.errstate(over="ignore", invalid="ignore"):
        want = (np.clip(y, -top, top) if saturate else y).astype(kind).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    numbers = ~np.isnan(want)  # a NaN's sign means nothing
    assert np.array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


@pytest.mark.parametrize("fmt", ["float8_e4m3fn", "float8_e5m2"])
def test_a_float8_qdq_matmul_matches_onnxruntime(fmt: str):
    """Activations quantized at run time, weights stored in float8 (ModelOpt's FP8 QDQ)."""
    kind = FORMATS[fmt][0]
    w = (RNG.standard_normal((32, 8)) * 3).astype(kind)
    zero = np.zeros((), kind)
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zero"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "sx", "zero"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "sw", "zero"], ["wd"]),
             helper.make_node("MatMul", ["xd", "wd"], ["y"])]  # fmt: skip
    io = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])]
    model = _model(nodes, io, out, {"w": w, "sw": np.float32(0.05), "sx": np.float32(0.02), "zero": zero}, 19)
    x = RNG.standard_normal((4, 32)).astype(np.float32)
    (want,) = run_ort(model, {"x": x})
    np.testing.assert_allclose(_run(model, x=x), want, rtol=1e-6, atol=1e-6)


def test_blocked_int4_weights_dequantize_as_the_reference_does():
    """int4 weights in blocks of 32 rows, one scale per block and column (opset 21)."""
    w = RNG.integers(-8, 8, (64, 16)).astype(ml_dtypes.int4)
    scale = (RNG.random((2, 16)) * 0.1 + 0.01).astype(np.float32)
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["wd"], axis=0, block_size=32),
             helper.make_node("MatMul", ["x", "wd"], ["y"])]  # fmt: skip
    io = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16])]
    model = _model(nodes, io, out, {"w": w, "s": scale}, 21)
    x = RNG.standard_normal((2, 64)).astype(np.float32)
    want = x @ (w.astype(np.float32) * np.repeat(scale, 32, axis=0))
    np.testing.assert_allclose(ReferenceEvaluator(model).run(None, {"x": x})[0], want, rtol=1e-6)
    np.testing.assert_allclose(_run(model, x=x), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("kind", "lo", "hi"), [(ml_dtypes.int4, -8, 7), (ml_dtypes.uint4, 0, 15)])
def test_quantize_to_four_bits_saturates_to_their_range(kind, lo, hi):
    zero = np.array(1, kind)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]  # fmt: skip
    io = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [9])]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [9])]
    model = _model(nodes, io, out, {"s": np.float32(0.5), "z": zero}, 21)
    x = np.array([-20, -4.6, -1.25, -0.25, 0, 0.75, 1.25, 3.4, 20], np.float32)
    want = (np.clip(np.rint(x / 0.5) + 1, lo, hi) - 1) * 0.5
    np.testing.assert_array_equal(ReferenceEvaluator(model).run(None, {"x": x})[0], want)
    np.testing.assert_array_equal(_run(model, x=x), want)
