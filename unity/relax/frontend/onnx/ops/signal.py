"""Signal processing: DFT, STFT, MelWeightMatrix and the Hann / Hamming / Blackman windows.

Sizes that shape a result (`dft_length`, `axis`, `frame_step`, `frame_length`,
`num_mel_bins`, a window's `size`) must be known at import time; the signals, an STFT
window and the mel scale's sample rate and edges may come at run time.  A window is a
constant (numpy) once its size is known.

Example:
    >>> sorted(CONVERTERS)
    ['BlackmanWindow', 'DFT', 'HammingWindow', 'HannWindow', 'MelWeightMatrix', 'STFT']
"""

from __future__ import annotations

import numpy as np

from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter
from unity.relax.op import signal as S

_FLOATS = ("float16", "float32", "float64")


def _scalar_int(ctx: Context, value: Value | None, what: str) -> int:
    values = ctx.ints(value, what)
    if len(values) != 1:
        raise ctx.fail(f"expects {what} to be one number, got {values}")
    return values[0]


def _signal(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    shape = ctx.shape(x)
    if ctx.dtype(x) not in _FLOATS:
        raise ctx.fail(f"expects a float signal, got {ctx.dtype(x)}")
    if len(shape) < 2 or shape[-1] not in (1, 2):
        msg = f"expects a signal whose last dim is 1 (real) or 2 (complex), got {list(shape)}"
        raise ctx.fail(msg)
    return x


def _dft_axis(ctx: Context, node: NodeView, ndim: int) -> int:
    if node.opset < 20:
        axis = int(node.attr("axis", 1))
    else:
        axis = -2 if node.input(2) is None else _scalar_int(ctx, node.input(2), "axis")
    if not -ndim <= axis < ndim or axis % ndim == ndim - 1:
        msg = f"axis {axis} is not a signal axis of a rank-{ndim} input (the last dim holds re, im)"
        raise ctx.fail(msg)
    return axis % ndim


def _dft(ctx: Context, node: NodeView) -> Value:
    x = _signal(ctx, node)
    shape = ctx.shape(x)
    axis = _dft_axis(ctx, node, len(shape))
    inverse, onesided = bool(node.attr("inverse", 0)), bool(node.attr("onesided", 0))
    if inverse and onesided and shape[-1] != 2:
        raise ctx.fail("inverse=1 with onesided=1 (irfft) needs a complex input (last dim 2)")
    if not shape[axis].is_number:
        raise ctx.fail(f"needs the size of axis {axis} known at import time, got {shape[axis]}")
    size = int(shape[axis])
    if node.input(1) is not None:
        length = _scalar_int(ctx, node.input(1), "dft_length")
    else:
        length = 2 * (size - 1) if inverse and onesided else size
    if length < 1:
        raise ctx.fail(f"needs a positive dft_length, got {length}")
    return ctx.emit(S.dft(x, axis, length, inverse, onesided))


def _stft(ctx: Context, node: NodeView) -> Value:
    x = _signal(ctx, node)
    shape = ctx.shape(x)
    if len(shape) != 3 or not shape[1].is_number:
        msg = f"expects a signal [batch, samples, 1 or 2] with known samples, got {list(shape)}"
        raise ctx.fail(msg)
    step = _scalar_int(ctx, node.input(1), "frame_step")
    window = node.input(2)
    length = None if node.input(3) is None else _scalar_int(ctx, node.input(3), "frame_length")
    if window is not None:
        wshape = ctx.shape(window)
        if len(wshape) != 1 or not wshape[0].is_number:
            raise ctx.fail(f"expects a window vector of known length, got shape {list(wshape)}")
        if length is not None and length != int(wshape[0]):
            raise ctx.fail(f"has frame_length {length} but a window of length {wshape[0]}")
        length = int(wshape[0])
    length = int(shape[1]) if length is None else length
    if step < 1 or not 1 <= length <= int(shape[1]):
        msg = f"needs frame_step >= 1 and 1 <= frame_length <= {shape[1]}, got {step}, {length}"
        raise ctx.fail(msg)
    w = None if window is None else ctx.expr(window)
    onesided = bool(node.attr("onesided", 1))
    return ctx.emit(S.stft(x, w, frame_step=step, frame_length=length, onesided=onesided))


def _output_dtype(node: NodeView) -> str:
    from unity.relax.frontend.onnx.importer import elem_dtype

    return elem_dtype(node.attr("output_datatype", 1), f'{node.op_type} node "{node.name}" output')


def _mel_weight_matrix(ctx: Context, node: NodeView) -> Value:
    bins = _scalar_int(ctx, node.input(0), "num_mel_bins")
    length = _scalar_int(ctx, node.input(1), "dft_length")
    if bins < 1 or length < 1:
        raise ctx.fail(f"needs positive num_mel_bins and dft_length, got {bins}, {length}")
    scalars = [ctx.expr(node.input(i)) for i in (2, 3, 4)]
    names = ("sample_rate", "lower_edge_hertz", "upper_edge_hertz")
    for value, what in zip(scalars, names, strict=True):
        if ctx.ndim(value) != 0:
            raise ctx.fail(f"expects a scalar {what}, got shape {list(ctx.shape(value))}")
    return ctx.emit(S.mel_weight_matrix(*scalars, bins, length, _output_dtype(node)))


_COSINE_TERMS = {
    "HannWindow": (0.5, -0.5, 0.0),
    "HammingWindow": (25.0 / 46.0, -21.0 / 46.0, 0.0),
    "BlackmanWindow": (0.42, -0.5, 0.08),
}
"""``w[n] = a0 + a1 cos(2 pi n / N) + a2 cos(4 pi n / N)`` for each window."""


def cosine_window(op_type: str, size: int, periodic: bool, dtype: str) -> np.ndarray:
    """The window `op_type` of `size` points; `N` is `size` when periodic, else `size - 1`.

    A symmetric window of one point is ``[1]`` (its `N` would be 0).

    Example:
        >>> cosine_window("HannWindow", 4, periodic=True, dtype="float32").tolist()
        [0.0, 0.5, 1.0, 0.5]
    """
    a0, a1, a2 = _COSINE_TERMS[op_type]
    period = size if periodic else size - 1
    if period == 0:
        return np.ones(size, dtype)
    angle = 2.0 * np.pi * np.arange(size, dtype="float64") / period
    return (a0 + a1 * np.cos(angle) + a2 * np.cos(2.0 * angle)).astype(dtype)


def _window(ctx: Context, node: NodeView) -> Value:
    size = _scalar_int(ctx, node.input(0), "size")
    if size < 0:
        raise ctx.fail(f"needs a size >= 0, got {size}")
    return cosine_window(node.op_type, size, bool(node.attr("periodic", 1)), _output_dtype(node))


CONVERTERS: dict[str, Converter] = {
    "DFT": _dft,
    "STFT": _stft,
    "MelWeightMatrix": _mel_weight_matrix,
    "HannWindow": _window,
    "HammingWindow": _window,
    "BlackmanWindow": _window,
}
