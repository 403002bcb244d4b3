"""ONNX signal ops through `from_onnx`: DFT, STFT, MelWeightMatrix and the cosine windows."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import unity
from unity import relax
from unity.relax.expr import Call
from unity.relax.frontend.onnx import ConstantInputRequired, OnnxImportError, from_onnx
from unity.relax.frontend.onnx.ops.signal import cosine_window

from .onnx_helpers import FLOAT, INT64, model, run_unity, tensor

RNG = np.random.default_rng(0)


def _ops(mod: object) -> list[str]:
    func = mod["main"]  # type: ignore[index]
    return [b.value.op.name for blk in func.body.blocks for b in blk.bindings
            if isinstance(b.value, Call) and hasattr(b.value.op, "name")]  # fmt: skip


def _reference(proto: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(o) for o in ReferenceEvaluator(proto).run(None, feeds)]


def _dft_model(
    shape: tuple[int, ...], out_shape: tuple[int, ...], opset: int, inits: dict[str, np.ndarray],
    **attrs: int,
) -> onnx.ModelProto:
    inputs = ["x", "n" if "n" in inits else "", "axis" if "axis" in inits else ""]
    while inputs[-1] == "":
        inputs.pop()
    node = helper.make_node("DFT", inputs, ["y"], name="dft", **attrs)
    x, y = tensor("x", FLOAT, shape), tensor("y", FLOAT, out_shape)
    return model([node], [x], [y], inits, opset=opset)


@pytest.mark.parametrize(
    ("opset", "attrs", "inits", "shape", "out_shape"),
    [  # padded on the last signal axis; an inverse truncated; rfft on axis 0; irfft
        (20, {}, {"n": np.array(12), "axis": np.array(-2)}, (2, 3, 7, 1), (2, 3, 12, 2)),
        (20, {"inverse": 1}, {"n": np.array(4), "axis": np.array(1)}, (2, 7, 3, 2), (2, 4, 3, 2)),
        (17, {"axis": 0, "onesided": 1}, {}, (9, 2, 1), (5, 2, 2)),
        (17, {"axis": 1, "onesided": 1, "inverse": 1}, {"n": np.array(8)}, (2, 5, 2), (2, 8, 1)),
    ],
)  # fmt: skip
def test_dft_runs_a_kernel_matching_the_reference(opset, attrs, inits, shape, out_shape):
    proto = _dft_model(shape, out_shape, opset, inits, **attrs)
    mod = from_onnx(proto)
    assert "relax.dft" in _ops(mod)
    x = RNG.standard_normal(shape).astype("float32")
    (got,) = run_unity(mod, x)
    (want,) = _reference(proto, {"x": x})
    assert got.shape == out_shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_stft_takes_a_window_given_at_run_time():
    node = helper.make_node("STFT", ["signal", "step", "window"], ["y"], name="stft")
    inputs = [tensor("signal", FLOAT, (2, 100, 1)), tensor("window", FLOAT, (16,))]
    output = tensor("y", FLOAT, (2, 22, 9, 2))
    proto = model([node], inputs, [output], {"step": np.array(4)}, opset=17)
    x, w = RNG.standard_normal((2, 100, 1)).astype("float32"), np.hamming(16).astype("float32")
    (got,) = run_unity(from_onnx(proto), x, w)
    (want,) = _reference(proto, {"signal": x, "window": w})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_mel_weight_matrix_reads_rate_and_edges_at_run_time():
    names = ["bins", "n", "rate", "low", "high"]
    node = helper.make_node("MelWeightMatrix", names, ["y"], name="mel")
    inputs = [tensor("rate", INT64, ()), tensor("low", FLOAT, ()), tensor("high", FLOAT, ())]
    inits = {"bins": np.array(12), "n": np.array(64)}
    proto = model([node], inputs, [tensor("y", FLOAT, (33, 12))], inits, opset=17)
    low, high = np.array(30.0, "float32"), np.array(7600.0, "float32")
    feeds = {"rate": np.array(16000), "low": low, "high": high}
    mod = from_onnx(proto)
    assert "relax.mel_weight_matrix" in _ops(mod)
    (got,) = run_unity(mod, *feeds.values())
    np.testing.assert_allclose(got, _reference(proto, feeds)[0], rtol=1e-6, atol=1e-6)


@pytest.mark.filterwarnings("ignore:invalid value encountered")  # the reference's 0 / 0
@pytest.mark.parametrize("op_type", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_cosine_windows_match_the_reference(op_type, periodic):
    double = onnx.TensorProto.DOUBLE
    node = helper.make_node(op_type, ["size"], ["y"], periodic=periodic, output_datatype=double)
    proto = model([node], [tensor("size", INT64, ())], [tensor("y", double, (None,))], opset=17)
    for size in (1, 2, 7, 16):
        want = _reference(proto, {"size": np.array(size)})[0]
        got = cosine_window(op_type, size, bool(periodic), "float64")
        if size == 1 and not periodic:  # the reference divides by size - 1 = 0
            np.testing.assert_array_equal(got, [1.0])
            continue
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_window_of_a_run_time_size_runs_on_the_host_or_asks_for_a_constant():
    node = helper.make_node("HannWindow", ["size"], ["y"], name="hann")
    proto = model([node], [tensor("size", INT64, ())], [tensor("y", FLOAT, (None,))], opset=17)
    vm = relax.VirtualMachine(unity.compile(from_onnx(proto)), unity.cpu())
    for size in (5, 8):
        want = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(size) / size)  # periodic Hann
        np.testing.assert_allclose(vm["main"](np.array(size, "int64")).numpy(), want, atol=1e-6)
    message = 'HannWindow node "hann": input size must be known at import time'
    with pytest.raises(ConstantInputRequired, match=message) as info:
        from_onnx(proto, host_nodes=False)
    assert info.value.input_names == ["size"]


BAD_NODES = [  # op, inputs, attributes, signal shape, initializers, message
    ("DFT", ["x", "", "axis"], {}, (4, 6, 2), {"axis": np.array(-1)},
     'DFT node "bad": axis -1 is not a signal axis of a rank-3 input'),
    ("DFT", ["x"], {"axis": 1, "onesided": 1, "inverse": 1}, (4, 6, 1), {},
     r'DFT node "bad": inverse=1 with onesided=1 \(irfft\) needs a complex input'),
    ("DFT", ["x"], {"axis": 0}, (4, 6, 3), {},
     r'DFT node "bad": expects a signal whose last dim is 1 \(real\) or 2 \(complex\), got'),
    ("STFT", ["x", "step", "", "len"], {}, (1, 32, 1), {"step": np.array(4), "len": np.array(40)},
     'STFT node "bad": needs frame_step >= 1 and 1 <= frame_length <= 32, got 4, 40'),
    ("STFT", ["x", "step", "w", "len"], {}, (1, 32, 1),
     {"step": np.array(4), "w": np.ones(8, "float32"), "len": np.array(16)},
     'STFT node "bad": has frame_length 16 but a window of length 8'),
]  # fmt: skip


@pytest.mark.parametrize(("op_type", "names", "attrs", "shape", "inits", "message"), BAD_NODES)
def test_bad_signal_nodes_fail_naming_the_node(op_type, names, attrs, shape, inits, message):
    node = helper.make_node(op_type, names, ["y"], name="bad", **attrs)
    output = helper.make_tensor_value_info("y", FLOAT, None)  # rank unknown: not a checked model
    tensors = [onnx.numpy_helper.from_array(v, k) for k, v in inits.items()]
    graph = helper.make_graph([node], "bad", [tensor("x", FLOAT, shape)], [output], tensors)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    with pytest.raises(OnnxImportError, match=message):
        from_onnx(proto)
