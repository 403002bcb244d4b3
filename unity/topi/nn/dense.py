"""`dense` (a fully connected layer): `x @ weight.T + bias`, weight laid out (out, in).

Example:
    >>> from unity import te
    >>> x = te.placeholder((te.var("n"), 4), name="x")
    >>> w = te.placeholder((8, 4), name="w")
    >>> dense(x, w).shape[1].value
    8
"""

from __future__ import annotations

from unity import te
from unity.te import Tensor
from unity.tir.expr import PrimExpr


def dense(
    x: Tensor, weight: Tensor, bias: Tensor | None = None, out_dtype: str | None = None
) -> Tensor:
    """`out[..., j] = sum_k x[..., k] * weight[j, k] (+ bias[j])`, accumulated in `out_dtype`.

    Raises:
        ValueError: `weight` is not 2-D, or the reduction dims differ (when constant).

    Example:
        >>> from unity import te
        >>> x, w = te.placeholder((2, 4), name="x"), te.placeholder((3, 4), name="w")
        >>> dense(x, w, out_dtype="float64").dtype
        'float64'
    """
    if weight.ndim != 2 or x.ndim < 1:
        raise ValueError(
            f"dense: needs x of rank >= 1 and a 2-D weight, got {x.ndim} and {weight.ndim}"
        )
    dtype = out_dtype or x.dtype
    k = te.reduce_axis((0, x.shape[-1]), name="k")

    def body(*i: PrimExpr) -> PrimExpr:
        a = x[(*i[:-1], k.var)].astype(dtype)
        b = weight[i[-1], k.var].astype(dtype)
        return te.sum(a * b, axis=k)

    out = te.compute((*x.shape[:-1], weight.shape[0]), body, name="T_dense")
    if bias is None:
        return out
    return te.compute(out.shape, lambda *i: out[i] + bias[i[-1]].astype(dtype), name="T_dense_bias")
