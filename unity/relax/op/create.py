"""Tensor creation: zeros, ones, full, arange, and the triangular masks tril/triu.

Example:
    >>> zeros(("n", 4), "float32").args[0].values
    (n, 4)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from unity.ir.dtype import check
from unity.relax.expr import Attrs, Call, Expr, PrimValue
from unity.relax.op.base import RelaxOp, as_shape_expr, fail, register_op, shape_arg, tensor_arg
from unity.relax.struct_info import PrimStructInfo, StructInfo, TensorStructInfo


@dataclass(frozen=True, slots=True)
class InitAttrs(Attrs):
    """The dtype of a created tensor.

    Example:
        >>> zeros((2, 3), "float16").attrs
        InitAttrs(dtype='float16')
    """

    dtype: str


def _infer_init(call: Call) -> StructInfo:
    attrs = call.attrs
    assert isinstance(attrs, InitAttrs)
    shape = shape_arg(call, 0)
    return TensorStructInfo(shape, attrs.dtype, -1 if shape is None else len(shape))


@register_op("zeros", infer=_infer_init)
def zeros(op: RelaxOp, shape: Sequence[object] | Expr, dtype: str = "float32") -> Call:
    """A tensor of zeros of `shape`.

    Example:
        >>> zeros((2,), "int32").attrs.dtype
        'int32'
    """
    return Call(op, (as_shape_expr(shape),), InitAttrs(check(dtype)))


@register_op("ones", infer=_infer_init)
def ones(op: RelaxOp, shape: Sequence[object] | Expr, dtype: str = "float32") -> Call:
    """A tensor of ones of `shape`.

    Example:
        >>> ones((2,)).attrs.dtype
        'float32'
    """
    return Call(op, (as_shape_expr(shape),), InitAttrs(check(dtype)))


def _infer_full(call: Call) -> StructInfo:
    fill = call.args[1].struct_info
    if not isinstance(fill, TensorStructInfo | PrimStructInfo) or getattr(fill, "ndim", 0) != 0:
        raise fail(call, "expects a scalar fill value (a 0-d tensor or a PrimValue)")
    return _infer_init(call)


@register_op("full", infer=_infer_full)
def full(
    op: RelaxOp, shape: Sequence[object] | Expr, fill_value: Expr | float, dtype: str = "float32"
) -> Call:
    """A tensor of `shape` filled with `fill_value`.

    Example:
        >>> full((2,), 1.5).args[1].value
        1.50000000000000
    """
    value = fill_value if isinstance(fill_value, Expr) else PrimValue(float(fill_value), dtype)
    return Call(op, (as_shape_expr(shape), value), InitAttrs(check(dtype)))


@dataclass(frozen=True, slots=True)
class ArangeAttrs(Attrs):
    """``range(start, end, step)`` and the dtype of the result.

    Example:
        >>> arange(0, 8, 2).attrs
        ArangeAttrs(start=0, end=8, step=2, dtype='int64')
    """

    start: float
    end: float
    step: float
    dtype: str


def _infer_arange(call: Call) -> StructInfo:
    attrs = call.attrs
    assert isinstance(attrs, ArangeAttrs)
    if attrs.step == 0:
        raise fail(call, "expects a nonzero step")
    count = sympy.ceiling(sympy.Rational(str(attrs.end - attrs.start)) / sympy.Rational(str(attrs.step)))
    return TensorStructInfo((sympy.Max(count, 0),), attrs.dtype)


@register_op("arange", infer=_infer_arange)
def arange(
    op: RelaxOp, start: float, end: float | None = None, step: float = 1, dtype: str = "int64"
) -> Call:
    """``[start, start + step, ...)`` up to `end` (`arange(n)` counts from 0).

    Example:
        >>> arange(5).attrs.end
        5
    """
    if end is None:
        start, end = 0, start
    return Call(op, (), ArangeAttrs(start, end, step, check(dtype)))


@dataclass(frozen=True, slots=True)
class TriAttrs(Attrs):
    """The diagonal offset `k` of tril/triu.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> tril(x, 1).attrs
        TriAttrs(k=1)
    """

    k: int = 0


def _infer_tri(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    if 0 <= x.ndim < 2:
        raise fail(call, f"expects a tensor of rank at least 2, got rank {x.ndim}")
    return x


@register_op("tril", infer=_infer_tri)
def tril(op: RelaxOp, x: Expr, k: int = 0) -> Call:
    """Zero the entries above diagonal `k` of the last two axes.

    Example:
        >>> tril(x, 1).attrs.k  # doctest: +SKIP
        1
    """
    return Call(op, (x,), TriAttrs(k))


@register_op("triu", infer=_infer_tri)
def triu(op: RelaxOp, x: Expr, k: int = 0) -> Call:
    """Zero the entries below diagonal `k` of the last two axes.

    Example:
        >>> triu(x).attrs.k  # doctest: +SKIP
        0
    """
    return Call(op, (x,), TriAttrs(k))
