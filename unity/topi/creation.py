"""Tensor creation: full, zeros, ones, full_like, arange; triangular masks tril and triu.

Example:
    >>> from unity import te
    >>> n = te.var("n")
    >>> full((n, 2), "float32", 1.5).shape[0] is n
    True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from unity import te, tir
from unity.ir import dtype as dt
from unity.te import Tensor
from unity.tir.expr import ExprLike, PrimExpr, const


def _fill(value: Tensor | ExprLike, dtype: str) -> PrimExpr:
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"full: the fill value must be a scalar tensor, got rank {value.ndim}")
        return value[()].astype(dtype)
    if isinstance(value, PrimExpr):
        return value.astype(dtype)
    if dt.is_bool(dtype):
        return const(bool(value))
    return const(value if dt.is_float(dtype) else int(value), dtype)


def full(shape: Sequence[ExprLike], dtype: str, fill_value: Tensor | ExprLike) -> Tensor:
    """A tensor of `shape` filled with `fill_value` (a number or a 0-d tensor).

    Example:
        >>> full((2, 3), "int8", 7).dtype
        'int8'
    """
    dt.check(dtype)
    return te.compute(tuple(shape), lambda *i: _fill(fill_value, dtype), name="T_full")


def zeros(shape: Sequence[ExprLike], dtype: str = "float32") -> Tensor:
    """A tensor of zeros.

    Example:
        >>> zeros((4,)).op.name
        'T_full'
    """
    return full(shape, dtype, 0)


def ones(shape: Sequence[ExprLike], dtype: str = "float32") -> Tensor:
    """A tensor of ones.

    Example:
        >>> ones((4,), "int32").dtype
        'int32'
    """
    return full(shape, dtype, 1)


def full_like(x: Tensor, fill_value: ExprLike) -> Tensor:
    """A tensor of `x`'s shape and dtype filled with `fill_value`.

    Example:
        >>> from unity import te
        >>> full_like(te.placeholder((3,), "int8", name="x"), 1).dtype
        'int8'
    """
    return full(x.shape, x.dtype, fill_value)


def arange(
    start: float, stop: float | None = None, step: float = 1, dtype: str = "int64"
) -> Tensor:
    """`[start, start + step, ...)` below `stop` (numpy `arange`; `arange(n)` starts at 0).

    Raises:
        ValueError: `step` is 0.

    Example:
        >>> arange(1, 7, 2).shape[0].value
        3
    """
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    count = max(math.ceil((stop - start) / step), 0)
    wide = "float64" if dt.is_float(dtype) else "int64"

    def body(i: PrimExpr) -> PrimExpr:
        value = const(start, wide) + i.astype(wide) * const(step, wide)
        return value.astype(dtype)

    return te.compute((count,), body, name="T_arange")


def _triangle(x: Tensor, k: int, lower: bool) -> Tensor:
    if x.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'}: needs rank >= 2, got {x.ndim}")

    def body(*i: PrimExpr) -> PrimExpr:
        row, col = i[-2].astype("int64"), i[-1].astype("int64")
        keep = col <= row + k if lower else col >= row + k
        return tir.select(keep, x[i], const(0, x.dtype))

    return te.compute(x.shape, body, name="T_tril" if lower else "T_triu")


def tril(x: Tensor, k: int = 0) -> Tensor:
    """Keep the entries on and below diagonal `k` of the last two axes; zero the rest.

    Example:
        >>> from unity import te
        >>> tril(te.placeholder((3, 3), name="x")).op.name
        'T_tril'
    """
    return _triangle(x, k, lower=True)


def triu(x: Tensor, k: int = 0) -> Tensor:
    """Keep the entries on and above diagonal `k` of the last two axes; zero the rest.

    Example:
        >>> from unity import te
        >>> triu(te.placeholder((3, 3), name="x"), 1).op.name
        'T_triu'
    """
    return _triangle(x, k, lower=False)
