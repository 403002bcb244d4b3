"""`resize` / `resize2d`: nearest, linear and cubic resampling with ONNX's coordinate
transformation and rounding modes, over any axes (`resize2d`: the H and W of a layout).

Example:
    >>> from unity import te
    >>> x = te.placeholder((1, 3, 4, 4), name="x")
    >>> [d.value for d in resize2d(x, (8, 6)).shape]
    [1, 3, 8, 6]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from unity import te, tir
from unity.ir.structural import structural_equal
from unity.te import Tensor
from unity.tir.expr import ExprLike, PrimExpr, const
from unity.topi.image.antialias import antialias_tables
from unity.topi.nn.layout import axis_of

_COORDS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
           "tf_half_pixel_for_nn", "half_pixel_symmetric")  # fmt: skip
_ROUNDING = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "round")
_METHODS = ("nearest_neighbor", "linear", "cubic")


def _source_coord(x: PrimExpr, size_in: PrimExpr, size_out: PrimExpr, scale: PrimExpr,
                  mode: str, out_len: PrimExpr) -> PrimExpr:  # fmt: skip
    """The input coordinate (float) that output coordinate `x` maps to.

    `size_out` is ONNX's "resized length" (`in * scale`, not rounded); `out_len` the
    integer output length.
    """
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
    adj = out_len / size_out  # half_pixel_symmetric: the integer length over in * scale
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


def resize(
    data: Tensor, axes: Sequence[int], sizes: Sequence[ExprLike], method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel", rounding_method: str = "round_prefer_floor",
    cubic_alpha: float = -0.75, cubic_exclude: bool = False,
    scales: Sequence[float] | None = None, roi: Sequence[float] | None = None,
    extrapolation_value: float = 0.0, out_dtype: str | None = None, antialias: bool = False,
) -> Tensor:  # fmt: skip
    """Resize `data` along `axes` to `sizes` (ONNX Resize: separable interpolation).

    Args:
        data: the tensor.
        axes: the resized axes.
        sizes: their output lengths (may be symbolic).
        method: "nearest_neighbor", "linear" or "cubic".
        coordinate_transformation_mode: how an output index maps to an input coordinate
            (ONNX's modes, "tf_crop_and_resize" included).
        rounding_method: for nearest: "round_prefer_floor", "round_prefer_ceil", "floor", "ceil".
        cubic_alpha: the cubic kernel's `A` (-0.75 as ONNX; PyTorch uses -0.5).
        cubic_exclude: zero the cubic taps outside the input and renormalize.
        scales: per-axis scale factors to use instead of `out / in` (ONNX `scales` input).
        roi: for "tf_crop_and_resize": starts then ends, normalized, one pair per axis.
        extrapolation_value: for "tf_crop_and_resize": the value outside the input.
        out_dtype: the result dtype (default: the input's).
        antialias: for linear and cubic, stretch the filter when downscaling (ONNX
            `antialias=1`; see `topi.image.antialias`); needs static scales or lengths.

    Raises:
        ValueError: an unknown method or mode, mismatched lengths, or antialias
            without a static scale.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((2, 4, 3), name="x")
        >>> [d.value for d in resize(x, [1], [8], "nearest_neighbor").shape]
        [2, 8, 3]
    """
    _check(method, coordinate_transformation_mode, rounding_method)
    axes = [a % data.ndim for a in axes]
    if len(sizes) != len(axes) or (scales is not None and len(scales) != len(axes)):
        raise ValueError(f"resize: {len(axes)} axes need as many sizes (and scales)")
    crop = coordinate_transformation_mode == "tf_crop_and_resize"
    if crop and (roi is None or len(roi) != 2 * len(axes)):
        raise ValueError("resize: tf_crop_and_resize needs a roi of 2 values per axis")
    shape = list(data.shape)
    for a, s in zip(axes, sizes, strict=True):
        shape[a] = const(s, data.shape[a].dtype) if isinstance(s, int) else const(s)
    dtype = out_dtype or data.dtype
    f = "float64" if data.dtype == "float64" else "float32"

    def coord_of(o: PrimExpr, k: int) -> PrimExpr:
        a = axes[k]
        size_in = data.shape[a].astype(f)
        # ONNX: with given scales, the "resized length" in the formulas is in * scale
        size_out = size_in * const(scales[k], f) if scales is not None else shape[a].astype(f)
        if crop:
            assert roi is not None
            return _crop_coord(o.astype(f), size_in, size_out, roi[k], roi[k + len(axes)])
        scale = const(scales[k], f) if scales is not None else size_out / size_in
        out_len = shape[a].astype(f)
        return _source_coord(
            o.astype(f), size_in, size_out, scale, coordinate_transformation_mode, out_len
        )

    def coord_fn(k: int) -> Callable[[PrimExpr], PrimExpr]:
        return lambda o: coord_of(o, k)

    def table(k: int, a: int) -> tuple[Tensor, Tensor]:
        if antialias and method != "nearest_neighbor":
            scale = _static_scale(data.shape[a], shape[a], None if scales is None else scales[k])
            return antialias_tables(data.shape[a], shape[a], k, coord_fn(k), method, scale,
                                    cubic_alpha, cubic_exclude)  # fmt: skip
        return _tables(data.shape[a], shape[a], k, coord_fn(k), method, rounding_method,
                       cubic_alpha, cubic_exclude)  # fmt: skip

    moved = [k for k, a in enumerate(axes) if not _is_identity(data.shape[a], shape[a], k, scales, crop,
                                                               coordinate_transformation_mode)]  # fmt: skip
    tables = {k: table(k, axes[k]) for k in moved}
    if method == "nearest_neighbor" or not moved:  # one gather per output element
        total = _gather_all(data, shape, [(axes[k], *tables[k]) for k in moved], f)
    else:
        total = _separable(data, [(axes[k], *tables[k]) for k in _pass_order(data, shape, axes, moved)], f)
    if not crop:
        return te.compute(shape, lambda *i: _to(total[i], dtype, method), name="T_resize")
    outside = [_outside_table(shape[a], data.shape[a], k, coord_fn(k)) for k, a in enumerate(axes)]

    def body(*i: PrimExpr) -> PrimExpr:
        any_out = outside[0][i[axes[0]]]
        for k in range(1, len(axes)):
            any_out = tir.logical_or(any_out, outside[k][i[axes[k]]])
        return tir.select(any_out, const(extrapolation_value, dtype), _to(total[i], dtype, method))

    return te.compute(shape, body, name="T_resize")


Table = tuple[int, Tensor, Tensor]
"""An axis with its per-output-position tap indices and weights, each (length, taps)."""


def _is_identity(size_in: PrimExpr, size_out: PrimExpr, k: int, scales: Sequence[float] | None,
                 crop: bool, mode: str) -> bool:  # fmt: skip
    """True when axis `k` maps every output position to the same input position: equal
    lengths, a scale of 1, and a coordinate mode that maps ``x`` to ``x`` (ONNX lists the
    batch and channel axes of an image with scale 1)."""
    if crop or mode == "tf_half_pixel_for_nn" or (scales is not None and scales[k] != 1.0):
        return False
    if isinstance(size_in, tir.IntImm) and isinstance(size_out, tir.IntImm):
        return size_in.value == size_out.value
    return structural_equal(size_in, size_out, map_free_vars=False)


def _gather_all(data: Tensor, shape: list[PrimExpr], tables: list[Table], f: str) -> Tensor:
    """One stage: every output element sums the products of all axes' taps (nearest: one
    tap each, a gather)."""

    def body(*i: PrimExpr) -> PrimExpr:
        if not tables:
            return data[i].astype(f)
        taps = [te.reduce_axis((0, index.shape[1]), name=f"t{k}") for k, (_, index, _) in enumerate(tables)]
        src = list(i)
        weight: PrimExpr | None = None
        for (a, index, w), t in zip(tables, taps, strict=True):
            src[a] = index[i[a], t.var]
            weight = w[i[a], t.var] if weight is None else weight * w[i[a], t.var]
        return te.sum(data[tuple(src)].astype(f) * weight, axis=taps)

    return te.compute(shape, body, name="T_resize_sum")


def _separable(data: Tensor, tables: list[Table], f: str) -> Tensor:
    """One stage per axis, each interpolating along its axis only: linear over H and W
    reads 2 + 2 elements per output instead of 2 x 2 (and the passes over outer axes
    read whole rows, no gathers)."""
    cur = data
    for n, (a, index, w) in enumerate(tables):
        shape = list(cur.shape)
        shape[a] = index.shape[0]

        def body(*i: PrimExpr, src: Tensor = cur, a: int = a, index: Tensor = index, w: Tensor = w) -> PrimExpr:
            t = te.reduce_axis((0, index.shape[1]), name=f"t{a}")
            at = list(i)
            at[a] = index[i[a], t.var]
            return te.sum(src[tuple(at)].astype(f) * w[i[a], t.var], axis=[t])

        cur = te.compute(shape, body, name=f"T_resize_sum{'' if n == len(tables) - 1 else n}")
    return cur


def _pass_order(data: Tensor, shape: list[PrimExpr], axes: Sequence[int], moved: list[int]) -> list[int]:
    """The separable passes' order: shrinking axes first, then growing ones by their
    ratio, innermost first among equals (its gathers then run over the smaller array)."""

    def ratio(k: int) -> float:
        size_in, size_out = data.shape[axes[k]], shape[axes[k]]
        if isinstance(size_in, tir.IntImm) and isinstance(size_out, tir.IntImm) and size_in.value:
            return size_out.value / size_in.value
        return 1.0

    return sorted(moved, key=lambda k: (ratio(k), -axes[k]))


def _static_scale(size_in: PrimExpr, size_out: PrimExpr, scale: float | None) -> float:
    if scale is not None:
        return scale
    if not (isinstance(size_in, tir.IntImm) and isinstance(size_out, tir.IntImm)):
        raise ValueError(f"resize: antialias needs static lengths, got {size_in} -> {size_out}")
    return size_out.value / size_in.value


def _outside_table(size_out: PrimExpr, size_in: PrimExpr, k: int,
                   coord: Callable[[PrimExpr], PrimExpr]) -> Tensor:  # fmt: skip
    """Per output position of one axis: whether its coordinate falls outside the input."""

    def body(o: PrimExpr) -> PrimExpr:
        c = coord(o)
        return tir.logical_or(c < const(0, c.dtype), c > size_in.astype(c.dtype) - 1)

    return te.compute((size_out,), body, name=f"T_resize_outside{k}")


def _tables(size_in: PrimExpr, size_out: PrimExpr, k: int, coord: Callable[[PrimExpr], PrimExpr],
            method: str, rounding: str, alpha: float, exclude: bool) -> tuple[Tensor, Tensor]:  # fmt: skip
    """Per output position of one axis: its input tap indices and weights, as (len, taps)."""
    count = {"nearest_neighbor": 1, "linear": 2, "cubic": 4}[method]

    def pick(o: PrimExpr, t: PrimExpr, part: int) -> PrimExpr:
        taps = _taps(coord(o), size_in, method, rounding, alpha, exclude)
        out = taps[-1][part]
        for j in range(len(taps) - 2, -1, -1):
            out = tir.select(tir.eq(t, j), taps[j][part], out)
        return out

    index = te.compute((size_out, count), lambda o, t: pick(o, t, 0), name=f"T_resize_index{k}")
    weight = te.compute((size_out, count), lambda o, t: pick(o, t, 1), name=f"T_resize_weight{k}")
    return index, weight


def _crop_coord(x: PrimExpr, size_in: PrimExpr, size_out: PrimExpr, start: float,
                end: float) -> PrimExpr:  # fmt: skip
    f = x.dtype
    span = const(end - start, f) * (size_in - const(1, f))
    stepped = const(start, f) * (size_in - const(1, f)) + x * span / tir.max(
        size_out - const(1, f), const(1, f)
    )
    middle = const(0.5 * (start + end), f) * (size_in - const(1, f))
    return tir.select(size_out > const(1, f), stepped, middle)


def _check(method: str, coord: str, rounding: str) -> None:
    if method not in _METHODS:
        raise ValueError(f"resize: method {method!r} is not one of {_METHODS}")
    if coord not in (*_COORDS, "tf_crop_and_resize"):
        raise ValueError(f"resize: coordinate mode {coord!r} is not one of {_COORDS}")
    if rounding not in _ROUNDING:
        raise ValueError(f"resize: rounding {rounding!r} is not one of {_ROUNDING}")


def resize2d(
    data: Tensor, size: Sequence[ExprLike], layout: str = "NCHW", method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel", rounding_method: str = "round_prefer_floor",
    cubic_alpha: float = -0.75, cubic_exclude: bool = False,
    scales: Sequence[float] | None = None, out_dtype: str | None = None,
) -> Tensor:  # fmt: skip
    """Resize the H and W axes of `data` (in `layout`) to `size` = (out_h, out_w); see `resize`.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 4, 4, 2), name="x")
        >>> resize2d(x, (2, 2), "NHWC", "nearest_neighbor", "asymmetric").shape[1].value
        2
    """
    axes = [axis_of(layout, "H"), axis_of(layout, "W")]
    return resize(data, axes, size, method, coordinate_transformation_mode, rounding_method,
                  cubic_alpha, cubic_exclude, scales, out_dtype=out_dtype)  # fmt: skip


def _to(value: PrimExpr, dtype: str, method: str) -> PrimExpr:
    if dtype.startswith(("float", "bfloat")) or method == "nearest_neighbor":
        return value.astype(dtype)
    return tir.round(value).astype(dtype)  # integer images round to nearest
