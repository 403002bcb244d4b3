"""Reductions (sum, mean, max, min, prod, variance), argmax/argmin, and cumsum.

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 4), "float32"))
    >>> sum(x, axis=1).attrs.axis
    (1,)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import RelaxOp, normalize_axis, register_op, tensor_arg, with_shape
from unity.relax.struct_info import StructInfo, TensorStructInfo


@dataclass(frozen=True, slots=True)
class ReduceAttrs(Attrs):
    """Axes to reduce (None: all) and whether to keep them as size-1 dims.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> sum(x, axis=1, keepdims=True).attrs
        ReduceAttrs(axis=(1,), keepdims=True)
    """

    axis: tuple[int, ...] | None = None
    keepdims: bool = False


def _reduce(call: Call, out_dtype: str | None = None) -> TensorStructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, ReduceAttrs)
    dtype = out_dtype or x.dtype
    if x.ndim < 0:
        return TensorStructInfo(None, dtype, -1)
    axes = set(range(x.ndim)) if attrs.axis is None else {
        normalize_axis(call, a, x.ndim) for a in attrs.axis
    }
    if x.shape is None:
        ndim = x.ndim if attrs.keepdims else x.ndim - len(axes)
        return TensorStructInfo(None, dtype, ndim)
    one = sympy.Integer(1)
    dims = [one if i in axes else d for i, d in enumerate(x.shape) if attrs.keepdims or i not in axes]
    return with_shape(TensorStructInfo(x.shape, dtype), dims)


def infer_reduce(call: Call) -> StructInfo:
    """Drop (or keep as 1) the reduced axes; the dtype is kept.

    Example:
        >>> infer_reduce(sum(x, axis=1)).shape  # doctest: +SKIP
        (n,)
    """
    return _reduce(call)


def infer_arg_reduce(call: Call) -> StructInfo:
    """Like `infer_reduce`, but the result holds int64 indices.

    Example:
        >>> infer_arg_reduce(argmax(x, 1)).dtype  # doctest: +SKIP
        'int64'
    """
    return _reduce(call, "int64")


def _axes(axis: int | Sequence[int] | None) -> tuple[int, ...] | None:
    return (axis,) if isinstance(axis, int) else (None if axis is None else tuple(axis))


def _reduction(name: str, infer: object = infer_reduce) -> RelaxOp:
    def make(
        op: RelaxOp, x: Expr, axis: int | Sequence[int] | None = None, keepdims: bool = False
    ) -> Call:
        return Call(op, (x,), ReduceAttrs(_axes(axis), keepdims))

    make.__doc__ = f"`{name}` of `x` over `axis` (all axes when None)."
    return register_op(name, infer=infer)(make)  # type: ignore[arg-type]  # an InferFn


sum = _reduction("sum")
mean = _reduction("mean")
max = _reduction("max")
min = _reduction("min")
prod = _reduction("prod")
variance = _reduction("variance")
argmax = _reduction("argmax", infer_arg_reduce)
argmin = _reduction("argmin", infer_arg_reduce)


@dataclass(frozen=True, slots=True)
class CumsumAttrs(Attrs):
    """Axis (None: flatten first) and result dtype of `cumsum`.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> cumsum(x, axis=1).attrs
        CumsumAttrs(axis=1, dtype=None)
    """

    axis: int | None = None
    dtype: str | None = None


def _infer_cumsum(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, CumsumAttrs)
    dtype = attrs.dtype or x.dtype
    if attrs.axis is None:
        if x.shape is None:
            return TensorStructInfo(None, dtype, 1)
        total = sympy.Mul(*x.shape)
        return with_shape(TensorStructInfo(x.shape, dtype), [sympy.expand(total)])
    normalize_axis(call, attrs.axis, x.ndim)
    return TensorStructInfo(x.shape, dtype, x.ndim)


@register_op("cumsum", infer=_infer_cumsum)
def cumsum(op: RelaxOp, x: Expr, axis: int | None = None, dtype: str | None = None) -> Call:
    """Cumulative sum along `axis` (of the flattened input when None).

    Example:
        >>> cumsum(x, axis=1).attrs.axis  # doctest: +SKIP
        1
    """
    return Call(op, (x,), CumsumAttrs(axis, dtype))
