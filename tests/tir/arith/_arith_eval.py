"""A tiny evaluator of integer TIR expressions with C/TVM semantics (test helper)."""

from __future__ import annotations

from typing import Any

from unity import tir
from unity.tir import expr as E


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


_BINARY = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
    E.FloorDiv: lambda a, b: a // b, E.FloorMod: lambda a, b: a % b, E.Div: _tdiv,
    E.Mod: lambda a, b: a - b * _tdiv(a, b), E.Min: min, E.Max: max,
    E.EQ: lambda a, b: int(a == b), E.NE: lambda a, b: int(a != b), E.LT: lambda a, b: int(a < b),
    E.LE: lambda a, b: int(a <= b), E.GT: lambda a, b: int(a > b), E.GE: lambda a, b: int(a >= b),
    E.And: lambda a, b: int(bool(a) and bool(b)), E.Or: lambda a, b: int(bool(a) or bool(b)),
}  # fmt: skip


def evaluate(expr: tir.PrimExpr, env: dict[tir.Var, int]) -> Any:
    """Evaluate `expr` with Python integers (bools as 0/1; vectors as lists of lanes)."""
    cls = type(expr)
    if isinstance(expr, E.Var):
        return env[expr]
    if cls is E.IntImm:
        return expr.value
    if cls in _BINARY:
        a, b = evaluate(expr.a, env), evaluate(expr.b, env)
        if isinstance(a, list):  # vectors: lane by lane
            return [_BINARY[cls](x, y) for x, y in zip(a, b, strict=True)]
        return _BINARY[cls](a, b)
    if cls is E.Ramp:
        base, stride = evaluate(expr.base, env), evaluate(expr.stride, env)
        return [base + k * stride for k in range(expr.lanes)]
    if cls is E.Broadcast:
        return [evaluate(expr.value, env)] * expr.lanes
    if cls is E.Not:
        return int(not evaluate(expr.a, env))
    if cls is E.Select:
        cond = evaluate(expr.condition, env)
        return evaluate(expr.true_value if cond else expr.false_value, env)
    if cls is E.Cast:
        return evaluate(expr.value, env)
    if cls is E.Let:
        return evaluate(expr.body, {**env, expr.var: evaluate(expr.value, env)})
    raise TypeError(f"the test evaluator does not know {cls.__name__}")
