"""Legalize elementwise ops: unary math and predicates, binary ops, `where`, `clip`, `astype`.

Bitwise ops go to `topi.bitwise_*` (bit by bit on integers: TIR has no bit operators).

Example:
    >>> from unity.relax import op
    >>> op.exp.get_attr("legalize").__name__
    'legalize_exp'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from unity import topi
from unity.relax import op
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Call, Constant, Expr
from unity.relax.transform.legalize_ops.common import (
    LegalizeFn,
    attrs_rule,
    call_te,
    register_legalize,
    te_rule,
)

_SAME_NAME = [
    # unary
    "abs", "negative", "sign", "square", "floor", "ceil", "round", "exp", "log", "sqrt",
    "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "logical_not", "isnan", "isinf",
    "isfinite",
    # ternary
    "where",
]  # fmt: skip

_BINARY = [
    "add", "subtract", "multiply", "divide", "floor_divide", "mod", "floor_mod", "power",
    "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or",
]  # fmt: skip


def binary_rule(topi_fn: Callable[..., Any]) -> LegalizeFn:
    """A rule for a binary op that passes a scalar constant operand as an immediate.

    ``x * R.const(0.5)`` becomes a kernel computing ``x[i] * T.float32(0.5)`` rather
    than one reading a 0-d buffer parameter: the constant is visible to the TIR passes
    (``pow(x, 0.75)`` lowers to square roots) and the kernel has one parameter fewer.

    Example:
        >>> binary_rule(topi.multiply).__name__
        'legalize_multiply'
    """

    def rule(bb: BlockBuilder, call: Call) -> Expr:
        a, b = call.args
        if _is_scalar_constant(b) and not isinstance(a, Constant):
            b = b.data.item()
        elif _is_scalar_constant(a) and not isinstance(b, Constant):
            a = a.data.item()
        return call_te(bb, call, topi_fn, a, b)

    rule.__name__ = f"legalize_{topi_fn.__name__}"
    return rule


def _is_scalar_constant(expr: Expr) -> bool:
    return isinstance(expr, Constant) and expr.data.ndim == 0 and expr.data.dtype.kind in "fiub"


for _name in _SAME_NAME:
    register_legalize(getattr(op, _name), te_rule(getattr(topi, _name)))
for _name in _BINARY:
    register_legalize(getattr(op, _name), binary_rule(getattr(topi, _name)))

register_legalize(op.clip, attrs_rule(topi.clip, lambda a: {"a_min": a.min, "a_max": a.max}))
register_legalize(op.astype, attrs_rule(topi.cast, lambda a: {"dtype": a.dtype}))


register_legalize(op.bitwise_and, te_rule(topi.bitwise_and))
register_legalize(op.bitwise_or, te_rule(topi.bitwise_or))
register_legalize(op.bitwise_not, te_rule(topi.bitwise_not))
