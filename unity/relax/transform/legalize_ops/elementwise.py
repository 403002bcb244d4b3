"""Legalize elementwise ops: unary math and predicates, binary ops, `where`, `clip`, `astype`.

Bitwise ops are legalized on bool tensors (as logical ops); on integers TIR has no bitwise
operators yet, so those calls stay as they are.

Example:
    >>> from unity.relax import op
    >>> op.exp.get_attr("legalize").__name__
    'legalize_exp'
"""

from __future__ import annotations

from collections.abc import Callable

from unity import topi
from unity.relax import op
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Call, Expr
from unity.relax.struct_info import TensorStructInfo
from unity.relax.transform.legalize_ops.common import (
    LegalizeFn, attrs_rule, call_te, register_legalize, te_rule,
)  # fmt: skip

_SAME_NAME = [
    # unary
    "abs", "negative", "sign", "square", "floor", "ceil", "round", "exp", "log", "sqrt",
    "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "logical_not", "isnan", "isinf",
    "isfinite",
    # binary
    "add", "subtract", "multiply", "divide", "floor_divide", "mod", "floor_mod", "power",
    "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or",
    # ternary
    "where",
]  # fmt: skip

for _name in _SAME_NAME:
    register_legalize(getattr(op, _name), te_rule(getattr(topi, _name)))

register_legalize(op.clip, attrs_rule(topi.clip, lambda a: {"a_min": a.min, "a_max": a.max}))
register_legalize(op.astype, attrs_rule(topi.cast, lambda a: {"dtype": a.dtype}))


def bool_only(topi_fn: Callable[..., object]) -> LegalizeFn:
    """A rule applying the logical `topi_fn` to bool tensors; other dtypes stay unlegalized.

    Example:
        >>> bool_only(topi.logical_and).__name__
        'legalize_logical_and_on_bool'
    """

    def rule(bb: BlockBuilder, call: Call) -> Expr:
        sinfo = call.args[0].struct_info
        if not isinstance(sinfo, TensorStructInfo) or sinfo.dtype != "bool":
            return call
        return call_te(bb, call, topi_fn, *call.args)

    rule.__name__ = f"legalize_{getattr(topi_fn, '__name__', 'te')}_on_bool"
    return rule


register_legalize(op.bitwise_and, bool_only(topi.logical_and))
register_legalize(op.bitwise_or, bool_only(topi.logical_or))
register_legalize(op.bitwise_not, bool_only(topi.logical_not))
