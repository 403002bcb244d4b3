"""`matmul`: numpy matmul semantics (1-D promotion, batched, broadcasting batch dims).

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> a = Var("a", TensorStructInfo(("n", 4), "float32"))
    >>> b = Var("b", TensorStructInfo((4, 8), "float32"))
    >>> matmul(a, b).op is matmul
    True
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import (
    RelaxOp, broadcast_shapes, fail, register_op, tensor_arg, unify_dtype,
)  # fmt: skip
from unity.relax.struct_info import StructInfo, TensorStructInfo, format_shape, prove_not_equal


@dataclass(frozen=True, slots=True)
class MatmulAttrs(Attrs):
    """The result dtype (`None`: the inputs' dtype).

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> w = relax.Var("w", relax.TensorStructInfo((3, 4), "float32"))
        >>> matmul(x, w, out_dtype="float16").attrs
        MatmulAttrs(out_dtype='float16')
    """

    out_dtype: str | None = None


def infer_matmul(call: Call) -> StructInfo:
    """Batch dims broadcast; the reduction dims must agree.

    Example:
        >>> infer_matmul(matmul(a, b)).shape  # doctest: +SKIP
        (n, 8)
    """
    a, b = tensor_arg(call, 0, "left operand"), tensor_arg(call, 1, "right operand")
    attrs = call.attrs
    assert isinstance(attrs, MatmulAttrs)
    dtype = attrs.out_dtype or unify_dtype(call, [a.dtype, b.dtype])
    if a.ndim == 0 or b.ndim == 0:
        raise fail(call, "expects operands of rank at least 1, got a scalar")
    if a.shape is None or b.shape is None:
        ndim = -1 if a.ndim < 0 or b.ndim < 0 else max(a.ndim, b.ndim) - (a.ndim == 1) - (b.ndim == 1)
        return TensorStructInfo(None, dtype, max(ndim, -1))
    sa = a.shape if a.ndim > 1 else (1, *a.shape)
    sb = b.shape if b.ndim > 1 else (*b.shape, 1)
    if prove_not_equal(sa[-1], sb[-2]):
        msg = f"reduces over mismatched dims: {sa[-1]} vs {sb[-2]}"
        raise fail(call, f"{msg} (shapes {format_shape(a.shape)} and {format_shape(b.shape)})")
    batch = broadcast_shapes(call, [tuple(sa[:-2]), tuple(sb[:-2])])  # type: ignore[arg-type]
    if batch is None:
        return TensorStructInfo(None, dtype, max(len(sa), len(sb)) - (a.ndim == 1) - (b.ndim == 1))
    out = [*batch]
    if a.ndim > 1:
        out.append(sa[-2])
    if b.ndim > 1:
        out.append(sb[-1])
    return TensorStructInfo(tuple(out), dtype)


@register_op("matmul", infer=infer_matmul)
def matmul(op: RelaxOp, x1: Expr, x2: Expr, out_dtype: str | None = None) -> Call:
    """Matrix product of `x1` and `x2` (numpy `matmul`).

    Example:
        >>> matmul(a, b).attrs.out_dtype is None  # doctest: +SKIP
        True
    """
    return Call(op, (x1, x2), MatmulAttrs(out_dtype))


def infer_det(call: Call) -> StructInfo:
    """Square matrices (..., M, M) of floats give their determinants (...).

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo(("n", 3, 3), "float32"))
        >>> infer_det(det(x)).ndim
        1
    """
    x = tensor_arg(call, 0, "input")
    if x.dtype and not x.dtype.startswith(("float", "bfloat")):
        raise fail(call, f"expects a float tensor, got {x.dtype}")
    if 0 <= x.ndim < 2:
        raise fail(call, f"expects matrices (..., M, M), got rank {x.ndim}")
    if x.shape is None:
        return TensorStructInfo(None, x.dtype, max(x.ndim - 2, -1))
    if prove_not_equal(x.shape[-2], x.shape[-1]):
        raise fail(call, f"expects square matrices, got shape {format_shape(x.shape)}")
    return TensorStructInfo(tuple(x.shape[:-2]), x.dtype)


@register_op("det", infer=infer_det)
def det(op: RelaxOp, x: Expr) -> Call:
    """The determinant of each square matrix in `x` (ONNX Det).

    Example:
        >>> det(x).op is det  # doctest: +SKIP
        True
    """
    return Call(op, (x,))
