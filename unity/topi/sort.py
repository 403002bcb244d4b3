"""Sorting by counting: `argsort`, `sort`, `topk` along an axis (stable: ties keep index order).

Each element's rank is the number of elements that sort before it, so the cost is
quadratic in the axis length: meant for the short axes of inference graphs (TopK over
classes, small sorts), not for long arrays.

Example:
    >>> from unity import te
    >>> x = te.placeholder((2, 5), name="x")
    >>> values, indices = topk(x, 3)
    >>> values.shape[1].value, indices.dtype
    (3, 'int64')
"""

from __future__ import annotations

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.utils import normalize_axes


def _order(x: Tensor, ax: int, descending: bool, count: PrimExpr | int, dtype: str) -> Tensor:
    """Indices of the first `count` elements along `ax` in sorted order."""
    n = x.shape[ax]

    def rank_body(*p: PrimExpr) -> PrimExpr:
        j = te.reduce_axis((0, n), name="j")
        other = x[tuple(j.var if k == ax else v for k, v in enumerate(p))]
        mine = x[p]
        ahead = other > mine if descending else other < mine
        tie = tir.logical_and(tir.eq(other, mine), j.var < p[ax])
        return te.sum(
            tir.select(tir.logical_or(ahead, tie), const(1, "int64"), const(0, "int64")), axis=j
        )

    rank = te.compute(x.shape, rank_body, name="T_sort_rank")
    shape = list(x.shape)
    shape[ax] = const(count, n.dtype) if isinstance(count, int) else count

    def index_body(*q: PrimExpr) -> PrimExpr:
        p = te.reduce_axis((0, n), name="p")
        r = rank[tuple(p.var if k == ax else v for k, v in enumerate(q))]
        hit = tir.eq(r, q[ax].astype("int64"))
        return te.min(tir.select(hit, p.var.astype(dtype), tir.max_value(dtype)), axis=p)

    return te.compute(shape, index_body, name="T_argsort")


def argsort(x: Tensor, axis: int = -1, is_ascend: bool = True, dtype: str = "int64") -> Tensor:
    """The indices that sort `x` along `axis` (stable).

    Example:
        >>> from unity import te
        >>> argsort(te.placeholder((4,), name="x")).dtype
        'int64'
    """
    (ax,) = normalize_axes(x.ndim, axis)
    return _order(x, ax, not is_ascend, x.shape[ax], dtype)


def _gather(x: Tensor, order: Tensor, ax: int, name: str) -> Tensor:
    def body(*q: PrimExpr) -> PrimExpr:
        return x[tuple(order[q] if k == ax else v for k, v in enumerate(q))]

    return te.compute(order.shape, body, name=name)


def sort(x: Tensor, axis: int = -1, is_ascend: bool = True) -> Tensor:
    """`x` sorted along `axis`.

    Example:
        >>> from unity import te
        >>> sort(te.placeholder((4,), name="x")).op.name
        'T_sort'
    """
    (ax,) = normalize_axes(x.ndim, axis)
    return _gather(x, _order(x, ax, not is_ascend, x.shape[ax], "int64"), ax, "T_sort")


def topk(x: Tensor, k: int | PrimExpr, axis: int = -1, largest: bool = True,
         dtype: str = "int64") -> list[Tensor]:  # fmt: skip
    """The `k` largest (or smallest) values along `axis`, sorted, and their indices (ONNX TopK:
    among equal values the lower index comes first).

    Example:
        >>> from unity import te
        >>> values, indices = topk(te.placeholder((6,), name="x"), 2, largest=False)
        >>> values.shape[0].value
        2
    """
    (ax,) = normalize_axes(x.ndim, axis)
    order = _order(x, ax, largest, k, dtype)
    return [_gather(x, order, ax, "T_topk_values"), order]
