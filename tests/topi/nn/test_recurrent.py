"""The recurrent kernel (`topi.nn.recurrent_kernel`) against a numpy recurrence."""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity.topi.nn.recurrent import GATES, recurrent_kernel, vector_width


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _reference(kind, xw, r, bias, h0, c0, peep, reverse=False, lbr=False, clip=None,
               input_forget=False, act=np.tanh):  # fmt: skip
    """ONNX's formulas, step by step; `r` is ``R^T`` (H, G*H)."""
    seq, _, _ = xw.shape
    hidden = r.shape[0]
    cl = (lambda x: x) if clip is None else (lambda x: np.clip(x, -clip, clip))
    h, c, ys = h0.copy(), c0.copy(), np.zeros((seq, *h0.shape), xw.dtype)
    for s in range(seq):
        t = seq - 1 - s if reverse else s
        if kind == "LSTM":
            i, o, f, g = np.split(xw[t] + h @ r + bias, 4, axis=1)
            i = _sigmoid(cl(i + peep[:hidden] * c))
            f = 1 - i if input_forget else _sigmoid(cl(f + peep[2 * hidden:] * c))
            c = f * c + i * act(cl(g))
            h = _sigmoid(cl(o + peep[hidden:2 * hidden] * c)) * act(c)
        elif kind == "RNN":
            h = act(cl(xw[t] + h @ r + bias))
            c = h
        else:
            xz, xr, xh = np.split(xw[t], 3, axis=1)
            rz, rr, rh = np.split(r, 3, axis=1)
            bz, br, bh = np.split(bias, 3)
            z, rg = _sigmoid(cl(xz + h @ rz + bz)), _sigmoid(cl(xr + h @ rr + br))
            rec = rg * (h @ rh + bh) if lbr else (rg * h) @ rh + bh
            h = (1 - z) * act(cl(xh + rec)) + z * h
            c = h
        ys[t] = h
    return ys, c


def _run(kind, hidden, seq, batch, **kw):
    gates, width = GATES[kind], vector_width(hidden)
    acts = kw.pop("activations", None)
    lib = unity.build(recurrent_kernel(kind, hidden, "float32", activations=acts, **kw))
    rng = np.random.default_rng(hidden + seq)
    shapes = [(seq, batch, gates * hidden), (hidden, gates * hidden), (gates * hidden,),
              (batch, hidden), (batch, hidden), (3 * hidden,)]  # fmt: skip
    xw, r, bias, h0, c0, peep = (rng.standard_normal(s).astype("float32") for s in shapes)
    r /= np.float32(np.sqrt(hidden))  # as trained weights are: sums of order one
    packed = r.reshape(hidden, gates, hidden // width, width).transpose(2, 0, 1, 3).copy()
    y, c = np.zeros((seq, batch, hidden), "float32"), np.zeros((batch, hidden), "float32")
    hn = np.zeros_like(c)
    lib["main"](xw, packed, bias, h0, c0, peep, y, hn, c)
    np.testing.assert_array_equal(hn, y[0 if kw.get("reverse") else -1])
    return (y, c), (xw, r, bias, h0, c0, peep)


@pytest.mark.parametrize("kind,hidden,seq,batch,options", [
    ("LSTM", 32, 7, 2, {}),
    ("LSTM", 20, 5, 3, {"reverse": True}),
    ("LSTM", 16, 4, 2, {"clip": 0.5, "input_forget": True}),
    ("GRU", 16, 6, 2, {}),
    ("GRU", 24, 5, 1, {"linear_before_reset": True, "reverse": True}),
    ("RNN", 5, 4, 3, {"reverse": True}),
    ("RNN", 48, 9, 1, {"clip": 1.0}),
    ("LSTM", 32, 4, 9, {}),  # two groups of 4 rows, then one row
    ("GRU", 16, 3, 6, {"linear_before_reset": True}),
    ("GRU", 16, 3, 5, {}),
    ("RNN", 8, 3, 5, {"reverse": True}),
])  # fmt: skip
def test_the_kernel_runs_the_recurrence_of_each_kind(kind, hidden, seq, batch, options):
    (y, c), args = _run(kind, hidden, seq, batch, **options)
    want_y, want_c = _reference(kind, *args, reverse=options.get("reverse", False),
                                lbr=options.get("linear_before_reset", False),
                                clip=options.get("clip"),
                                input_forget=options.get("input_forget", False))  # fmt: skip
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c, want_c, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("activation,act", [
    (("Affine", 0.5, 0.25), lambda x: 0.5 * x + 0.25),
    (("Softplus", None, None), lambda x: np.logaddexp(0, x)),
])  # fmt: skip
def test_other_activations_replace_the_defaults(activation, act):
    (y, _), args = _run("RNN", 8, 3, 2, activations=[activation])
    want, _ = _reference("RNN", *args, act=act)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="no activation 'Gelu'"):
        recurrent_kernel("RNN", 8, "float32", activations=[("Gelu", None, None)])
    with pytest.raises(ValueError, match="unknown kind 'LSTMX'"):
        recurrent_kernel("LSTMX", 8, "float32")
    with pytest.raises(ValueError, match="3 lanes do not divide 8"):
        recurrent_kernel("RNN", 8, "float32", width=3)


@pytest.mark.parametrize("kind,reverse,lbr", [("LSTM", False, False), ("LSTM", True, False),
                                              ("GRU", True, False), ("RNN", False, True)])
def test_rows_of_other_lengths_stop_at_their_length(kind, reverse, lbr):
    """ONNX's sequence_lens: each row runs its own first inputs (backwards when reverse),
    its outputs beyond them are zero and its last states are its last step's."""
    hidden, seq, gates, width = 16, 6, GATES[kind], vector_width(16)
    lens = np.array([6, 3, 1, 0], "int64")
    rng = np.random.default_rng(1)
    shapes = [(seq, 4, gates * hidden), (hidden, gates * hidden), (gates * hidden,),
              (4, hidden), (4, hidden), (3 * hidden,)]  # fmt: skip
    xw, r, bias, h0, c0, peep = (rng.standard_normal(s).astype("float32") for s in shapes)
    r /= np.float32(4.0)
    packed = r.reshape(hidden, gates, hidden // width, width).transpose(2, 0, 1, 3).copy()
    lib = unity.build(recurrent_kernel(kind, hidden, "float32", reverse=reverse,
                                       linear_before_reset=lbr, lengths=True))  # fmt: skip
    y, hn, c = np.ones((seq, 4, hidden), "float32"), np.zeros((4, hidden), "float32"), None
    c = np.zeros_like(hn)
    lib["main"](xw, packed, bias, h0, c0, peep, lens, y, hn, c)
    for row, length in enumerate(lens):
        one = slice(row, row + 1)
        want_y, want_c = _reference(kind, xw[:length, one], r, bias, h0[one], c0[one], peep,
                                    reverse=reverse, lbr=lbr)  # fmt: skip
        np.testing.assert_allclose(y[:length, row], want_y[:, 0], rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(y[length:, row], 0.0)
        last = want_y[0 if reverse else -1, 0] if length else h0[row]
        np.testing.assert_allclose(hn[row], last, rtol=1e-5, atol=1e-5)
        if kind == "LSTM":
            np.testing.assert_allclose(c[row], want_c[0] if length else c0[row], rtol=1e-5,
                                       atol=1e-5)  # fmt: skip
