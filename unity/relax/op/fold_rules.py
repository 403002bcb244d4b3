"""Constant-folding rules: each simple op's `fold` attribute, computed with numpy.

A rule is ``fold(call, *values) -> np.ndarray | None``: `values` are the call's
arguments evaluated (a `Constant` gives its array, a static `ShapeExpr` a tuple of
ints, a `Tuple` of constants a tuple of arrays). `None` declines. `FoldConstant`
casts the result to the call's dtype and checks its shape.

Example:
    >>> import numpy as np
    >>> from unity.relax import op, const
    >>> call = op.add(const([1.0]), const([2.0]))
    >>> op.add.get_attr("fold")(call, np.float32([1]), np.float32([2]))
    array([3.], dtype=float32)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from unity.relax import op
from unity.relax.expr import Call
from unity.relax.op.datatype import AstypeAttrs
from unity.relax.op.linear_algebra import MatmulAttrs
from unity.relax.op.create import TriAttrs
from unity.relax.op.manipulate import AxesAttrs, AxisAttrs, SplitAttrs, StridedSliceAttrs
from unity.relax.op.nn.activation import SoftmaxAttrs
from unity.relax.op.nn.pad import PadAttrs
from unity.relax.op.statistical import CumsumAttrs, ReduceAttrs
from unity.relax.op.unary import ClipAttrs

FoldFn = Callable[..., "np.ndarray | None"]
"""``fold(call, *values)``: the folded value, or None to decline."""


def _elementwise(fn: Callable[..., Any]) -> FoldFn:
    """Wrap a numpy ufunc-like `fn(*arrays)` as a rule that ignores the call."""

    def fold(call: Call, *values: Any) -> np.ndarray:
        return np.asarray(fn(*values))

    return fold


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0).astype(x.dtype)))


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if not np.issubdtype(a.dtype, np.integer):
        return np.divide(a, b)
    quotient = np.abs(a) // np.abs(b)  # integers truncate toward zero, as in C
    return (quotient * np.sign(a) * np.sign(b)).astype(a.dtype)


def _power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return np.power(a.astype("float64"), b.astype("float64")).astype(a.dtype)
    return np.power(a, b)


_ELEMENTWISE: dict[op.RelaxOp, Callable[..., Any]] = {
    op.abs: np.abs, op.negative: np.negative, op.sign: np.sign, op.square: np.square,
    op.floor: np.floor, op.ceil: np.ceil, op.round: np.round, op.exp: np.exp, op.log: np.log,
    op.sqrt: np.sqrt, op.rsqrt: lambda x: 1.0 / np.sqrt(x), op.sin: np.sin, op.cos: np.cos,
    op.tan: np.tan, op.tanh: np.tanh, op.sigmoid: _sigmoid, op.erf: _erf,
    op.logical_not: np.logical_not, op.bitwise_not: np.invert, op.isnan: np.isnan,
    op.isinf: np.isinf, op.isfinite: np.isfinite,
    op.add: np.add, op.subtract: np.subtract, op.multiply: np.multiply, op.divide: _divide,
    op.floor_divide: np.floor_divide, op.floor_mod: np.mod, op.mod: np.fmod,
    op.power: _power, op.maximum: np.maximum, op.minimum: np.minimum,
    op.bitwise_and: np.bitwise_and, op.bitwise_or: np.bitwise_or, op.equal: np.equal,
    op.not_equal: np.not_equal, op.less: np.less, op.less_equal: np.less_equal,
    op.greater: np.greater, op.greater_equal: np.greater_equal,
    op.logical_and: np.logical_and, op.logical_or: np.logical_or, op.where: np.where,
    op.nn.relu: lambda x: np.maximum(x, 0).astype(x.dtype), op.nn.gelu: _gelu,
    op.nn.silu: lambda x: x * _sigmoid(x),
}  # fmt: skip


def _attrs(call: Call, cls: type) -> Any:
    assert isinstance(call.attrs, cls), f"{call.op} carries {type(call.attrs).__name__}"
    return call.attrs


def _clip(call: Call, x: np.ndarray) -> np.ndarray:
    attrs = _attrs(call, ClipAttrs)
    return np.clip(x, attrs.min, attrs.max)


def _reshape(call: Call, x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return x.reshape(shape)


def _permute_dims(call: Call, x: np.ndarray) -> np.ndarray:
    return np.transpose(x, _attrs(call, AxesAttrs).axes)


def _squeeze(call: Call, x: np.ndarray) -> np.ndarray:
    return np.squeeze(x, _attrs(call, AxesAttrs).axes)


def _expand_dims(call: Call, x: np.ndarray) -> np.ndarray:
    return np.expand_dims(x, _attrs(call, AxesAttrs).axes)


def _flatten(call: Call, x: np.ndarray) -> np.ndarray:
    return x.reshape(-1)


def _concat(call: Call, xs: tuple[np.ndarray, ...]) -> np.ndarray:
    return np.concatenate(xs, axis=_attrs(call, AxisAttrs).axis)


def _broadcast_to(call: Call, x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(x, shape).copy()


def _strided_slice(call: Call, x: np.ndarray) -> np.ndarray:
    attrs = _attrs(call, StridedSliceAttrs)
    index = [slice(None)] * x.ndim
    strides = attrs.strides or (1,) * len(attrs.axes)
    for axis, begin, end, step in zip(attrs.axes, attrs.begin, attrs.end, strides, strict=True):
        index[axis] = slice(begin, end, step)
    return x[tuple(index)]


def _astype(call: Call, x: np.ndarray) -> np.ndarray:
    return x.astype(_attrs(call, AstypeAttrs).dtype)


def _matmul(call: Call, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out_dtype = _attrs(call, MatmulAttrs).out_dtype
    return np.matmul(a, b).astype(out_dtype or a.dtype)


def _softmax(call: Call, x: np.ndarray) -> np.ndarray:
    axis = _attrs(call, SoftmaxAttrs).axis
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _reduce(fn: Callable[..., np.ndarray]) -> FoldFn:
    def fold(call: Call, x: np.ndarray) -> np.ndarray:
        attrs = _attrs(call, ReduceAttrs)
        return np.asarray(fn(x, axis=attrs.axis, keepdims=attrs.keepdims))

    return fold


def _arg_reduce(fn: Callable[..., np.ndarray]) -> FoldFn:
    def fold(call: Call, x: np.ndarray) -> np.ndarray | None:
        attrs = _attrs(call, ReduceAttrs)
        if attrs.axis is not None and len(attrs.axis) != 1:
            return None  # numpy reduces one axis (or all) at a time
        axis = None if attrs.axis is None else attrs.axis[0]
        out = fn(x, axis=axis, keepdims=attrs.keepdims)
        return np.asarray(out).astype("int64")

    return fold


def _split(call: Call, x: np.ndarray) -> tuple[np.ndarray, ...]:
    attrs = _attrs(call, SplitAttrs)
    return tuple(np.split(x, attrs.indices_or_sections, axis=attrs.axis))


def _take(call: Call, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    return np.take(x, indices, axis=_attrs(call, AxisAttrs).axis)


def _cumsum(call: Call, x: np.ndarray) -> np.ndarray:
    attrs = _attrs(call, CumsumAttrs)
    return np.cumsum(x, axis=attrs.axis, dtype=attrs.dtype)


def _pad(call: Call, x: np.ndarray) -> np.ndarray | None:
    """A bias padded to whole channel blocks (`ConvertLayout`) is a constant, not a kernel
    run on every call (constant padding; the other modes stay kernels)."""
    attrs = _attrs(call, PadAttrs)
    if attrs.pad_mode != "constant":
        return None
    widths = list(zip(attrs.pad_width[::2], attrs.pad_width[1::2], strict=True))
    return np.pad(x, widths, constant_values=np.asarray(attrs.pad_value, x.dtype))


def _tri(fn: Callable[..., np.ndarray]) -> FoldFn:
    def fold(call: Call, x: np.ndarray) -> np.ndarray:
        return fn(x, _attrs(call, TriAttrs).k)

    return fold


_WITH_ATTRS: dict[op.RelaxOp, FoldFn] = {
    op.clip: _clip, op.reshape: _reshape, op.permute_dims: _permute_dims,
    op.squeeze: _squeeze, op.expand_dims: _expand_dims, op.flatten: _flatten,
    op.concat: _concat, op.strided_slice: _strided_slice, op.broadcast_to: _broadcast_to, op.astype: _astype,
    op.matmul: _matmul, op.nn.softmax: _softmax, op.sum: _reduce(np.sum),
    op.mean: _reduce(np.mean), op.max: _reduce(np.max), op.min: _reduce(np.min),
    op.prod: _reduce(np.prod), op.variance: _reduce(np.var), op.argmax: _arg_reduce(np.argmax),
    op.argmin: _arg_reduce(np.argmin), op.split: _split, op.take: _take, op.cumsum: _cumsum,
    op.tril: _tri(np.tril), op.triu: _tri(np.triu), op.nn.pad: _pad,
}  # fmt: skip


def register_fold_rules() -> None:
    """Set the `fold` attribute of every op above that has none yet (idempotent).

    Example:
        >>> register_fold_rules()
        >>> op.exp.get_attr("fold") is not None
        True
    """
    for relax_op, fn in _ELEMENTWISE.items():
        if relax_op.get_attr("fold") is None:
            relax_op.set_attr("fold", _elementwise(fn))
    for relax_op, rule in _WITH_ATTRS.items():
        if relax_op.get_attr("fold") is None:
            relax_op.set_attr("fold", rule)


register_fold_rules()
