"""RNN, GRU and LSTM over a symbolic sequence length and batch, against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import unity
from unity import relax
from unity.relax.frontend.onnx import from_onnx
from unity.relax.frontend.onnx.errors import OnnxImportError
from unity.runtime.cuda.device_api import use_driver
from unity.runtime.cuda.emulated import EmulatedDriver

from .onnx_helpers import FLOAT, model, run_ort, run_unity, tensor

INT32 = TensorProto.INT32

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _layer(kind: str, hidden: int = 16, inputs: int = 8, direction: str = "forward",
           **attrs: object) -> object:  # fmt: skip
    """One layer over x (seq, batch, inputs), both dims symbolic, with a bias and every
    output (Y, Y_h and, for an LSTM, Y_c)."""
    dirs, gates = (2 if direction == "bidirectional" else 1), _GATES[kind]
    rng = np.random.default_rng(hidden)
    weights = {
        "W": rng.standard_normal((dirs, gates * hidden, inputs)).astype("float32") * 0.3,
        "R": rng.standard_normal((dirs, gates * hidden, hidden)).astype("float32") * 0.3,
        "B": rng.standard_normal((dirs, 2 * gates * hidden)).astype("float32") * 0.1,
    }
    outs = ["Y", "Y_h"] + (["Y_c"] if kind == "LSTM" else [])
    node = helper.make_node(kind, ["x", "W", "R", "B"], outs, hidden_size=hidden,
                            direction=direction, **attrs)  # fmt: skip
    shapes = {"Y": ["seq", dirs, "batch", hidden], "Y_h": [dirs, "batch", hidden],
              "Y_c": [dirs, "batch", hidden]}  # fmt: skip
    return model([node], [tensor("x", FLOAT, ["seq", "batch", inputs])],
                 [tensor(o, FLOAT, shapes[o]) for o in outs], weights)  # fmt: skip


@pytest.mark.parametrize("kind,direction,attrs", [
    ("LSTM", "forward", {}),
    ("LSTM", "bidirectional", {"clip": 2.0}),
    ("GRU", "reverse", {}),
    ("GRU", "forward", {"linear_before_reset": 1}),
    ("RNN", "bidirectional", {"activations": ["Relu", "Tanh"]}),
])  # fmt: skip
def test_a_layer_runs_any_sequence_length_and_batch(kind, direction, attrs):
    proto = _layer(kind, direction=direction, **attrs)
    mod = from_onnx(proto)
    for seq, batch in ((5, 2), (1, 3), (12, 1)):
        x = np.random.default_rng(seq).standard_normal((seq, batch, 8)).astype("float32")
        for got, want in zip(run_unity(mod, x), run_ort(proto, {"x": x}), strict=True):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_the_layer_is_one_kernel_call_per_direction():
    mod = from_onnx(_layer("LSTM", direction="bidirectional"))
    text = mod.script()
    assert text.count("R.nn.recurrent(") == 2
    assert "R.matmul" in text  # the input projection of all steps: one matmul each


def test_a_symbolic_sequence_runs_on_the_emulated_gpu():
    proto = _layer("GRU", hidden=8, inputs=4)
    ex = unity.compile(from_onnx(proto), target="cuda")
    x = np.random.default_rng(0).standard_normal((3, 2, 4)).astype("float32")
    with use_driver(EmulatedDriver()):
        out = relax.VirtualMachine(ex, unity.cuda())["main"](x)
        got = [o.numpy() for o in out]
    for g, want in zip(got, run_ort(proto, {"x": x}), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)


def test_an_unknown_activation_is_named():
    with pytest.raises(OnnxImportError, match="has no activation 'Gelu'"):
        from_onnx(_layer("RNN", activations=["Gelu"]))


@pytest.mark.parametrize("kind,direction", [("LSTM", "bidirectional"), ("GRU", "reverse"),
                                            ("RNN", "forward")])
def test_rows_of_other_lengths_match_onnxruntime(kind, direction):
    """sequence_lens as a graph input: each row stops at its own length (Y zero beyond it,
    Y_h / Y_c its last step's)."""
    dirs, gates, hidden = (2 if direction == "bidirectional" else 1), _GATES[kind], 8
    rng = np.random.default_rng(3)
    weights = {
        "W": rng.standard_normal((dirs, gates * hidden, 4)).astype("float32") * 0.3,
        "R": rng.standard_normal((dirs, gates * hidden, hidden)).astype("float32") * 0.3,
    }
    outs = ["Y", "Y_h"] + (["Y_c"] if kind == "LSTM" else [])
    node = helper.make_node(kind, ["x", "W", "R", "", "lens"], outs, hidden_size=hidden,
                            direction=direction)  # fmt: skip
    shapes = {"Y": ["seq", dirs, "batch", hidden], "Y_h": [dirs, "batch", hidden],
              "Y_c": [dirs, "batch", hidden]}  # fmt: skip
    proto = model([node], [tensor("x", FLOAT, ["seq", "batch", 4]),
                           tensor("lens", INT32, ["batch"])],
                  [tensor(o, FLOAT, shapes[o]) for o in outs], weights)  # fmt: skip
    mod = from_onnx(proto)
    x = rng.standard_normal((5, 3, 4)).astype("float32")
    lens = np.array([5, 2, 4], "int32")
    for got, want in zip(run_unity(mod, x, lens), run_ort(proto, {"x": x, "lens": lens}),
                         strict=True):  # fmt: skip
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
