"""More ONNX-only ops (beside `onnx_extra`): builders and struct-info inference.

`bitcast` reads the bits of each element as another dtype (ONNX BitCast); `col2im` sums
sliding-window columns into an image (ONNX Col2Im).  Their
legalization rules live in `relax.transform.legalize_ops.onnx_misc`.

Example:
    >>> from unity import relax
    >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    >>> bitcast(x, "int32").op.name
    'relax.bitcast'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import RelaxOp, fail, register_op, tensor_arg, with_shape
from unity.relax.op.onnx_extra import DtypeAttrs
from unity.relax.struct_info import UNKNOWN_DTYPE, StructInfo, TensorStructInfo
from unity.topi.bitcast import can_bitcast
from unity.topi.nn.col2im import col2im_blocks


def _infer_bitcast(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, DtypeAttrs)
    if x.dtype != UNKNOWN_DTYPE:
        why = can_bitcast(x.dtype, attrs.dtype)
        if why is not None:
            raise fail(call, f"cannot read {x.dtype} as {attrs.dtype}: {why}")
    return TensorStructInfo(x.shape, attrs.dtype, x.ndim)


@register_op("bitcast", infer=_infer_bitcast)
def bitcast(op: RelaxOp, x: Expr, dtype: str) -> Call:
    """The bits of every element of `x` read as `dtype` of the same width (ONNX BitCast).

    Example:
        >>> bitcast(x, "int32").attrs.dtype  # doctest: +SKIP
        'int32'
    """
    return Call(op, (x,), DtypeAttrs(dtype))


@dataclass(frozen=True, slots=True)
class Col2ImAttrs(Attrs):
    """Image and block (kernel) shapes, dilations, pads (all begins, then all ends), strides.

    Example:
        >>> Col2ImAttrs((4, 4), (2, 2), (1, 1), (0, 0, 0, 0), (1, 1)).image
        (4, 4)
    """

    image: tuple[int, ...]
    block: tuple[int, ...]
    dilations: tuple[int, ...]
    pads: tuple[int, ...]
    strides: tuple[int, ...]


def _infer_col2im(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    a = call.attrs
    assert isinstance(a, Col2ImAttrs)
    if x.ndim not in (-1, 3):
        raise fail(call, f"expects a (N, C * prod(block), L) input, got rank {x.ndim}")
    blocks = col2im_blocks(a.image, a.block, a.dilations, a.pads, a.strides)
    if min(blocks) < 1:
        raise fail(call, f"leaves no window: block {list(a.block)} on image {list(a.image)}")
    if x.shape is None:
        return TensorStructInfo(None, x.dtype, 2 + len(a.image))
    size, count = math.prod(a.block), math.prod(blocks)
    rows, length = x.shape[1], x.shape[2]
    if not rows.is_number or int(rows) % size != 0:
        raise fail(call, f"expects input dim 1 a multiple of prod(block) = {size}, got {rows}")
    if not length.is_number or int(length) != count:
        raise fail(call, f"expects input dim 2 = {count} windows {blocks}, got {length}")
    return with_shape(x, [x.shape[0], int(rows) // size, *a.image])


@register_op("col2im", infer=_infer_col2im)
def col2im(op: RelaxOp, x: Expr, attrs: Col2ImAttrs) -> Call:
    """Sum the columns of `x` into images ``(N, C, *attrs.image)`` (ONNX Col2Im).

    Example:
        >>> col2im(x, Col2ImAttrs((4, 4), (2, 2), (1, 1), (0,) * 4, (1, 1))).op.name  # doctest: +SKIP
        'relax.col2im'
    """
    return Call(op, (x,), attrs)
