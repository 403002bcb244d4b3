"""Legalize tensor creation: zeros, ones, full, arange, tril, triu.

Example:
    >>> from unity.relax import op
    >>> op.full.get_attr("legalize").__name__
    'legalize_full'
"""

from __future__ import annotations

from unity import topi
from unity.relax import op
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Call, Expr, PrimValue
from unity.relax.transform.legalize_ops.common import (
    attrs_rule, call_te, known_shape, register_legalize,
)  # fmt: skip


def _fill_rule(value: float) -> object:
    def rule(bb: BlockBuilder, call: Call) -> Expr:
        return call_te(bb, call, topi.full, known_shape(call), call.attrs.dtype, value)  # type: ignore[union-attr]

    return rule


def legalize_full(bb: BlockBuilder, call: Call) -> Expr:
    """`full(shape, fill, dtype)` -> `topi.full`; a `PrimValue` fill becomes a constant.

    Example:
        >>> legalize_full(bb, op.full((2,), 1.5))  # doctest: +SKIP
    """
    fill = call.args[1]
    value: object = fill
    if isinstance(fill, PrimValue):
        number = float(fill.value)
        value = (
            int(number) if number.is_integer() and not fill.dtype.startswith("float") else number
        )
    return call_te(bb, call, topi.full, known_shape(call), call.attrs.dtype, value)  # type: ignore[union-attr]


def legalize_arange(bb: BlockBuilder, call: Call) -> Expr:
    """`arange(start, end, step, dtype)` -> `topi.arange`.

    Example:
        >>> legalize_arange(bb, op.arange(5))  # doctest: +SKIP
    """
    a = call.attrs
    return call_te(bb, call, topi.arange, a.start, a.end, a.step, a.dtype)  # type: ignore[union-attr]


register_legalize(op.zeros, _fill_rule(0))  # type: ignore[arg-type]  # a LegalizeFn
register_legalize(op.ones, _fill_rule(1))  # type: ignore[arg-type]  # a LegalizeFn
register_legalize(op.full, legalize_full)
register_legalize(op.arange, legalize_arange)
register_legalize(op.tril, attrs_rule(topi.tril, lambda a: {"k": a.k}))
register_legalize(op.triu, attrs_rule(topi.triu, lambda a: {"k": a.k}))
