"""`where(condition, x1, x2)`: broadcast all three; the condition must be bool.

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> c = Var("c", TensorStructInfo(("n", 1), "bool"))
    >>> x = Var("x", TensorStructInfo((4,), "float32"))
    >>> where(c, x, x).op is where
    True
"""

from __future__ import annotations

from unity.relax.expr import Call, Expr
from unity.relax.op.base import (
    RelaxOp, broadcast_shapes, fail, register_op, tensor_arg, unify_dtype,
)  # fmt: skip
from unity.relax.struct_info import StructInfo, TensorStructInfo


def _infer_where(call: Call) -> StructInfo:
    cond, x1, x2 = (tensor_arg(call, i) for i in range(3))
    if cond.dtype not in ("bool", "void"):
        raise fail(call, f"expects a bool condition, got dtype {cond.dtype}")
    dtype = unify_dtype(call, [x1.dtype, x2.dtype])
    infos = (cond, x1, x2)
    if any(s.shape is None for s in infos):
        ndim = -1 if any(s.ndim < 0 for s in infos) else max(s.ndim for s in infos)
        return TensorStructInfo(None, dtype, ndim)
    shape = broadcast_shapes(call, [s.shape for s in infos])  # type: ignore[misc]  # checked
    return TensorStructInfo(shape, dtype, max(s.ndim for s in infos))


@register_op("where", infer=_infer_where, broadcasts=True)
def where(op: RelaxOp, condition: Expr, x1: Expr, x2: Expr) -> Call:
    """Pick `x1` where `condition` holds, else `x2` (broadcasting).

    Example:
        >>> where(c, x, x).args[0] is c  # doctest: +SKIP
        True
    """
    return Call(op, (condition, x1, x2))
