"""Elementwise binary ops with numpy broadcasting; comparisons and logic give bool.

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 1), "float32"))
    >>> y = Var("y", TensorStructInfo((4,), "float32"))
    >>> add(x, y).op.name
    'relax.add'
"""

from __future__ import annotations

from unity.relax.expr import Call, Expr
from unity.relax.op.base import RelaxOp, infer_elementwise, register_op
from unity.relax.struct_info import StructInfo


def infer_binary(call: Call) -> StructInfo:
    """Broadcast both inputs; they must share a dtype.

    Example:
        >>> infer_binary(add(x, y)).shape  # doctest: +SKIP
        (n, 4)
    """
    return infer_elementwise(call)


def infer_compare(call: Call) -> StructInfo:
    """Broadcast both inputs (same dtype); the result is bool.

    Example:
        >>> infer_compare(less(x, y)).dtype  # doctest: +SKIP
        'bool'
    """
    return infer_elementwise(call, out_dtype="bool")


def _binary(name: str, infer: object = infer_binary) -> RelaxOp:
    def make(op: RelaxOp, x1: Expr, x2: Expr) -> Call:
        return Call(op, (x1, x2))

    make.__doc__ = f"Elementwise `{name}(x1, x2)` with broadcasting."
    return register_op(name, infer=infer, broadcasts=True)(make)  # type: ignore[arg-type]  # an InferFn


add = _binary("add")
subtract = _binary("subtract")
multiply = _binary("multiply")
divide = _binary("divide")
floor_divide = _binary("floor_divide")
mod = _binary("mod")
floor_mod = _binary("floor_mod")
power = _binary("power")
maximum = _binary("maximum")
minimum = _binary("minimum")
bitwise_and = _binary("bitwise_and")
bitwise_or = _binary("bitwise_or")
equal = _binary("equal", infer_compare)
not_equal = _binary("not_equal", infer_compare)
less = _binary("less", infer_compare)
less_equal = _binary("less_equal", infer_compare)
greater = _binary("greater", infer_compare)
greater_equal = _binary("greater_equal", infer_compare)
logical_and = _binary("logical_and", infer_compare)
logical_or = _binary("logical_or", infer_compare)
