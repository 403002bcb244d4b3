"""Sympy shape expressions to the VM's shape trees (ints, slots and + - * // % min max).

The VM evaluates trees over the slots holding the symbols bound at run time
(format: `unity.runtime.vm_checks`), so no sympy is needed there.

Example:
    >>> from unity.relax.struct_info import sym
    >>> n = sym("n")
    >>> to_tree(2 * n + 1, {n: 0})
    ['+', 1, ['*', 2, ['slot', 0]]]
"""

from __future__ import annotations

from typing import Any

import sympy

from unity.tir.arith.sympy_bridge import common_fraction

Tree = int | list[Any]


class UnboundSymbolError(ValueError):
    """A shape uses a symbol that nothing binds before it is needed.

    Example:
        >>> err = UnboundSymbolError(sympy.Symbol("n"))
        >>> str(err), isinstance(err, ValueError)
        ('n', True)
    """

    def __init__(self, symbol: sympy.Symbol) -> None:
        super().__init__(str(symbol))
        self.symbol = symbol


def to_tree(expr: object, slots: dict[sympy.Symbol, int]) -> Tree:
    """The tree of integer expression `expr`; symbols are looked up in `slots`.

    Raises `UnboundSymbolError` for a symbol missing from `slots`, and ValueError
    for an expression with no integer meaning (e.g. ``n / 3`` that is not floored).

    Example:
        >>> from unity.relax.struct_info import sym
        >>> to_tree(sympy.floor(sym("n") / 2), {sym("n"): 1})
        ['//', ['slot', 1], 2]
    """
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return int(expr)
    if expr.is_Symbol:
        if expr not in slots:
            raise UnboundSymbolError(expr)
        return ["slot", slots[expr]]
    if isinstance(expr, sympy.Add):
        return _fold("+", [to_tree(a, slots) for a in expr.args])
    if isinstance(expr, sympy.Mul):
        num, den = sympy.fraction(expr)
        if den != 1:
            raise ValueError(f"shape {expr} is not an integer expression (use floor division)")
        return _fold("*", [to_tree(a, slots) for a in expr.args])
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and int(expr.exp) > 0:
        return _fold("*", [to_tree(expr.base, slots)] * int(expr.exp))
    if isinstance(expr, sympy.floor | sympy.ceiling):
        num, den = common_fraction(expr.args[0])
        a, b = to_tree(num, slots), to_tree(den, slots)
        if isinstance(expr, sympy.floor):
            return ["//", a, b]
        return ["-", 0, ["//", ["-", 0, a], b]]
    if isinstance(expr, sympy.Mod):
        return ["%", to_tree(expr.args[0], slots), to_tree(expr.args[1], slots)]
    if isinstance(expr, sympy.Min | sympy.Max):
        op = "min" if isinstance(expr, sympy.Min) else "max"
        return _fold(op, [to_tree(a, slots) for a in expr.args])
    raise ValueError(
        f"shape {expr} cannot be computed by the VM (unsupported {type(expr).__name__})"
    )


def _fold(op: str, trees: list[Tree]) -> Tree:
    out = trees[0]
    for t in trees[1:]:
        out = [op, out, t]
    return out
