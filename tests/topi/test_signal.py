"""`topi.signal`: the DFT against numpy.fft, STFT and the mel filters against onnx's reference."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from tests.topi.run import check, rand
from unity import te
from unity.topi import signal


def _onnx_reference(op_type: str, inputs: dict[str, np.ndarray], **attrs: int) -> np.ndarray:
    """The output of one ONNX node, by onnx's reference implementation."""
    node = helper.make_node(op_type, list(inputs), ["y"], **attrs)
    return ReferenceEvaluator(node).run(None, inputs)[0]


def _as_complex(x: np.ndarray) -> np.ndarray:
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0]


def _as_pairs(y: np.ndarray) -> np.ndarray:
    return np.stack([y.real, y.imag], axis=-1)


def _fft(x: np.ndarray, axis: int, length: int, inverse: bool, onesided: bool) -> np.ndarray:
    z = _as_complex(x)
    if inverse and onesided:
        return np.fft.irfft(z, n=length, axis=axis)[..., np.newaxis]
    y = (np.fft.ifft if inverse else np.fft.fft)(z, n=length, axis=axis)
    if onesided:
        y = np.take(y, np.arange(length // 2 + 1), axis=axis)
    return _as_pairs(y)


CASES = [  # shape, axis, length, inverse, onesided
    ((3, 8, 1), 1, 8, False, False),  # real forward
    ((3, 8, 2), 1, 8, False, False),  # complex forward
    ((3, 8, 2), 1, 8, True, False),  # inverse
    ((3, 8, 1), 1, 8, False, True),  # rfft
    ((3, 9, 1), 1, 9, False, True),  # rfft of an odd length
    ((2, 6, 2), 1, 10, True, True),  # irfft, even length
    ((2, 6, 2), 1, 9, True, True),  # irfft, odd length (bins past n // 2 are ignored)
    ((2, 3, 2), 1, 10, True, True),  # irfft of a short half spectrum (zero padded)
    ((3, 5, 2), 1, 12, False, False),  # zero padding
    ((3, 12, 1), 1, 5, False, False),  # truncation
    ((3, 12, 2), 1, 7, True, False),  # inverse of a truncated signal
    ((6, 4, 3, 2), 0, 6, False, False),  # a leading axis
    ((2, 5, 3, 1), 1, 8, False, True),  # a middle axis, padded, onesided
]  # fmt: skip


@pytest.mark.parametrize(("shape", "axis", "length", "inverse", "onesided"), CASES)
def test_dft_matches_numpy_fft(shape, axis, length, inverse, onesided):
    x_t = te.placeholder(shape, name="x")
    x = rand(shape)
    out = signal.dft(x_t, axis, length, inverse, onesided)
    want = _fft(x.astype("float64"), axis, length, inverse, onesided)
    assert tuple(d.value for d in out.shape) == want.shape
    check([x_t], out, [x], want, rtol=1e-4, atol=1e-4, build=True)


def test_dft_float64_is_exact_to_double_precision():
    x_t = te.placeholder((2, 30, 2), "float64", name="x")
    x = rand((2, 30, 2), "float64")
    want = _fft(x, 1, 30, inverse=False, onesided=False)
    check([x_t], signal.dft(x_t, 1, 30), [x], want, rtol=1e-10, atol=1e-10, build=True)


def test_dft_float16_accumulates_in_float32():
    x_t = te.placeholder((1, 16, 1), "float16", name="x")
    out = signal.dft(x_t, 1, 16)
    assert out.dtype == "float16"
    x = rand((1, 16, 1), "float16")
    check([x_t], out, [x], _fft(x.astype("float64"), 1, 16, False, False), rtol=1e-2, atol=2e-2)


@pytest.mark.parametrize(
    ("shape", "axis", "length", "inverse", "onesided", "message"),
    [
        ((4, 3), 0, 4, False, False, "trailing dim of 1 \\(real\\) or 2"),
        ((4, 2), 1, 4, False, False, "axis 1 is not a signal axis"),
        ((4, 2), 0, 0, False, False, "length must be positive"),
        ((4, 1), 0, 4, True, True, "irfft\\) needs a complex input"),
    ],
)  # fmt: skip
def test_dft_rejects_bad_arguments(shape, axis, length, inverse, onesided, message):
    with pytest.raises(ValueError, match=message):
        signal.dft(te.placeholder(shape, name="x"), axis, length, inverse, onesided)


@pytest.mark.parametrize(
    ("channels", "step", "length", "windowed", "onesided"),
    [(1, 8, 16, False, True), (1, 5, 16, True, True), (2, 3, 10, True, False)],
)
def test_stft_matches_the_onnx_reference(channels, step, length, windowed, onesided):
    x_t, w_t = te.placeholder((2, 64, channels), name="x"), te.placeholder((length,), name="w")
    x, w = rand((2, 64, channels)), np.hanning(length).astype("float32")
    window = w_t if windowed else None
    out = signal.stft(x_t, window, frame_step=step, frame_length=length, onesided=onesided)
    ones = np.ones(length, "float32")  # no window means a window of ones
    feeds = {"signal": x, "step": np.array(step), "window": w if windowed else ones}
    want = _onnx_reference("STFT", feeds, onesided=int(onesided))
    inputs, arrays = ([x_t, w_t], [x, w]) if windowed else ([x_t], [x])
    check(inputs, out, arrays, want, rtol=1e-4, atol=1e-4, build=True)


def test_stft_rejects_a_window_of_another_length():
    with pytest.raises(ValueError, match="window must be a vector of length 16"):
        signal.stft(te.placeholder((1, 64, 1), name="x"), te.placeholder((8,), name="w"),
                    frame_step=4, frame_length=16)  # fmt: skip


@pytest.mark.parametrize(("bins", "length", "rate", "low", "high"),
                         [(8, 16, 8192, 0.0, 4096.0), (10, 64, 16000, 20.0, 8000.0),
                          (5, 32, 22050, 100.0, 5000.0)])  # fmt: skip
def test_mel_weight_matrix_matches_the_onnx_reference(bins, length, rate, low, high):
    r_t = te.placeholder((), "int32", name="rate")
    lo_t, hi_t = te.placeholder((), name="low"), te.placeholder((), name="high")
    out = signal.mel_weight_matrix(r_t, lo_t, hi_t, bins, length)
    arrays = [np.array(rate, "int32"), np.array(low, "float32"), np.array(high, "float32")]
    sizes = {"bins": np.array(bins, "int32"), "length": np.array(length, "int32")}
    feeds = {**sizes, **dict(zip(("rate", "low", "high"), arrays, strict=True))}
    want = _onnx_reference("MelWeightMatrix", feeds)
    check([r_t, lo_t, hi_t], out, arrays, want, build=True)
