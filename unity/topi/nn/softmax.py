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


def _reduced(x: Tensor, ax: int, fn: object, name: str) -> Tensor:
    """A reduction of `x` along `ax` kept as size 1: `fn(source indices, k)` per row."""

    def body(*i: PrimExpr) -> PrimExpr:
        k = te.reduce_axis((0, x.shape[ax]), name="k")
        src = tuple(k.var if d == ax else v for d, v in enumerate(i))
        return fn(src, k)  # type: ignore[operator]  # a body builder

    shape = [const(1, x.shape[ax].dtype) if d == ax else s for d, s in enumerate(x.shape)]
    return te.compute(shape, body, name=name)


def _at_zero(idx: tuple[PrimExpr, ...], ax: int) -> tuple[PrimExpr, ...]:
    """`idx` with the reduced axis at 0 (where the size-1 row statistics live)."""
    return tuple(const(0, v.dtype) if d == ax else v for d, v in enumerate(idx))


def _axis_max(x: Tensor, axis: int) -> tuple[int, Tensor]:
    """The axis and the maximum along it (kept as size 1)."""
    (ax,) = normalize_axes(x.ndim, axis)
    return ax, _reduced(x, ax, lambda src, k: te.max(x[src], axis=k), "T_softmax_max")


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """`exp(x - max) / sum(exp(x - max))` along `axis`.

    The exponentials are their own stage (`T_softmax_exp`), read by the sum and by the
    output, so a schedule that keeps the stage computes each `exp` once; the output
    multiplies by the reciprocal of the sum (one division per row, not per element).

    Example:
        >>> from unity import te
        >>> softmax(te.placeholder((2, 3), name="x"), 0).shape[0].value
        2
    """
    ax, top = _axis_max(x, axis)
    exps = te.compute(
        x.shape, lambda *i: tir.exp(x[i] - top[_at_zero(i, ax)]), name="T_softmax_exp"
    )
    total = _reduced(x, ax, lambda src, k: te.sum(exps[src], axis=k), "T_softmax_expsum")
    one = const(1.0, x.dtype)
    return te.compute(
        x.shape, lambda *i: exps[i] * (one / total[_at_zero(i, ax)]), name="T_softmax"
    )


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """`x - max - log(sum(exp(x - max)))` along `axis`.

    Example:
        >>> from unity import te
        >>> log_softmax(te.placeholder((2, 3), name="x")).shape[1].value
        3
    """
    ax, top = _axis_max(x, axis)
    total = _reduced(
        x, ax, lambda src, k: te.sum(tir.exp(x[src] - top[_at_zero(src, ax)]), axis=k),
        "T_softmax_expsum",
    )  # fmt: skip

    def body(*i: PrimExpr) -> PrimExpr:
        at = _at_zero(i, ax)
        return x[i] - top[at] - tir.log(total[at])

    return te.compute(x.shape, body, name="T_log_softmax")
