"""2-D pooling: `max_pool2d`, `avg_pool2d` (padding, ceil_mode, count_include_pad, dilation)
and `adaptive_avg_pool2d`, in any layout with "H" and "W" letters ("NCHW", "NHWC") or a
channel-blocked one ("NCHW16c": 5-D (N, C/16, H, W, 16), pooled over axes 2 and 3).

Example:
    >>> from unity import te
    >>> x = te.placeholder((te.var("n"), 3, 8, 8), name="x")
    >>> [getattr(d, "value", "n") for d in max_pool2d(x, 2).shape]
    ['n', 3, 4, 4]
"""

from __future__ import annotations

from collections.abc import Sequence

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import ExprLike, PrimExpr, const
from unity.topi.nn.layout import layout_ndim, padding4, pair, spatial_axes, window_out
from unity.topi.utils import ceil_div, const_int


def _spatial(x: Tensor, layout: str) -> tuple[int, int]:
    """The H and W axes of `x` in `layout`, after checking its rank against the layout."""
    if x.ndim != layout_ndim(layout):
        raise ValueError(f"pool2d: layout {layout} takes {layout_ndim(layout)}-D input, "
                         f"got {x.ndim}-D")  # fmt: skip
    return spatial_axes(layout)


def _window(x: Tensor, layout: str, pool_size: int | Sequence[int], strides: int | Sequence[int] | None,
            padding: int | Sequence[int], dilation: int | Sequence[int],
            ceil_mode: bool) -> tuple[list[tuple[int, int, int, int, int]], list[PrimExpr]]:  # fmt: skip
    """Per spatial axis (axis, kernel, stride, dilation, pad_before) and the output shape."""
    (kh, kw) = pair(pool_size, "pool_size")
    (sh, sw) = (kh, kw) if strides is None else pair(strides, "strides")
    (dh, dw), (pt, pl, pb, pr) = pair(dilation, "dilation"), padding4(padding)
    ah, aw = _spatial(x, layout)
    shape = list(x.shape)
    shape[ah] = window_out(x.shape[ah], kh, pt, pb, sh, dh, ceil_mode)
    shape[aw] = window_out(x.shape[aw], kw, pl, pr, sw, dw, ceil_mode)
    return [(ah, kh, sh, dh, pt), (aw, kw, sw, dw, pl)], shape


def max_pool2d(
    x: Tensor, pool_size: int | Sequence[int], strides: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False, layout: str = "NCHW",
) -> Tensor:  # fmt: skip
    """Maximum over each window; padding never wins (it acts as -inf).

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 1, 5, 5), name="x")
        >>> max_pool2d(x, 2, ceil_mode=True).shape[2].value
        3
    """
    axes, shape = _window(x, layout, pool_size, strides, padding, dilation, ceil_mode)
    rv = [
        te.reduce_axis((0, k), name=nm) for (_, k, *_), nm in zip(axes, ("ry", "rx"), strict=True)
    ]

    def body(*i: PrimExpr) -> PrimExpr:
        src, inside = _taps(x, i, axes, rv)
        return te.max(tir.select(inside, x[src], tir.min_value(x.dtype)), axis=rv)

    return te.compute(shape, body, name="T_max_pool2d")


def _taps(x: Tensor, i: Sequence[PrimExpr], axes: list[tuple[int, int, int, int, int]],
          rv: list[object]) -> tuple[tuple[PrimExpr, ...], PrimExpr]:  # fmt: skip
    """The clamped input index of each window tap, and whether it lies inside the input."""
    src = list(i)
    inside: PrimExpr = const(True)
    for (axis, _, stride, dil, before), r in zip(axes, rv, strict=True):
        pos = i[axis] * stride + r.var * dil - before  # type: ignore[attr-defined]  # IterVar
        size = x.shape[axis]
        inside = tir.logical_and(inside, tir.logical_and(pos >= 0, pos < size))
        src[axis] = tir.max(tir.min(pos, size - 1), const(0, pos.dtype))
    return tuple(src), inside


def _count(start: PrimExpr, lo: ExprLike, hi: ExprLike, kernel: int, dil: int) -> PrimExpr:
    """Number of taps `start + r*dil` (0 <= r < kernel) inside `[lo, hi)`."""
    first = tir.max(ceil_div(const(lo) - start, dil), const(0, start.dtype))
    last = tir.min(ceil_div(const(hi) - start, dil), const(kernel, start.dtype))
    return tir.max(last - first, const(0, start.dtype))


def avg_pool2d(
    x: Tensor, pool_size: int | Sequence[int], strides: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False, count_include_pad: bool = False, layout: str = "NCHW",
) -> Tensor:  # fmt: skip
    """Mean over each window; the divisor counts the taps inside the input (plus the padding
    with `count_include_pad`; taps past the padding, from `ceil_mode`, never count).

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 4, 4, 2), name="x")
        >>> avg_pool2d(x, 3, 1, padding=1, layout="NHWC").shape[1].value
        4
    """
    axes, shape = _window(x, layout, pool_size, strides, padding, dilation, ceil_mode)
    pads = padding4(padding)
    after = {axes[0][0]: pads[2], axes[1][0]: pads[3]}
    rv = [
        te.reduce_axis((0, k), name=nm) for (_, k, *_), nm in zip(axes, ("ry", "rx"), strict=True)
    ]

    def total_body(*i: PrimExpr) -> PrimExpr:
        src, inside = _taps(x, i, axes, rv)
        return te.sum(tir.select(inside, x[src], const(0, x.dtype)), axis=rv)

    total = te.compute(shape, total_body, name="T_avg_pool2d_sum")

    def body(*i: PrimExpr) -> PrimExpr:
        count: PrimExpr = const(1, "int64")
        for axis, k, stride, dil, before in axes:
            start = i[axis].astype("int64") * stride - before
            size = x.shape[axis].astype("int64")
            lo, hi = (-before, size + after[axis]) if count_include_pad else (0, size)
            count = count * _count(start, lo, hi, k, dil)
        return total[i] / tir.max(count, const(1, "int64")).astype(x.dtype)

    return te.compute(shape, body, name="T_avg_pool2d")


def adaptive_avg_pool2d(x: Tensor, output_size: int | Sequence[int] | None = None,
                        layout: str = "NCHW") -> Tensor:  # fmt: skip
    """Average over windows `[floor(o*H/OH), ceil((o+1)*H/OH))` so the output is `output_size`.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 2, 7, 7), name="x")
        >>> [d.value for d in adaptive_avg_pool2d(x, 1).shape]
        [1, 2, 1, 1]
    """
    ah, aw = _spatial(x, layout)
    sizes = (x.shape[ah], x.shape[aw]) if output_size is None else pair(output_size, "output_size")
    shape = list(x.shape)
    shape[ah], shape[aw] = (const(s, x.shape[a].dtype) if isinstance(s, int) else s
                            for s, a in zip(sizes, (ah, aw), strict=True))  # fmt: skip
    rv = [te.reduce_axis((0, _max_window(x.shape[a], shape[a])), name=nm)
          for a, nm in zip((ah, aw), ("ry", "rx"), strict=True)]  # fmt: skip

    def bounds(o: PrimExpr, size: PrimExpr, out: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
        wide = "int64"
        o, size, out = o.astype(wide), size.astype(wide), out.astype(wide)
        return (o * size) // out, ceil_div((o + 1) * size, out)

    def body(*i: PrimExpr) -> PrimExpr:
        src = list(i)
        inside: PrimExpr = const(True)
        count: PrimExpr = const(1, "int64")
        for a, r in zip((ah, aw), rv, strict=True):
            lo, hi = bounds(i[a], x.shape[a], shape[a])
            pos = lo + r.var.astype("int64")
            inside = tir.logical_and(inside, pos < hi)
            src[a] = tir.min(pos, hi - 1)
            count = count * (hi - lo)
        return te.sum(
            tir.select(inside, x[tuple(src)] / count.astype(x.dtype), const(0, x.dtype)), axis=rv
        )

    return te.compute(shape, body, name="T_adaptive_avg_pool2d")


def _max_window(size: PrimExpr, out: PrimExpr) -> PrimExpr:
    """An upper bound of the adaptive window length (the whole axis when symbolic)."""
    cs, co = const_int(size), const_int(out)
    if cs is None or co is None:
        return size
    return const(max(-(-((o + 1) * cs) // co) - (o * cs) // co for o in range(co)), size.dtype)
