"""Signal processing on TE: the discrete Fourier transform (`dft`), the short-time Fourier
transform (`stft`) and the mel filter bank (`mel_weight_matrix`), with ONNX semantics.

Complex values are a trailing dimension of 2 (real, imaginary); a real signal has a
trailing dimension of 1.  The transforms are direct O(n^2) sums against a twiddle table
of `length` entries, computed once per call in float64 (exact to the last bit of the
accumulation dtype, so `sin(pi)` is 0 rather than float32's -8.7e-8).

Example:
    >>> from unity import te
    >>> x = te.placeholder((3, 8, 1), name="x")
    >>> [d.value for d in dft(x, axis=1, length=8, onesided=True).shape]
    [3, 5, 2]
"""

from __future__ import annotations

import math

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.utils import const_int

_ANGLE_DTYPE = "float64"
"""Twiddle angles and their cos/sin are computed in double precision."""


def _accum_dtype(dtype: str) -> str:
    return "float64" if dtype == "float64" else "float32"


def dft_bins(length: int, inverse: bool, onesided: bool) -> int:
    """The size of the transformed axis: `length`, or `length // 2 + 1` for a forward onesided DFT.

    An inverse onesided DFT (ONNX's irfft) returns `length` real samples.

    Example:
        >>> dft_bins(10, inverse=False, onesided=True), dft_bins(10, inverse=True, onesided=True)
        (6, 10)
    """
    return length // 2 + 1 if onesided and not inverse else length


def _twiddle(length: int, dtype: str) -> Tensor:
    """`table[r, 0] = cos(2 pi r / length)`, `table[r, 1] = sin(2 pi r / length)`."""

    def body(r: PrimExpr, c: PrimExpr) -> PrimExpr:
        angle = r.astype(_ANGLE_DTYPE) * const(2.0 * math.pi / length, _ANGLE_DTYPE)
        value = tir.select(tir.eq(c, 0), tir.cos(angle), tir.sin(angle))
        return value.astype(dtype)

    return te.compute((length, 2), body, name="T_dft_twiddle")


def dft(
    x: Tensor, axis: int, length: int, inverse: bool = False, onesided: bool = False
) -> Tensor:
    """The DFT of `x` along `axis` over `length` points (ONNX `DFT` semantics).

    `x` is real (trailing dim 1) or complex (trailing dim 2).  The signal is zero padded or
    truncated to `length`.  A forward transform computes ``sum_n x[n] exp(-2 pi i k n / L)``;
    an inverse one uses ``+`` and divides by `length`.  A forward `onesided` transform keeps
    the first ``length // 2 + 1`` bins; an inverse `onesided` one (irfft) reads a half
    spectrum and returns `length` real samples (trailing dim 1).

    Raises:
        ValueError: a bad axis, length or trailing dim, or an irfft of a real input.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((4, 2), name="x")
        >>> y = dft(x, axis=0, length=6, inverse=True)
        >>> [d.value for d in y.shape], y.dtype
        ([6, 2], 'float32')
    """
    _check_signal(x, axis, length, "dft")
    irfft = inverse and onesided
    if irfft and const_int(x.shape[-1]) != 2:
        msg = "dft: an inverse onesided DFT (irfft) needs a complex input (trailing dim 2)"
        raise ValueError(msg)
    acc = _accum_dtype(x.dtype)
    table = _twiddle(length, acc)
    size = const_int(x.shape[axis])
    assert size is not None  # checked by _check_signal
    terms = min(size, length // 2 + 1 if irfft else length)
    n = te.reduce_axis((0, terms), name="n")
    out_shape = [*x.shape[:-1], 1 if irfft else 2]
    out_shape[axis] = dft_bins(length, inverse, onesided)
    complex_in = const_int(x.shape[-1]) == 2

    def body(*i: PrimExpr) -> PrimExpr:
        k, c = i[axis], i[-1]
        at = [*i[:-1]]
        at[axis] = n.var
        re = x[(*at, 0)].astype(acc)
        im = x[(*at, 1)].astype(acc) if complex_in else None
        r = _twiddle_index(k, n.var, length)
        real, imag = _rotate(re, im, table[r, 0], table[r, 1], inverse)
        value = real if irfft else tir.select(tir.eq(c, 0), real, imag)
        if irfft:
            value = value * _irfft_weight(n.var, length, acc)
        elif inverse:
            value = value * const(1.0 / length, acc)
        return te.sum(value, axis=n)

    out = te.compute(out_shape, body, name="T_dft")
    if out.dtype == x.dtype:
        return out
    return te.compute(out.shape, lambda *i: out[i].astype(x.dtype), name="T_dft_cast")


def _twiddle_index(k: PrimExpr, n: PrimExpr, length: int) -> PrimExpr:
    """``(k * n) % length``, the product in int64 when it could overflow int32."""
    if (length - 1) ** 2 < 2**31:
        return tir.floormod(k * n, length)
    return tir.floormod(k.astype("int64") * n.astype("int64"), length).astype(k.dtype)


def _rotate(
    re: PrimExpr, im: PrimExpr | None, cos: PrimExpr, sin: PrimExpr, inverse: bool
) -> tuple[PrimExpr, PrimExpr]:
    """``(re + i im) * (cos -+ i sin)``: `-` forward, `+` inverse; `im` None is a real input."""
    real_sin, imag_sin = (-sin, sin) if inverse else (sin, -sin)
    if im is None:
        return re * cos, re * imag_sin
    return re * cos + im * real_sin, im * cos + re * imag_sin


def _irfft_weight(k: PrimExpr, length: int, dtype: str) -> PrimExpr:
    """Bin `k` of a half spectrum stands for itself and its mirror `length - k`, except the
    bins that are their own mirror (0, and `length / 2` for an even length)."""
    alone = tir.eq(k, 0)
    if length % 2 == 0:
        alone = tir.logical_or(alone, tir.eq(k, length // 2))
    return tir.select(alone, const(1.0 / length, dtype), const(2.0 / length, dtype))


def _check_signal(x: Tensor, axis: int, length: int, what: str) -> None:
    if x.ndim < 2 or const_int(x.shape[-1]) not in (1, 2):
        raise ValueError(f"{what}: the signal needs a trailing dim of 1 (real) or 2 (complex)")
    if not 0 <= axis < x.ndim - 1:
        raise ValueError(f"{what}: axis {axis} is not a signal axis of a rank-{x.ndim} tensor")
    if const_int(x.shape[axis]) is None:
        raise ValueError(f"{what}: the transformed axis {axis} must have a constant size")
    if length < 1:
        raise ValueError(f"{what}: the length must be positive, got {length}")


def stft(
    x: Tensor,
    window: Tensor | None = None,
    *,
    frame_step: int,
    frame_length: int,
    onesided: bool = True,
) -> Tensor:
    """The short-time Fourier transform of signals `x` ``[batch, samples, 1 or 2]`` (ONNX `STFT`).

    Frame `f` starts at sample ``f * frame_step``; it is multiplied by `window` (length
    `frame_length`; None: all ones) and transformed with a `frame_length`-point DFT.  The result is
    ``[batch, frames, bins, 2]`` with ``frames = 1 + (samples - frame_length) // frame_step``.

    Raises:
        ValueError: a bad signal rank, step, or frame length, or a window of another length.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 128, 1), name="x")
        >>> [d.value for d in stft(x, frame_step=8, frame_length=16).shape]
        [1, 15, 9, 2]
    """
    samples = const_int(x.shape[1]) if x.ndim == 3 else None
    if samples is None or const_int(x.shape[2]) not in (1, 2):
        raise ValueError("stft: the signal must be [batch, samples, 1 or 2] with constant samples")
    if frame_step < 1 or not 1 <= frame_length <= samples:
        msg = (f"stft: needs 1 <= frame_length <= {samples} and frame_step >= 1, "
               f"got {frame_length}, {frame_step}")
        raise ValueError(msg)
    if window is not None and (window.ndim != 1 or const_int(window.shape[0]) != frame_length):
        raise ValueError(f"stft: the window must be a vector of length {frame_length}")
    frames = 1 + (samples - frame_length) // frame_step

    def frame(b: PrimExpr, f: PrimExpr, n: PrimExpr, c: PrimExpr) -> PrimExpr:
        value = x[b, f * frame_step + n, c]
        return value if window is None else value * window[n].astype(x.dtype)

    framed = te.compute((x.shape[0], frames, frame_length, x.shape[2]), frame, name="T_stft_frames")
    return dft(framed, axis=2, length=frame_length, onesided=onesided)


def _hertz_to_mel(hertz: PrimExpr) -> PrimExpr:
    ratio = hertz / const(700.0, _ANGLE_DTYPE)
    return const(2595.0, _ANGLE_DTYPE) * tir.log(ratio + 1.0) / math.log(10)


def _mel_to_hertz(mel: PrimExpr) -> PrimExpr:
    return const(700.0, _ANGLE_DTYPE) * (tir.exp(mel / 2595.0 * math.log(10)) - 1.0)


def mel_weight_matrix(
    sample_rate: Tensor,
    lower_edge_hertz: Tensor,
    upper_edge_hertz: Tensor,
    num_mel_bins: int,
    dft_length: int,
    dtype: str = "float32",
) -> Tensor:
    """Triangular mel filters ``[dft_length // 2 + 1, num_mel_bins]`` (ONNX `MelWeightMatrix`).

    The three scalars are read at run time.  Filter `i` rises from spectrum bin ``b[i]`` to
    ``b[i + 1]`` and falls to ``b[i + 2]``, where the ``num_mel_bins + 2`` edges `b` are
    evenly spaced on the mel scale (by ``1 / (num_mel_bins + 2)`` of the range, as ONNX
    specifies) and mapped to bins by ``floor((dft_length + 1) * hertz / sample_rate)``.

    Raises:
        ValueError: a non-positive number of bins or DFT length, or non-scalar inputs.

    Example:
        >>> from unity import te
        >>> rate, lo, hi = (te.placeholder((), name=n) for n in ("rate", "lo", "hi"))
        >>> [d.value for d in mel_weight_matrix(rate, lo, hi, 8, 16).shape]
        [9, 8]
    """
    if num_mel_bins < 1 or dft_length < 1:
        msg = f"mel_weight_matrix: needs positive sizes, got {num_mel_bins}, {dft_length}"
        raise ValueError(msg)
    if any(t.ndim != 0 for t in (sample_rate, lower_edge_hertz, upper_edge_hertz)):
        raise ValueError("mel_weight_matrix: sample_rate and the edges must be scalars")
    low = _hertz_to_mel(lower_edge_hertz[()].astype(_ANGLE_DTYPE))
    high = _hertz_to_mel(upper_edge_hertz[()].astype(_ANGLE_DTYPE))
    step = (high - low) / float(num_mel_bins + 2)
    rate = sample_rate[()].astype(_ANGLE_DTYPE)

    def edge(m: PrimExpr) -> PrimExpr:
        hertz = _mel_to_hertz(m.astype(_ANGLE_DTYPE) * step + low)
        return tir.floor(float(dft_length + 1) * hertz / rate)

    def body(j: PrimExpr, i: PrimExpr) -> PrimExpr:
        left, center, right = edge(i), edge(i + 1), edge(i + 2)
        at = j.astype(_ANGLE_DTYPE)
        falling = (right - at) / (right - center)
        one = const(1.0, _ANGLE_DTYPE)
        rising = tir.select(tir.eq(left, center), one, (at - left) / (center - left))
        in_fall = tir.logical_and(center <= at, at < right)
        in_rise = tir.logical_and(left <= at, at <= center)
        value = tir.select(in_fall, falling, tir.select(in_rise, rising, const(0.0, _ANGLE_DTYPE)))
        return value.astype(dtype)

    return te.compute((dft_length // 2 + 1, num_mel_bins), body, name="T_mel_weight_matrix")
