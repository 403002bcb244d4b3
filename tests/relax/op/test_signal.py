"""Struct-info inference, script round trip and legalization of the signal ops."""

import pytest

from unity.ir.diagnostics import DiagnosticError
from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, Tuple
from unity.relax.op import signal as S
from unity.relax.transform import LegalizeOps
from unity.script import from_source

from .helpers import infer, shape_of, tensor


@pytest.mark.parametrize(
    ("shape", "axis", "length", "inverse", "onesided", "expected"),
    [
        (("n", 10, 1), 1, 10, False, False, ("n", "10", "2")),
        (("n", 10, 1), 1, 10, False, True, ("n", "6", "2")),
        ((4, 6, "m", 2), 1, 10, True, True, ("4", "10", "m", "1")),  # irfft
        ((7, 3, 2), 0, 4, True, False, ("4", "3", "2")),
    ],
)  # fmt: skip
def test_dft_result_shape(shape, axis, length, inverse, onesided, expected):
    call = S.dft(tensor("x", shape), axis, length, inverse, onesided)
    assert shape_of(call) == expected


@pytest.mark.parametrize(
    ("shape", "axis", "dtype", "message"),
    [
        ((4, 3), 0, "float32", r"dft expects a signal whose last dim is 1 \(real\) or 2"),
        ((4, 2), 1, "float32", "dft has axis 1, not a signal axis of a rank-2 tensor"),
        ((4, 2), 0, "int32", "dft expects a float signal, got int32"),
        (("n", 2), 0, "float32", "dft needs a constant size on axis 0, got n"),
    ],
)  # fmt: skip
def test_dft_rejects_bad_signals(shape, axis, dtype, message):
    with pytest.raises(DiagnosticError, match=message):
        infer(S.dft(tensor("x", shape, dtype), axis, 4))


def test_stft_frames_and_bins():
    x, w = tensor("x", ("b", 128, 1)), tensor("w", (16,))
    assert shape_of(S.stft(x, w, frame_step=8, frame_length=16)) == ("b", "15", "9", "2")
    full = S.stft(x, frame_step=5, frame_length=10, onesided=False)
    assert shape_of(full) == ("b", "24", "10", "2")
    with pytest.raises(DiagnosticError, match=r"stft needs a window of shape \(16,\), got \(8,\)"):
        infer(S.stft(x, tensor("w8", (8,)), frame_step=8, frame_length=16))


def test_mel_weight_matrix_shape_and_dtype():
    rate, low, high = tensor("r", (), "int64"), tensor("lo", ()), tensor("hi", ())
    sinfo = infer(S.mel_weight_matrix(rate, low, high, 8, 16, "float64"))
    assert sinfo.shape == (9, 8) and sinfo.dtype == "float64"
    message = "mel_weight_matrix expects a scalar lower_edge_hertz"
    with pytest.raises(DiagnosticError, match=message):
        infer(S.mel_weight_matrix(rate, tensor("v", (2,)), high, 8, 16))


def _module():
    x, s, w = tensor("x", ("n", 12, 2)), tensor("s", (2, 64, 1)), tensor("w", (16,))
    rate, low, high = tensor("r", (), "int64"), tensor("lo", ()), tensor("hi", ())
    bb = BlockBuilder()
    with bb.function("main", [x, s, w, rate, low, high]):
        with bb.dataflow():
            a = bb.emit(S.dft(x, 1, 16, inverse=True))
            b = bb.emit(S.stft(s, w, frame_step=4, frame_length=16))
            c = bb.emit(S.stft(s, frame_step=4, frame_length=16, onesided=False))
            d = bb.emit(S.mel_weight_matrix(rate, low, high, 8, 32))
            out = bb.emit_output(Tuple((a, b, c, d)))
        bb.emit_func_output(out)
    return bb.get()


def test_signal_ops_round_trip_through_script():
    mod = _module()
    text = mod.script()
    assert "R.stft(s, w, frame_step=4, frame_length=16, onesided=True)" in text
    assert_structural_equal(from_source(text), mod)


def test_signal_ops_legalize_to_call_tir():
    legal = LegalizeOps()(_module())
    names = sorted(gv.name_hint for gv in legal.functions if gv.name_hint != "main")
    assert names == ["dft", "mel_weight_matrix", "stft", "stft1"]
    assert "R.dft" not in legal.script() and "R.call_tir" in legal.script()
