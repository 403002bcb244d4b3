"""`astype`: cast every element to another dtype.

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n",), "float32"))
    >>> astype(x, "int8").attrs.dtype
    'int8'
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.dtype import check
from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import RelaxOp, register_op, tensor_arg
from unity.relax.struct_info import StructInfo, TensorStructInfo


@dataclass(frozen=True, slots=True)
class AstypeAttrs(Attrs):
    """The target dtype of `astype`.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> astype(x, "float16").attrs
        AstypeAttrs(dtype='float16')
    """

    dtype: str


def _infer_astype(call: Call) -> StructInfo:
    sinfo = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, AstypeAttrs)
    return TensorStructInfo(sinfo.shape, attrs.dtype, sinfo.ndim)


@register_op("astype", infer=_infer_astype)
def astype(op: RelaxOp, x: Expr, dtype: str) -> Call:
    """Cast `x` to `dtype`.

    Example:
        >>> astype(x, "float16").op is astype  # doctest: +SKIP
        True
    """
    return Call(op, (x,), AstypeAttrs(check(dtype)))
