"""`lrn`: local response normalization across channels (ONNX LRN, AlexNet / Inception v1).

Example:
    >>> from unity import te
    >>> x = te.placeholder((1, 8, 4, 4), name="x")
    >>> lrn(x, 5).op.name
    'T_lrn'
"""

from __future__ import annotations

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.utils import normalize_axes


def lrn(x: Tensor, size: int, axis: int = 1, alpha: float = 1e-4, beta: float = 0.75,
        bias: float = 1.0) -> Tensor:  # fmt: skip
    """`x / (bias + alpha / size * sum(x[c']**2))**beta` over the `size` channels around `c`.

    The window spans ``[c - floor((size-1)/2), c + ceil((size-1)/2)]``, clipped to the axis.

    Raises:
        ValueError: `size` is not positive.

    Example:
        >>> from unity import te
        >>> lrn(te.placeholder((2, 3), name="x"), 3, axis=1).shape[1].value
        3
    """
    if size < 1:
        raise ValueError(f"lrn: size must be positive, got {size}")
    (ax,) = normalize_axes(x.ndim, axis)
    before = (size - 1) // 2
    channels = x.shape[ax]

    def sq_body(*i: PrimExpr) -> PrimExpr:
        r = te.reduce_axis((0, size), name="r")
        c = i[ax] + r.var.astype(i[ax].dtype) - before
        src = tuple(tir.max(tir.min(c, channels - 1), const(0, c.dtype)) if k == ax else v
                    for k, v in enumerate(i))  # fmt: skip
        inside = tir.logical_and(c >= 0, c < channels)
        v = x[src]
        return te.sum(tir.select(inside, v * v, const(0, x.dtype)), axis=r)

    sq = te.compute(x.shape, sq_body, name="T_lrn_sqsum")

    def body(*i: PrimExpr) -> PrimExpr:
        scale = const(bias, x.dtype) + const(alpha / size, x.dtype) * sq[i]
        return x[i] / tir.power(scale, const(beta, x.dtype))

    return te.compute(x.shape, body, name="T_lrn")
