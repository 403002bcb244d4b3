"""Antialiased resize taps (ONNX Resize, `antialias=1`): when downscaling by `s < 1`, the
linear (triangle) or cubic filter is stretched by `1 / s`, so each output reads more inputs.

Along one axis, output `o` maps to the input coordinate `x`; with `b = ceil(x) - 1` and
`r = x - b` in `(0, 1]`, it reads inputs `b + start + t` for `t` in `[0, n)`, with weights
`k(s * (start + t - r))` normalized to sum 1, where `k` is the filter of support `R`
(1 for linear, 2 for cubic), `start = floor(-R / s) + 1` and `n = 2 * (1 - start)`.

Example:
    >>> antialias_taps("linear", 0.5), antialias_taps("cubic", 0.6)
    ((-1, 4), (-3, 8))
"""

from __future__ import annotations

import math
from collections.abc import Callable

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const

_SUPPORT = {"linear": 1.0, "cubic": 2.0}


def antialias_taps(method: str, scale: float) -> tuple[int, int]:
    """The first tap offset and the tap count of the stretched filter for `scale`.

    Upscaling (`scale >= 1`) keeps the plain filter: 2 linear taps, 4 cubic taps.

    Example:
        >>> antialias_taps("cubic", 2.0)
        (-1, 4)
    """
    if method not in _SUPPORT:
        raise ValueError(f"resize: antialias applies to linear and cubic, not {method!r}")
    if not scale > 0:
        raise ValueError(f"resize: antialias needs a positive scale, got {scale}")
    s = min(scale, 1.0)
    start = math.floor(-_SUPPORT[method] / s) + 1
    return start, 2 * (1 - start)


def _filter(d: PrimExpr, method: str, a: float) -> PrimExpr:
    """The filter's value at distance `d` (linear: triangle; cubic: Keys with `A = a`)."""
    f = d.dtype
    x = tir.abs(d)
    zero, one, two = const(0.0, f), const(1.0, f), const(2.0, f)
    if method == "linear":
        return tir.max(one - x, zero)
    A = const(a, f)
    inner = ((A + two) * x - (A + const(3.0, f))) * x * x + one
    outer = ((A * x - const(5 * a, f)) * x + const(8 * a, f)) * x - const(4 * a, f)
    return tir.select(x <= one, inner, tir.select(x < two, outer, zero))


def antialias_tables(
    size_in: PrimExpr, size_out: PrimExpr, k: int, coord: Callable[[PrimExpr], PrimExpr],
    method: str, scale: float, alpha: float, exclude: bool,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """Per output position of one axis: input indices and normalized weights, as (len, taps).

    Args:
        size_in: the input length of the axis.
        size_out: the output length of the axis.
        k: the axis' number among the resized ones (names the tensors).
        coord: maps an output index (float) to its input coordinate.
        method: "linear" or "cubic".
        scale: the axis' (static) scale factor; the filter stretches when it is below 1.
        alpha: the cubic filter's `A`.
        exclude: drop the taps outside the input before normalizing (`exclude_outside`).

    Example:
        >>> coord = lambda o: o.astype("float32") * const(2.0, "float32")
        >>> index, _ = antialias_tables(const(8), const(4), 0, coord, "linear", 0.5, -0.75, False)
        >>> [d.value for d in index.shape]
        [4, 4]
    """
    start, count = antialias_taps(method, scale)
    s = min(scale, 1.0)
    last = size_in - 1

    def base_and_ratio(o: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
        x = coord(o)
        base = tir.ceil(x) - const(1.0, x.dtype)  # ratio in (0, 1]: ties read the left input
        return base.astype(size_in.dtype), x - base

    def raw(o: PrimExpr, t: PrimExpr) -> PrimExpr:
        base, ratio = base_and_ratio(o)
        f = ratio.dtype
        w = _filter(const(s, f) * ((t + start).astype(f) - ratio), method, alpha)
        if not exclude:
            return w
        i = base + start + t
        return tir.select(tir.logical_and(i >= 0, i <= last), w, const(0.0, f))

    def index(o: PrimExpr, t: PrimExpr) -> PrimExpr:
        i = base_and_ratio(o)[0] + start + t
        return tir.max(tir.min(i, last), const(0, i.dtype))

    weights = te.compute((size_out, count), raw, name=f"T_resize_aa_raw{k}")
    tap = te.reduce_axis((0, count), name="t")
    total = te.compute((size_out,), lambda o: te.sum(weights[o, tap.var], axis=[tap]),
                       name=f"T_resize_aa_sum{k}")  # fmt: skip

    def normalized(o: PrimExpr, t: PrimExpr) -> PrimExpr:
        sum_ = total[o]
        safe = tir.select(tir.eq(sum_, const(0.0, sum_.dtype)), const(1.0, sum_.dtype), sum_)
        return weights[o, t] / safe

    norm = te.compute((size_out, count), normalized, name=f"T_resize_weight{k}")
    return te.compute((size_out, count), index, name=f"T_resize_index{k}"), norm
