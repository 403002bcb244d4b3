"""`det`: determinants of square matrices by Gaussian elimination with partial pivoting.

The elimination is unrolled over the (static) matrix size `M`: step `k` finds the pivot
row (the first row `>= k` whose entry in column `k` has the largest magnitude, as LAPACK's
`getrf`), swaps it with row `k` and subtracts multiples of it from the rows below. Each step
is three TE stages over the batch, so the cost is `O(M^3)` per matrix and `3 M` stages: meant
for the small matrices of inference graphs. The determinant is the product of the pivots,
negated once per swap; a zero pivot column gives 0.

Example:
    >>> from unity import te
    >>> x = te.placeholder((5, 3, 3), name="x")
    >>> [d.value for d in det(x).shape]
    [5]
"""

from __future__ import annotations

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import IntImm, PrimExpr, const

_COMPUTE = {"float64": "float64", "float32": "float32"}
"""The dtype the elimination runs in (narrower floats widen to float32)."""


def _step(a: Tensor, k: int, m: int) -> tuple[Tensor, Tensor]:
    """Eliminate column `k` of `a` (..., M, M): the pivot row index and the next matrix."""
    batch, col = list(a.shape[:-2]), const(k, a.shape[-1].dtype)
    r = te.reduce_axis((0, m - k), name="r")
    best = te.compute(batch, lambda *b: te.max(tir.abs(a[(*b, r.var + k, col)]), axis=r),
                      name=f"T_det_best{k}")  # fmt: skip

    def pivot_body(*b: PrimExpr) -> PrimExpr:
        q = te.reduce_axis((0, m - k), name="q")
        row = q.var + k
        hit = tir.eq(tir.abs(a[(*b, row, col)]), best[b])
        # int64 whatever the loop index dtype: passes may widen the loop variables later
        return te.min(tir.select(hit, row.astype("int64"), const(m, "int64")), axis=q)

    pivot = te.compute(batch, pivot_body, name=f"T_det_pivot{k}")

    def next_body(*idx: PrimExpr) -> PrimExpr:
        *b, i, j = idx
        p, row = pivot[tuple(b)], i.astype("int64")
        src = tir.select(tir.eq(row, k), p, tir.select(tir.eq(row, p), const(k, "int64"), row))
        head = a[(*b, p, col)]
        zero = const(0.0, a.dtype)
        factor = tir.select(tir.eq(head, zero), zero, a[(*b, src, col)] / head)
        below = a[(*b, src, j)] - factor * a[(*b, p, j)]
        return tir.select(i > k, below, a[(*b, src, j)])

    return pivot, te.compute(a.shape, next_body, name=f"T_det_step{k}")


def det(x: Tensor) -> Tensor:
    """The determinant of each square matrix in `x` (..., M, M), as a tensor (...).

    Args:
        x: a float tensor whose last two dims are equal and static.

    Raises:
        ValueError: a rank below 2, a symbolic or non-square matrix size, or a non-float dtype.

    Example:
        >>> from unity import te
        >>> det(te.placeholder((2, 2), name="x", dtype="float64")).dtype
        'float64'
    """
    if x.ndim < 2:
        raise ValueError(f"det: expects a tensor of rank >= 2, got rank {x.ndim}")
    rows, cols = x.shape[-2], x.shape[-1]
    if not (isinstance(rows, IntImm) and isinstance(cols, IntImm)):
        raise ValueError(f"det: needs a static matrix size, got {rows} x {cols}")
    if rows.value != cols.value:
        raise ValueError(f"det: expects square matrices, got {rows.value} x {cols.value}")
    if not x.dtype.startswith(("float", "bfloat")):
        raise ValueError(f"det: expects a float tensor, got {x.dtype}")
    m, batch = rows.value, list(x.shape[:-2])
    f = _COMPUTE.get(x.dtype, "float32")
    if m == 0:
        return te.compute(batch, lambda *b: const(1.0, x.dtype), name="T_det")
    a = te.compute(x.shape, lambda *i: x[i].astype(f), name="T_det_cast") if f != x.dtype else x
    pivots: list[Tensor] = []
    mats = [a]
    for k in range(m - 1):
        pivot, a = _step(a, k, m)
        pivots.append(pivot)
        mats.append(a)

    def body(*b: PrimExpr) -> PrimExpr:
        # index constants in the shape's dtype: an int32 constant inlined for an int64
        # variable would mix the two in the generated code
        last = const(m - 1, rows.dtype)
        out = mats[m - 1][(*b, last, last)]
        for k, (pivot, mat) in enumerate(zip(pivots, mats, strict=False)):
            p = pivot[b]
            head = mat[(*b, p, const(k, rows.dtype))]
            out = out * tir.select(tir.eq(p, const(k, p.dtype)), head, -head)
        return out.astype(x.dtype)

    return te.compute(batch, body, name="T_det")
