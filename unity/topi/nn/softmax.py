"""`softmax` and `log_softmax` along an axis, stabilized by subtracting the maximum.

Example:
    >>> from unity import te
    >>> x = te.placeholder((te.var("n"), 10), name="x")
    >>> softmax(x).op.name, log_softmax(x, axis=0).op.name
    ('T_softmax', 'T_log_softmax')
"""

from __future__ import annotations

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.utils import normalize_axes


def _stats(x: Tensor, axis: int) -> tuple[int, Tensor, Tensor]:
    """The axis, the maximum along it (kept as size 1), and `sum(exp(x - max))`."""
    (ax,) = normalize_axes(x.ndim, axis)

    def reduced(fn: object, name: str) -> Tensor:
        def body(*i: PrimExpr) -> PrimExpr:
            k = te.reduce_axis((0, x.shape[ax]), name="k")
            src = tuple(k.var if d == ax else v for d, v in enumerate(i))
            return fn(src, k)  # type: ignore[operator]  # a body builder

        shape = [const(1, x.shape[ax].dtype) if d == ax else s for d, s in enumerate(x.shape)]
        return te.compute(shape, body, name=name)

    top = reduced(lambda src, k: te.max(x[src], axis=k), "T_softmax_max")

    def at_top(src: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
        return tuple(const(0, v.dtype) if d == ax else v for d, v in enumerate(src))

    total = reduced(
        lambda src, k: te.sum(tir.exp(x[src] - top[at_top(src)]), axis=k), "T_softmax_expsum"
    )
    return ax, top, total


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """`exp(x - max) / sum(exp(x - max))` along `axis`.

    Example:
        >>> from unity import te
        >>> softmax(te.placeholder((2, 3), name="x"), 0).shape[0].value
        2
    """
    ax, top, total = _stats(x, axis)

    def body(*i: PrimExpr) -> PrimExpr:
        at = tuple(const(0, v.dtype) if d == ax else v for d, v in enumerate(i))
        return tir.exp(x[i] - top[at]) / total[at]

    return te.compute(x.shape, body, name="T_softmax")


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """`x - max - log(sum(exp(x - max)))` along `axis`.

    Example:
        >>> from unity import te
        >>> log_softmax(te.placeholder((2, 3), name="x")).shape[1].value
        3
    """
    ax, top, total = _stats(x, axis)

    def body(*i: PrimExpr) -> PrimExpr:
        at = tuple(const(0, v.dtype) if d == ax else v for d, v in enumerate(i))
        return x[i] - top[at] - tir.log(total[at])

    return te.compute(x.shape, body, name="T_log_softmax")
