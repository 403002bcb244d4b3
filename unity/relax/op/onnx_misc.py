"""More ONNX-only ops (beside `onnx_extra`): builders and struct-info inference.

`bitcast` reads the bits of each element as another dtype (ONNX BitCast).  Their
legalization rules live in `relax.transform.legalize_ops.onnx_misc`.

Example:
    >>> from unity import relax
    >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    >>> bitcast(x, "int32").op.name
    'relax.bitcast'
"""

from __future__ import annotations

from unity.relax.expr import Call, Expr
from unity.relax.op.base import RelaxOp, fail, register_op, tensor_arg
from unity.relax.op.onnx_extra import DtypeAttrs
from unity.relax.struct_info import UNKNOWN_DTYPE, StructInfo, TensorStructInfo
from unity.topi.bitcast import can_bitcast


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
