"""VM builtins the lowering passes emit: ``R.builtin.alloc_tensor`` (a fresh output tensor).

Example:
    >>> t = alloc_tensor((2, "n"), "float32")
    >>> t.op.name, t.struct_info_ is None
    ('relax.builtin.alloc_tensor', True)
"""

from __future__ import annotations

from collections.abc import Sequence

from unity.relax.expr import Call, DataTypeImm, Expr, PrimValue, ShapeExpr
from unity.relax.op.base import RelaxOp, fail, register_op, shape_arg
from unity.relax.struct_info import StructInfo, TensorStructInfo


def _infer_alloc(call: Call) -> StructInfo:
    dtype = call.args[1]
    if not isinstance(dtype, DataTypeImm):
        raise fail(call, "expects a dtype literal as argument 1")
    return TensorStructInfo(shape_arg(call, 0), dtype.value)


@register_op("builtin.alloc_tensor", infer=_infer_alloc, pure=False)
def alloc_tensor(
    op: RelaxOp, shape: Sequence[object] | Expr, dtype: str, runtime_device_index: int = 0
) -> Call:
    """Allocate an uninitialized tensor of `shape` and `dtype` (the VM may pool its storage).

    Example:
        >>> alloc_tensor((4,), "int8").args[1].value
        'int8'
    """
    shape_expr = shape if isinstance(shape, Expr) else ShapeExpr(tuple(shape))
    return Call(op, (shape_expr, DataTypeImm(dtype), PrimValue(runtime_device_index)))
