"""Hashable structural keys of TIR expressions (variables by identity).

Two expressions get the same key exactly when they are structurally equal with free
variables compared by identity.  The simplifier keys linear-form atoms, known facts and
pattern-variable bindings with them, so `i // 4` built twice counts as one atom.

Example:
    >>> from unity import tir
    >>> i = tir.Var("i")
    >>> expr_key(i // 4) == expr_key(i // 4), expr_key(i // 4) == expr_key(i // 8)
    (True, False)
"""

from __future__ import annotations

from collections.abc import Hashable

from unity.ir.node import Node
from unity.tir.expr import BinaryOp, FloatImm, IntImm, PrimExpr, Var
from unity.tir.functor import child_fields


def expr_key(expr: PrimExpr, memo: dict[Node, Hashable] | None = None) -> Hashable:
    """Return a hashable key equal for structurally equal expressions.

    Args:
        expr: the expression.
        memo: optional identity-keyed cache shared between calls.

    Returns:
        The variable itself for a `Var`, `(dtype, value)` for immediates, else a tuple
        of the class, the non-child fields and the children's keys.

    Example:
        >>> from unity import tir
        >>> expr_key(tir.const(3))
        ('int32', 3)
    """
    if isinstance(expr, Var):
        return expr
    if memo is not None:
        done = memo.get(expr)
        if done is not None:
            return done
    key = _compute(expr, memo)
    if memo is not None:
        memo[expr] = key
    return key


def _compute(expr: PrimExpr, memo: dict[Node, Hashable] | None) -> Hashable:
    cls = type(expr)
    if cls is IntImm or cls is FloatImm:
        return (expr.dtype, expr.value)  # type: ignore[attr-defined]  # immediates have value
    # a binary node's dtype follows its operands, which the children's keys already hold
    parts: list[Hashable] = [cls] if isinstance(expr, BinaryOp) else [cls, expr.dtype]
    for name in child_fields(cls):
        parts.append(_value_key(getattr(expr, name), memo))
    op = getattr(expr, "op", None)
    if op is not None:
        parts.append(id(op))
    lanes = getattr(expr, "lanes", None)
    if lanes is not None:
        parts.append(lanes)
    return tuple(parts)


def _value_key(value: object, memo: dict[Node, Hashable] | None) -> Hashable:
    if isinstance(value, PrimExpr):
        return expr_key(value, memo)
    if isinstance(value, tuple):
        return tuple(_value_key(v, memo) for v in value)  # type: ignore[union-attr]
    if isinstance(value, Node):
        return ("node", id(value))  # buffers and the like: identity
    return value  # type: ignore[return-value]  # plain field values (str, int)


def same_tree(a: PrimExpr, b: PrimExpr) -> bool:
    """True when `a` and `b` have equal keys; exits at the first difference (cheap on misses).

    Example:
        >>> from unity import tir
        >>> i = tir.Var("i")
        >>> same_tree(i + 1, i + 1), same_tree(i + 1, i)
        (True, False)
    """
    if a is b:
        return True
    cls = type(a)
    if cls is not type(b) or isinstance(a, Var):
        return False
    if cls is IntImm or cls is FloatImm:
        return a.dtype == b.dtype and a.value == b.value  # type: ignore[attr-defined]
    if not isinstance(a, BinaryOp) and a.dtype != b.dtype:
        return False
    for name in child_fields(cls):
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, PrimExpr) and isinstance(y, PrimExpr):
            if not same_tree(x, y):
                return False
        elif _value_key(x, None) != _value_key(y, None):
            return False
    return getattr(a, "op", None) is getattr(b, "op", None) and getattr(
        a, "lanes", None
    ) == getattr(b, "lanes", None)
