"""Signal ops (ONNX `DFT`, `STFT`, `MelWeightMatrix`): builders and struct-info inference.

Complex tensors carry a trailing dimension of 2 (real, imaginary); real signals a trailing
dimension of 1.  Sizes that shape the result (the DFT length, the frame step and length,
the number of mel bins) are attributes.  The legalization rules, to `topi.signal`, live in
`relax.transform.legalize_ops.signal`.

Example:
    >>> from unity import relax
    >>> x = relax.Var("x", relax.TensorStructInfo((1, 10, 10, 1), "float32"))
    >>> call = dft(x, axis=1, length=10, onesided=True)
    >>> dft.get_attr("infer")(call).shape
    (1, 6, 10, 2)
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import RelaxOp, fail, register_op, tensor_arg, with_shape
from unity.relax.struct_info import StructInfo, TensorStructInfo

_FLOATS = ("float16", "float32", "float64")


@dataclass(frozen=True, slots=True)
class DFTAttrs(Attrs):
    """The transformed axis (non-negative), the DFT length, direction and onesidedness.

    Example:
        >>> DFTAttrs(1, 16, inverse=True)
        DFTAttrs(axis=1, length=16, inverse=True, onesided=False)
    """

    axis: int
    length: int
    inverse: bool = False
    onesided: bool = False


def _signal_arg(call: Call, index: int) -> TensorStructInfo:
    x = tensor_arg(call, index, "signal")
    if x.dtype not in _FLOATS:
        raise fail(call, f"expects a float signal, got {x.dtype}")
    if x.shape is not None and (x.ndim < 2 or x.shape[-1] not in (1, 2)):
        msg = f"expects a signal whose last dim is 1 (real) or 2 (complex), got {x.shape}"
        raise fail(call, msg)
    return x


def _infer_dft(call: Call) -> StructInfo:
    x = _signal_arg(call, 0)
    a = call.attrs
    assert isinstance(a, DFTAttrs)
    if a.length < 1:
        raise fail(call, f"needs a positive length, got {a.length}")
    if x.shape is None:
        return TensorStructInfo(None, x.dtype, x.ndim)
    if not 0 <= a.axis < x.ndim - 1:
        raise fail(call, f"has axis {a.axis}, not a signal axis of a rank-{x.ndim} tensor")
    if not x.shape[a.axis].is_number:
        raise fail(call, f"needs a constant size on axis {a.axis}, got {x.shape[a.axis]}")
    irfft = a.inverse and a.onesided
    if irfft and x.shape[-1] != 2:
        raise fail(call, "inverse onesided (irfft) needs a complex input (last dim 2)")
    dims = list(x.shape)
    dims[a.axis] = sympy.Integer(a.length // 2 + 1 if a.onesided and not a.inverse else a.length)
    dims[-1] = sympy.Integer(1 if irfft else 2)
    return with_shape(x, dims)


@register_op("dft", infer=_infer_dft)
def dft(
    op: RelaxOp, x: Expr, axis: int, length: int, inverse: bool = False, onesided: bool = False
) -> Call:
    """The `length`-point DFT of `x` along `axis` (ONNX `DFT`; see `topi.signal.dft`).

    Example:
        >>> dft(x, axis=1, length=10).attrs.length  # doctest: +SKIP
        10
    """
    return Call(op, (x,), DFTAttrs(axis, length, inverse, onesided))


@dataclass(frozen=True, slots=True)
class STFTAttrs(Attrs):
    """Frame step and length, and whether only the first `length // 2 + 1` bins are kept.

    Example:
        >>> STFTAttrs(8, 16)
        STFTAttrs(frame_step=8, frame_length=16, onesided=True)
    """

    frame_step: int
    frame_length: int
    onesided: bool = True


def _infer_stft(call: Call) -> StructInfo:
    x = _signal_arg(call, 0)
    a = call.attrs
    assert isinstance(a, STFTAttrs)
    if len(call.args) > 1:
        w = tensor_arg(call, 1, "window")
        if w.shape is not None and (w.ndim != 1 or w.shape[0] != a.frame_length):
            raise fail(call, f"needs a window of shape ({a.frame_length},), got {w.shape}")
    if x.shape is None:
        return TensorStructInfo(None, x.dtype, 4)
    if x.ndim != 3 or not x.shape[1].is_number:
        msg = f"expects a signal [batch, samples, 1 or 2] with constant samples, got {x.shape}"
        raise fail(call, msg)
    samples = int(x.shape[1])
    if a.frame_step < 1 or not 1 <= a.frame_length <= samples:
        msg = (f"needs 1 <= frame_length <= {samples} and frame_step >= 1, "
               f"got {a.frame_length}, {a.frame_step}")
        raise fail(call, msg)
    frames = 1 + (samples - a.frame_length) // a.frame_step
    bins = a.frame_length // 2 + 1 if a.onesided else a.frame_length
    return with_shape(x, [x.shape[0], frames, bins, 2])


@register_op("stft", infer=_infer_stft)
def stft(
    op: RelaxOp,
    x: Expr,
    window: Expr | None = None,
    *,
    frame_step: int,
    frame_length: int,
    onesided: bool = True,
) -> Call:
    """Windowed DFTs of frames of `x` ``[batch, samples, 1 or 2]`` (ONNX `STFT`).

    Example:
        >>> stft(x, w, frame_step=8, frame_length=16).attrs.frame_length  # doctest: +SKIP
        16
    """
    args = (x,) if window is None else (x, window)
    return Call(op, args, STFTAttrs(frame_step, frame_length, onesided))


@dataclass(frozen=True, slots=True)
class MelAttrs(Attrs):
    """Number of mel bins, DFT length and the result dtype.

    Example:
        >>> MelAttrs(8, 16)
        MelAttrs(num_mel_bins=8, dft_length=16, dtype='float32')
    """

    num_mel_bins: int
    dft_length: int
    dtype: str = "float32"


def _infer_mel(call: Call) -> StructInfo:
    names = ("sample_rate", "lower_edge_hertz", "upper_edge_hertz")
    for index, name in enumerate(names):
        if tensor_arg(call, index, name).ndim not in (0, -1):
            raise fail(call, f"expects a scalar {name}")
    a = call.attrs
    assert isinstance(a, MelAttrs)
    if a.num_mel_bins < 1 or a.dft_length < 1:
        msg = f"needs positive sizes, got num_mel_bins={a.num_mel_bins}, dft_length={a.dft_length}"
        raise fail(call, msg)
    return TensorStructInfo((a.dft_length // 2 + 1, a.num_mel_bins), a.dtype)


@register_op("mel_weight_matrix", infer=_infer_mel)
def mel_weight_matrix(
    op: RelaxOp,
    sample_rate: Expr,
    lower_edge_hertz: Expr,
    upper_edge_hertz: Expr,
    num_mel_bins: int,
    dft_length: int,
    dtype: str = "float32",
) -> Call:
    """Triangular mel filters ``[dft_length // 2 + 1, num_mel_bins]`` (ONNX `MelWeightMatrix`).

    Example:
        >>> mel_weight_matrix(rate, lo, hi, 8, 16).attrs.num_mel_bins  # doctest: +SKIP
        8
    """
    args = (sample_rate, lower_edge_hertz, upper_edge_hertz)
    return Call(op, args, MelAttrs(num_mel_bins, dft_length, dtype))
