"""Reductions over axes (sum, mean, max, min, prod, variance, argmax, argmin) and cumsum.

`axis=None` reduces every axis; `keepdims=True` keeps reduced axes as size 1.

Example:
    >>> from unity import te
    >>> n = te.var("n")
    >>> x = te.placeholder((n, 4), name="x")
    >>> sum(x, axis=1).shape[0] is n, len(sum(x, axis=1, keepdims=True).shape)
    (True, 2)
"""

from __future__ import annotations

from collections.abc import Callable

from unity import te, tir
from unity.ir import dtype as dt
from unity.te import Tensor
from unity.tir.expr import IterVar, PrimExpr, const
from unity.topi.utils import AxisLike, cast, const_int, normalize_axes, product

Reducer = Callable[..., PrimExpr]


def _plan(x: Tensor, axis: AxisLike, keepdims: bool) -> tuple[tuple[int, ...], list[PrimExpr]]:
    axes = normalize_axes(x.ndim, axis)
    one = const(1, x.shape[0].dtype if x.ndim else "int32")
    shape = [one if k in axes else d for k, d in enumerate(x.shape) if keepdims or k not in axes]
    return axes, shape


def _source_index(x: Tensor, axes: tuple[int, ...], keepdims: bool, out: tuple[PrimExpr, ...],
                  reduce: list[IterVar]) -> tuple[PrimExpr, ...]:  # fmt: skip
    """The index into `x` for output index `out` and the reduce vars."""
    it_out, it_red = iter(out), iter(reduce)
    idx = []
    for k in range(x.ndim):
        if k in axes:
            idx.append(next(it_red).var)
            if keepdims:
                next(it_out)
        else:
            idx.append(next(it_out))
    return tuple(idx)


def _reduce(x: Tensor, axis: AxisLike, keepdims: bool, reducer: Reducer, name: str,
            fn: Callable[[PrimExpr], PrimExpr] = lambda v: v) -> Tensor:  # fmt: skip
    axes, shape = _plan(x, axis, keepdims)
    if not axes:
        return te.compute(x.shape, lambda *i: fn(x[i]), name=name)
    if any(const_int(x.shape[a]) == 0 for a in axes):
        # an empty reduction never runs its init: write the reducer's identity instead
        return te.compute(shape, lambda *i: _identity(reducer, x.dtype), name=name)

    def body(*i: PrimExpr) -> PrimExpr:
        rv = [te.reduce_axis((0, x.shape[a]), name=f"k{a}") for a in axes]
        return reducer(fn(x[_source_index(x, axes, keepdims, i, rv)]), axis=rv)

    return te.compute(shape, body, name=name)


def _identity(reducer: Reducer, dtype: str) -> PrimExpr:
    """The value a reduction over nothing gives (0, 1, -inf / lowest, +inf / highest)."""
    if reducer is te.max:
        return tir.min_value(dtype)
    if reducer is te.min:
        return tir.max_value(dtype)
    return const(1 if reducer is te.prod else 0, dtype)


def sum(x: Tensor, axis: AxisLike = None, keepdims: bool = False) -> Tensor:
    """Sum over `axis`.

    Example:
        >>> from unity import te
        >>> sum(te.placeholder((2, 3), name="x")).ndim
        0
    """
    return _reduce(x, axis, keepdims, te.sum, "T_sum")


def prod(x: Tensor, axis: AxisLike = None, keepdims: bool = False) -> Tensor:
    """Product over `axis`.

    Example:
        >>> from unity import te
        >>> prod(te.placeholder((2, 3), name="x"), 0).shape[0].value
        3
    """
    return _reduce(x, axis, keepdims, te.prod, "T_prod")


def max(x: Tensor, axis: AxisLike = None, keepdims: bool = False) -> Tensor:
    """Maximum over `axis`.

    Example:
        >>> from unity import te
        >>> max(te.placeholder((2, 3), name="x"), 1).op.name
        'T_max'
    """
    return _reduce(x, axis, keepdims, te.max, "T_max")


def min(x: Tensor, axis: AxisLike = None, keepdims: bool = False) -> Tensor:
    """Minimum over `axis`.

    Example:
        >>> from unity import te
        >>> min(te.placeholder((2, 3), name="x"), 1).op.name
        'T_min'
    """
    return _reduce(x, axis, keepdims, te.min, "T_min")


def _count(x: Tensor, axes: tuple[int, ...]) -> PrimExpr:
    return product([x.shape[a] for a in axes])


def _divide(total: Tensor, count: PrimExpr, name: str) -> Tensor:
    def body(*i: PrimExpr) -> PrimExpr:
        v = total[i]
        return v / cast(count, v.dtype)

    return te.compute(total.shape, body, name=name)


def mean(x: Tensor, axis: AxisLike = None, keepdims: bool = False) -> Tensor:
    """Mean over `axis` (integer inputs: truncating division, as TVM).

    Example:
        >>> from unity import te
        >>> mean(te.placeholder((2, 3), name="x"), 1).op.name
        'T_mean'
    """
    total = sum(x, axis, keepdims)
    return _divide(total, _count(x, normalize_axes(x.ndim, axis)), "T_mean")


def variance(x: Tensor, axis: AxisLike = None, keepdims: bool = False) -> Tensor:
    """Population variance over `axis` (`mean((x - mean(x))**2)`, two passes for accuracy).

    Example:
        >>> from unity import te
        >>> variance(te.placeholder((2, 3), name="x"), 1).op.name
        'T_variance'
    """
    axes = normalize_axes(x.ndim, axis)
    avg = mean(x, axes, keepdims=True)

    def sq_diff(*i: PrimExpr) -> PrimExpr:
        d = x[i] - avg[tuple(0 if k in axes else v for k, v in enumerate(i))]
        return d * d

    diff = te.compute(x.shape, sq_diff, name="T_sq_diff")
    return _divide(sum(diff, axes, keepdims), _count(x, axes), "T_variance")


def _arg_reduce(x: Tensor, axis: AxisLike, keepdims: bool, best: Reducer, name: str) -> Tensor:
    """First index of the extreme value: reduce the value, then the smallest matching index."""
    axes = normalize_axes(x.ndim, axis)
    extreme = _reduce(x, axes, True, best, f"{name}_value")
    _, shape = _plan(x, axes, keepdims)
    big = tir.max_value("int64")

    def body(*i: PrimExpr) -> PrimExpr:
        rv = [te.reduce_axis((0, x.shape[a]), name=f"k{a}") for a in axes]
        src = _source_index(x, axes, keepdims, i, rv)
        flat = const(0, "int64")
        for a, r in zip(axes, rv, strict=True):
            flat = flat * x.shape[a].astype("int64") + r.var.astype("int64")
        at_best = tuple(const(0, "int32") if k in axes else v for k, v in enumerate(src))
        return te.min(tir.select(tir.eq(x[src], extreme[at_best]), flat, big), axis=rv)

    return te.compute(shape, body, name=name)


def argmax(x: Tensor, axis: AxisLike = None, keepdims: bool = False) -> Tensor:
    """int64 index of the first maximum along `axis` (of the flattened axes when several).

    Example:
        >>> from unity import te
        >>> argmax(te.placeholder((2, 3), name="x"), 1).dtype
        'int64'
    """
    return _arg_reduce(x, axis, keepdims, te.max, "T_argmax")


def argmin(x: Tensor, axis: AxisLike = None, keepdims: bool = False) -> Tensor:
    """int64 index of the first minimum along `axis`.

    Example:
        >>> from unity import te
        >>> argmin(te.placeholder((2, 3), name="x"), 1).dtype
        'int64'
    """
    return _arg_reduce(x, axis, keepdims, te.min, "T_argmin")


def _scan(x: Tensor, axis: int | None, dtype: str | None, exclusive: bool, reverse: bool,
          reducer: Reducer, name: str) -> Tensor:  # fmt: skip
    from unity.topi.transform import reshape

    if axis is None:
        x, axis = reshape(x, [product(x.shape)]), 0
    (ax,) = normalize_axes(x.ndim, axis)
    out_dtype = dtype or x.dtype
    if dt.is_bool(out_dtype):
        out_dtype = "int32"

    def body(*i: PrimExpr) -> PrimExpr:
        r = te.reduce_axis((0, x.shape[ax]), name="k")
        src = tuple(r.var if k == ax else v for k, v in enumerate(i))
        a, b = (i[ax], r.var) if reverse else (r.var, i[ax])
        cond = a < b if exclusive else a <= b
        return reducer(x[src].astype(out_dtype), axis=r, where=cond)

    return te.compute(x.shape, body, name=name)


def cumsum(x: Tensor, axis: int | None = None, dtype: str | None = None,
           exclusive: bool = False, reverse: bool = False) -> Tensor:  # fmt: skip
    """Running sum along `axis` (over the flattened input when None), in `dtype`.

    `exclusive` leaves each element out of its own sum; `reverse` runs from the end.
    Each output sums its prefix, so the cost is quadratic in the axis length.

    Example:
        >>> from unity import te
        >>> cumsum(te.placeholder((2, 3), name="x"), 1).shape[1].value
        3
    """
    return _scan(x, axis, dtype, exclusive, reverse, te.sum, "T_cumsum")


def cumprod(x: Tensor, axis: int | None = None, dtype: str | None = None,
            exclusive: bool = False, reverse: bool = False) -> Tensor:  # fmt: skip
    """Running product along `axis` (ONNX CumProd flags as in `cumsum`).

    Example:
        >>> from unity import te
        >>> cumprod(te.placeholder((4,), name="x"), 0, reverse=True).op.name
        'T_cumprod'
    """
    return _scan(x, axis, dtype, exclusive, reverse, te.prod, "T_cumprod")
