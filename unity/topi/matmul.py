"""`matmul` with numpy semantics: 1-D operands are promoted (and the added dim dropped),
batch dims broadcast, dims may be symbolic.

Example:
    >>> from unity import te
    >>> a = te.placeholder((te.var("b"), 1, 2, 3), name="a")
    >>> w = te.placeholder((5, 3, 4), name="w")
    >>> [getattr(d, "value", "b") for d in matmul(a, w).shape]
    ['b', 5, 2, 4]
"""

from __future__ import annotations

from unity import te
from unity.te import Tensor
from unity.tir.expr import PrimExpr
from unity.topi.utils import broadcast_index, broadcast_shape, const_int


def matmul(a: Tensor, b: Tensor, out_dtype: str | None = None) -> Tensor:
    """Matrix product `a @ b`, accumulated in `out_dtype` (default: the inputs' dtype).

    Raises:
        ValueError: a scalar operand, or constant reduction dims that differ.

    Example:
        >>> from unity import te
        >>> v = te.placeholder((3,), name="v")
        >>> m = te.placeholder((3, 4), name="m")
        >>> [d.value for d in matmul(v, m).shape]
        [4]
    """
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must have rank >= 1, got a scalar")
    ka, kb = a.shape[-1], b.shape[0] if b.ndim == 1 else b.shape[-2]
    if None not in (const_int(ka), const_int(kb)) and const_int(ka) != const_int(kb):
        raise ValueError(f"matmul: reduction dims differ: {const_int(ka)} vs {const_int(kb)}")
    dtype = out_dtype or a.dtype
    a_batch = list(a.shape[:-2])
    b_batch = list(b.shape[:-2])
    batch = broadcast_shape([a_batch, b_batch], "matmul") if a_batch or b_batch else []
    rows = [a.shape[-2]] if a.ndim > 1 else []
    cols = [b.shape[-1]] if b.ndim > 1 else []
    k = te.reduce_axis((0, ka), name="k")

    def body(*i: PrimExpr) -> PrimExpr:
        nb = len(batch)
        bi, ri, ci = i[:nb], i[nb : nb + len(rows)], i[nb + len(rows) :]
        ai = [broadcast_index(bi[nb - len(a_batch) + n], d, batch[nb - len(a_batch) + n])
              for n, d in enumerate(a_batch)]  # fmt: skip
        bj = [broadcast_index(bi[nb - len(b_batch) + n], d, batch[nb - len(b_batch) + n])
              for n, d in enumerate(b_batch)]  # fmt: skip
        lhs = a[(*ai, *ri, k.var)].astype(dtype)
        rhs = b[(*bj, k.var, *ci)].astype(dtype)
        return te.sum(lhs * rhs, axis=k)

    return te.compute([*batch, *rows, *cols], body, name="T_matmul")
