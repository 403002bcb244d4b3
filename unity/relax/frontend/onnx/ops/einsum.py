"""Einsum as broadcast-multiply-and-sum: align every operand to one axis order, reduce.

Example:
    >>> _axis_order(["ij", "jk"], "ik")
    ['i', 'k', 'j']
"""

from __future__ import annotations

from collections.abc import Sequence

from unity.relax import op as R
from unity.relax.expr import Expr
from unity.relax.frontend.onnx.context import Context, Value


def _axis_order(terms: Sequence[str], rhs: str) -> list[str]:
    order = list(rhs)
    for term in terms:
        order.extend(c for c in term if c not in order)
    return order


def lower_einsum(ctx: Context, terms: Sequence[str], rhs: str, operands: Sequence[Expr]) -> Value:
    """Emit `einsum` of `operands` (no ellipsis, no repeated letter within a term).

    Example:
        >>> lower_einsum(ctx, ["ij", "jk"], "ik", [a, b])  # doctest: +SKIP
    """
    order = _axis_order(terms, rhs)
    aligned: list[Expr] = []
    for term, x in zip(terms, operands, strict=True):
        if len(set(term)) != len(term):
            raise ctx.fail(f"term {term!r} repeats a letter (diagonals are not supported)")
        present = sorted(term, key=order.index)
        if present != list(term):
            x = ctx.emit(R.permute_dims(x, [term.index(c) for c in present]))
        missing = [i for i, c in enumerate(order) if c not in term]
        if missing:
            x = ctx.emit(R.expand_dims(x, missing))
        aligned.append(x)
    out = aligned[0]
    for other in aligned[1:]:
        out = ctx.emit(R.multiply(out, other))
    reduced = list(range(len(rhs), len(order)))
    return ctx.emit(R.sum(out, reduced)) if reduced else out
