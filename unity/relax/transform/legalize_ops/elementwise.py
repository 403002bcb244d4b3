"""Legalize elementwise ops: unary math and predicates, binary ops, `where`, `clip`, `astype`.

Bitwise ops go to `topi.bitwise_*` (bit by bit on integers: TIR has no bit operators).

Example:
    >>> from unity.relax import op
    >>> op.exp.get_attr("legalize").__name__
    'legalize_exp'
"""

from __future__ import annotations

from unity import topi
from unity.relax import op
from unity.relax.transform.legalize_ops.common import attrs_rule, register_legalize, te_rule

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


register_legalize(op.bitwise_and, te_rule(topi.bitwise_and))
register_legalize(op.bitwise_or, te_rule(topi.bitwise_or))
register_legalize(op.bitwise_not, te_rule(topi.bitwise_not))
