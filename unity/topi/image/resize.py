"""`resize2d`: nearest, (bi)linear and (bi)cubic image resizing with ONNX's coordinate
transformation and rounding modes, in any layout with "H" and "W" letters.

Example:
    >>> from unity import te
    >>> x = te.placeholder((1, 3, 4, 4), name="x")
    >>> [d.value for d in resize2d(x, (8, 6)).shape]
    [1, 3, 8, 6]
"""

from __future__ import annotations

from collections.abc import Sequence

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import ExprLike, PrimExpr, const
from unity.topi.nn.layout import axis_of

_COORDS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
           "tf_half_pixel_for_nn", "half_pixel_symmetric")  # fmt: skip
_ROUNDING = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "round")
_METHODS = ("nearest_neighbor", "linear", "cubic")


def _source_coord(x: PrimExpr, size_in: PrimExpr, size_out: PrimExpr, scale: PrimExpr,
                  mode: str) -> PrimExpr:  # fmt: skip
    """The input coordinate (float) that output coordinate `x` maps to."""
    f = x.dtype
    half = const(0.5, f)
    if mode == "half_pixel":
        return (x + half) / scale - half
    if mode == "pytorch_half_pixel":
        return tir.select(size_out > const(1, f), (x + half) / scale - half, const(0.0, f))
    if mode == "align_corners":
        ratio = (size_in - const(1, f)) / tir.max(size_out - const(1, f), const(1, f))
        return tir.select(size_out > const(1, f), x * ratio, const(0.0, f))
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + half) / scale
    adj = size_out / (scale * size_in)  # half_pixel_symmetric
    offset = size_in * half * (const(1, f) - adj)
    return offset + (x + half) / scale - half


def _round(v: PrimExpr, rounding: str) -> PrimExpr:
    half = const(0.5, v.dtype)
    if rounding == "round_prefer_floor":
        return tir.ceil(v - half)
    if rounding in ("round_prefer_ceil", "round"):
        return tir.floor(v + half)
    return tir.floor(v) if rounding == "floor" else tir.ceil(v)


def _cubic_weights(t: PrimExpr, a: float) -> list[PrimExpr]:
    f = t.dtype
    one, two = const(1, f), const(2, f)
    A = const(a, f)

    def outer(d: PrimExpr) -> PrimExpr:  # 1 < |d| < 2
        return ((A * d - const(5 * a, f)) * d + const(8 * a, f)) * d - const(4 * a, f)

    def inner(d: PrimExpr) -> PrimExpr:  # |d| <= 1
        return ((A + two) * d - (A + const(3, f))) * d * d + one

    return [outer(t + one), inner(t), inner(one - t), outer(two - t)]


Taps = list[tuple[PrimExpr, PrimExpr]]
"""(clamped integer index, weight) pairs along one axis."""


def _taps(coord: PrimExpr, size: PrimExpr, method: str, rounding: str, cubic_alpha: float,
          cubic_exclude: bool) -> Taps:  # fmt: skip
    f, last = coord.dtype, size - 1

    def clamp(i: PrimExpr) -> PrimExpr:
        return tir.max(tir.min(i, last), const(0, i.dtype))

    if method == "nearest_neighbor":
        return [(clamp(_round(coord, rounding).astype(size.dtype)), const(1.0, f))]
    base = tir.floor(coord)
    t = coord - base
    start = base.astype(size.dtype)
    if method == "linear":
        return [(clamp(start), const(1.0, f) - t), (clamp(start + 1), t)]
    weights = _cubic_weights(t, cubic_alpha)
    idx = [start + k for k in (-1, 0, 1, 2)]
    if cubic_exclude:
        inside = [tir.logical_and(i >= 0, i <= last) for i in idx]
        weights = [tir.select(c, w, const(0.0, f)) for c, w in zip(inside, weights, strict=True)]
        total = weights[0] + weights[1] + weights[2] + weights[3]
        weights = [w / total for w in weights]
    return [(clamp(i), w) for i, w in zip(idx, weights, strict=True)]


def resize2d(
    data: Tensor, size: Sequence[ExprLike], layout: str = "NCHW", method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel", rounding_method: str = "round_prefer_floor",
    cubic_alpha: float = -0.75, cubic_exclude: bool = False,
    scales: Sequence[float] | None = None, out_dtype: str | None = None,
) -> Tensor:  # fmt: skip
    """Resize the H and W axes of `data` to `size` = (out_h, out_w).

    Args:
        data: the image batch.
        size: the output height and width (may be symbolic).
        layout: "NCHW", "NHWC"...
        method: "nearest_neighbor", "linear" or "cubic".
        coordinate_transformation_mode: how an output pixel maps to input coordinates (ONNX's).
        rounding_method: for nearest: "round_prefer_floor", "round_prefer_ceil", "floor", "ceil".
        cubic_alpha: the cubic kernel's `A` (-0.75 as ONNX; PyTorch uses -0.5).
        cubic_exclude: zero the cubic taps outside the image and renormalize.
        scales: (h, w) scale factors to use instead of `out / in` (ONNX `scales` input).
        out_dtype: the result dtype (default: the input's).

    Raises:
        ValueError: an unknown method or mode.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 4, 4, 2), name="x")
        >>> resize2d(x, (2, 2), "NHWC", "nearest_neighbor", "asymmetric").shape[1].value
        2
    """
    if method not in _METHODS:
        raise ValueError(f"resize2d: method {method!r} is not one of {_METHODS}")
    if coordinate_transformation_mode not in _COORDS:
        raise ValueError(
            f"resize2d: coordinate mode {coordinate_transformation_mode!r} is not one of {_COORDS}"
        )
    if rounding_method not in _ROUNDING:
        raise ValueError(f"resize2d: rounding {rounding_method!r} is not one of {_ROUNDING}")
    axes = (axis_of(layout, "H"), axis_of(layout, "W"))
    shape = list(data.shape)
    for a, s in zip(axes, size, strict=True):
        shape[a] = const(s, data.shape[a].dtype) if isinstance(s, int) else const(s)
    dtype = out_dtype or data.dtype
    f = "float64" if data.dtype == "float64" else "float32"

    def axis_taps(i: tuple[PrimExpr, ...], k: int) -> Taps:
        a = axes[k]
        size_in, size_out = data.shape[a].astype(f), shape[a].astype(f)
        scale = const(scales[k], f) if scales is not None else size_out / size_in
        coord = _source_coord(
            i[a].astype(f), size_in, size_out, scale, coordinate_transformation_mode
        )
        return _taps(coord, data.shape[a], method, rounding_method, cubic_alpha, cubic_exclude)

    def body(*i: PrimExpr) -> PrimExpr:
        ty, tx = axis_taps(i, 0), axis_taps(i, 1)
        total: PrimExpr | None = None
        for iy, wy in ty:
            for ix, wx in tx:
                src = list(i)
                src[axes[0]], src[axes[1]] = iy, ix
                term = data[tuple(src)].astype(f) * (wy * wx)
                total = term if total is None else total + term
        assert total is not None
        return _to(total, dtype, method)

    return te.compute(shape, body, name="T_resize2d")


def _to(value: PrimExpr, dtype: str, method: str) -> PrimExpr:
    if dtype.startswith(("float", "bfloat")) or method == "nearest_neighbor":
        return value.astype(dtype)
    return tir.round(value).astype(dtype)  # integer images round to nearest
