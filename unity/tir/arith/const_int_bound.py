"""Constant integer bounds: the interval `[min_value, max_value]` an expression stays in.

Bounds propagate bottom-up from the variables' bound ranges (`Analyzer.bind`) and known
facts (`Analyzer.constraint_scope`).  Sums go through the linear form, so `i - i` is
exactly `[0, 0]` and `i*32 + j` uses each atom once.  `POS_INF`/`NEG_INF` stand for
unbounded ends (TVM's sentinels: +/- (2**63 - 1)).

Example:
    >>> from unity import tir
    >>> i = tir.Var("i")
    >>> b = BoundAnalyzer()
    >>> b.known[i] = (0, 31)
    >>> b.bound(i * 4 + 3)
    (3, 127)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from unity.ir import dtype as dt
from unity.ir.node import Node
from unity.tir import expr as E
from unity.tir.arith.key import expr_key
from unity.tir.arith.linear import Linear, is_index_dtype, to_linear

POS_INF = 2**63 - 1
"""Sentinel for "no upper bound"."""
NEG_INF = -POS_INF
"""Sentinel for "no lower bound"."""

Interval = tuple[int, int]
_FINITE = 2**40  # below this, sums of a few scaled ends cannot reach the sentinels


@dataclass(frozen=True, slots=True)
class ConstIntBound:
    """`min_value <= expr <= max_value`; the ends may be `NEG_INF`/`POS_INF`.

    Example:
        >>> ConstIntBound(0, 31).is_const(), ConstIntBound(NEG_INF, 3).is_unbounded_below()
        (False, True)
    """

    min_value: int
    max_value: int

    def is_const(self) -> bool:
        """True when the bound pins down one value.

        Example:
            >>> ConstIntBound(4, 4).is_const(), ConstIntBound(0, 4).is_const()
            (True, False)
        """
        return self.min_value == self.max_value

    def is_unbounded_below(self) -> bool:
        """True when there is no lower bound.

        Example:
            >>> unbounded, bounded = ConstIntBound(NEG_INF, 0), ConstIntBound(0, 4)
            >>> unbounded.is_unbounded_below(), bounded.is_unbounded_below()
            (True, False)
        """
        return self.min_value <= NEG_INF

    def is_unbounded_above(self) -> bool:
        """True when there is no upper bound.

        Example:
            >>> unbounded, bounded = ConstIntBound(0, POS_INF), ConstIntBound(0, 4)
            >>> unbounded.is_unbounded_above(), bounded.is_unbounded_above()
            (True, False)
        """
        return self.max_value >= POS_INF


def dtype_range(dtype: str) -> Interval:
    """The values an integer (or bool) dtype can hold; floats/handles are unbounded.

    Example:
        >>> dtype_range("int8"), dtype_range("bool")
        ((-128, 127), (0, 1))
    """
    if dt.is_bool(dtype):
        return (0, 1)
    if dt.is_int(dtype):
        bits = dt.bits(dtype)
        return (max(NEG_INF, -(1 << (bits - 1))), min(POS_INF, (1 << (bits - 1)) - 1))
    if dt.is_uint(dtype):
        return (0, min(POS_INF, (1 << dt.bits(dtype)) - 1))
    return (NEG_INF, POS_INF)


def _clamp(v: int) -> int:
    return POS_INF if v >= POS_INF else max(NEG_INF, v)


def _is_inf(v: int) -> bool:
    return v >= POS_INF or v <= NEG_INF


def _mul(x: int, y: int) -> int:
    if x == 0 or y == 0:
        return 0
    if _is_inf(x) or _is_inf(y):
        return POS_INF if (x > 0) == (y > 0) else NEG_INF
    return _clamp(x * y)


def _add(x: int, y: int) -> int:
    if _is_inf(x):
        return x
    if _is_inf(y):
        return y
    return _clamp(x + y)


def _fdiv(x: int, y: int) -> int:
    if _is_inf(x):
        return x if y > 0 else -x
    return x // y


def _tdiv(x: int, y: int) -> int:
    if _is_inf(x):
        return x if y > 0 else -x
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y > 0) else -q


def scale_interval(b: Interval, c: int) -> Interval:
    """`c * [lo, hi]` with infinities kept.

    Example:
        >>> scale_interval((1, 3), -2), scale_interval((0, POS_INF), 2) == (0, POS_INF)
        ((-6, -2), True)
    """
    lo, hi = _mul(b[0], c), _mul(b[1], c)
    return (lo, hi) if c >= 0 else (hi, lo)


def _corners(a: Interval, b: Interval, op: Callable[[int, int], int]) -> Interval:
    values = [op(x, y) for x in a for y in b]
    return (min(values), max(values))


def _intersect(a: Interval, b: Interval) -> Interval:
    return (max(a[0], b[0]), min(a[1], b[1]))


class BoundAnalyzer:
    """Compute constant bounds from known atom bounds and facts about linear sums.

    Attributes:
        known: bound of an atom (a `Var` or the `expr_key` of `x // c`, ...).
        upper: shape key of a linear sum's non-constant part -> a known upper bound.
        lower: the same for lower bounds.

    Example:
        >>> ana = BoundAnalyzer()
        >>> i = E.Var("i")
        >>> ana.known[i] = (0, 15)
        >>> ana.bound(i * 2 + 1)
        (1, 31)
    """

    def __init__(self) -> None:
        self.known: dict[Hashable, Interval] = {}
        self.upper: dict[Hashable, int] = {}
        self.lower: dict[Hashable, int] = {}
        self.keys: dict[Node, Hashable] = {}
        self.memo: dict[Node, Interval] = {}
        self.lin: dict[Node, Linear] = {}

    def bound(self, expr: E.PrimExpr) -> Interval:
        """Return `(lo, hi)` for `expr` (memoized until the analyzer's state changes).

        Example:
            >>> BoundAnalyzer().bound(E.Var("n", "int8") // 2)
            (-64, 63)
        """
        done = self.memo.get(expr)
        if done is not None:
            return done
        cls = type(expr)
        if (cls is E.Add or cls is E.Sub or cls is E.Mul) and is_index_dtype(expr.dtype):
            lin = self.lin.get(expr)
            if lin is None:
                lin = self.lin[expr] = to_linear(expr, self.keys)
            result = self.bound_linear(lin)
            if dt.is_uint(expr.dtype):  # the sum equals its linear form only if nothing wraps
                full = dtype_range(expr.dtype)
                result = result if full[0] <= result[0] and result[1] <= full[1] else full
        else:
            result = self.bound_atom(expr, expr_key(expr, self.keys))
        self.memo[expr] = result
        return result

    def bound_atom(self, expr: E.PrimExpr, key: Hashable) -> Interval:
        """Bound of one atom: its rule, narrowed by what is known about it.

        Example:
            >>> ana, i = BoundAnalyzer(), E.Var("i")
            >>> ana.known[i] = (0, 15)
            >>> ana.bound_atom(i, i), ana.bound_atom(E.Var("b", "uint8"), "b")
            ((0, 15), (0, 255))
        """
        rule = _RULES.get(type(expr), _dtype_rule)
        result = rule(self, expr)
        known = self.known.get(key)
        return result if known is None else _intersect(result, known)

    def bound_linear(self, lin: Linear) -> Interval:
        """Bound of `sum(coeff * atom) + const`, narrowed by facts about the sum.

        Example:
            >>> ana, i, j = BoundAnalyzer(), E.Var("i"), E.Var("j")
            >>> ana.known[i], ana.known[j] = (0, 3), (0, 7)
            >>> ana.bound_linear(to_linear(i * 8 - j + 1))
            (-6, 25)
        """
        lo = hi = lin.const
        for key, (atom, coeff) in lin.terms.items():
            memo = self.memo.get(atom)
            if memo is None:
                memo = self.memo[atom] = self.bound_atom(atom, key)
            a_lo, a_hi = memo
            if -_FINITE < a_lo and a_hi < _FINITE and -_FINITE < lo and hi < _FINITE:
                if coeff > 0:  # finite and small: no saturation needed yet
                    lo, hi = lo + a_lo * coeff, hi + a_hi * coeff
                else:
                    lo, hi = lo + a_hi * coeff, hi + a_lo * coeff
                continue
            s_lo, s_hi = scale_interval(memo, coeff)
            lo, hi = _add(lo, s_lo), _add(hi, s_hi)
        if len(lin.terms) > 1 and (self.upper or self.lower):
            shape = lin.shape_key()
            up, down = self.upper.get(shape), self.lower.get(shape)
            if up is not None:
                hi = min(hi, _add(up, lin.const))
            if down is not None:
                lo = max(lo, _add(down, lin.const))
        return (_clamp(lo), _clamp(hi))


def _dtype_rule(b: BoundAnalyzer, expr: E.PrimExpr) -> Interval:
    return dtype_range(expr.dtype)


def _var_rule(b: BoundAnalyzer, expr: E.PrimExpr) -> Interval:
    lo, hi = dtype_range(expr.dtype)
    return (max(lo, 0), hi) if isinstance(expr, E.SizeVar) else (lo, hi)


def _int_rule(b: BoundAnalyzer, expr: E.IntImm) -> Interval:
    return (expr.value, expr.value)


def _mul_rule(b: BoundAnalyzer, expr: E.Mul) -> Interval:
    result = _corners(b.bound(expr.a), b.bound(expr.b), _mul)
    for fd, other in ((expr.a, expr.b), (expr.a, expr.b)[::-1]):
        if isinstance(fd, E.FloorDiv):
            tighter = _floordiv_times_divisor(b, fd, other)
            if tighter is not None:
                result = _intersect(result, tighter)
    return result


def _floordiv_times_divisor(b: BoundAnalyzer, fd: E.FloorDiv, other: E.PrimExpr) -> Interval | None:
    """``x // d * (d * c)`` lies in ``[0, x * c]`` for ``x >= 0``, ``d >= 1``, ``c >= 0``
    (the quotient times the divisor never exceeds `x`): a row index ``i // s * (s * 3072)``
    whose corners, taken apart, would multiply the bounds of `i` and `s`."""
    d_key = expr_key(fd.b, b.keys)
    if expr_key(other, b.keys) == d_key:
        c = 1
    elif isinstance(other, E.Mul) and isinstance(other.b, E.IntImm) and expr_key(other.a, b.keys) == d_key:
        c = other.b.value
    elif isinstance(other, E.Mul) and isinstance(other.a, E.IntImm) and expr_key(other.b, b.keys) == d_key:
        c = other.a.value
    else:
        return None
    x_lo, x_hi = b.bound(fd.a)
    if c < 0 or x_lo < 0 or b.bound(fd.b)[0] < 1:
        return None
    return (0, _mul(x_hi, c))


def _floordiv_rule(b: BoundAnalyzer, expr: E.FloorDiv) -> Interval:
    a, d = b.bound(expr.a), b.bound(expr.b)
    if d[0] > 0 or d[1] < 0:
        return _corners(a, d, _fdiv)
    return dtype_range(expr.dtype)


def _div_rule(b: BoundAnalyzer, expr: E.Div) -> Interval:
    if not is_index_dtype(expr.dtype):
        return dtype_range(expr.dtype)
    a, d = b.bound(expr.a), b.bound(expr.b)
    if d[0] > 0 or d[1] < 0:
        return _corners(a, d, _tdiv)
    return dtype_range(expr.dtype)


def _floormod_rule(b: BoundAnalyzer, expr: E.FloorMod) -> Interval:
    a, d = b.bound(expr.a), b.bound(expr.b)
    if d[0] == d[1] and d[0] > 0 and not _is_inf(a[0]) and not _is_inf(a[1]):
        c = d[0]
        if a[0] // c == a[1] // c:  # one period: the modulo is a shift
            return (a[0] % c, a[1] % c)
    if d[0] > 0:
        return (0, min(a[1], d[1] - 1) if a[0] >= 0 else d[1] - 1)
    if d[1] < 0:
        return (d[0] + 1, 0)
    return dtype_range(expr.dtype)


def _mod_rule(b: BoundAnalyzer, expr: E.Mod) -> Interval:
    a, d = b.bound(expr.a), b.bound(expr.b)
    if not (d[0] > 0 or d[1] < 0) or not is_index_dtype(expr.dtype):
        return dtype_range(expr.dtype)
    m = max(abs(d[0]), abs(d[1])) - 1
    if a[0] >= 0:
        return (0, min(a[1], m))
    if a[1] <= 0:
        return (max(a[0], -m), 0)
    return (max(a[0], -m), min(a[1], m))


def _min_rule(b: BoundAnalyzer, expr: E.Min) -> Interval:
    x, y = b.bound(expr.a), b.bound(expr.b)
    return (min(x[0], y[0]), min(x[1], y[1]))


def _max_rule(b: BoundAnalyzer, expr: E.Max) -> Interval:
    x, y = b.bound(expr.a), b.bound(expr.b)
    return (max(x[0], y[0]), max(x[1], y[1]))


def _select_rule(b: BoundAnalyzer, expr: E.Select) -> Interval:
    x, y = b.bound(expr.true_value), b.bound(expr.false_value)
    return (min(x[0], y[0]), max(x[1], y[1]))


def _cast_rule(b: BoundAnalyzer, expr: E.Cast) -> Interval:
    target = dtype_range(expr.dtype)
    if not (dt.is_integer(expr.value.dtype) or dt.is_bool(expr.value.dtype)):
        return target
    inner = b.bound(expr.value)
    return inner if target[0] <= inner[0] and inner[1] <= target[1] else target


def _let_rule(b: BoundAnalyzer, expr: E.Let) -> Interval:
    if not is_index_dtype(expr.var.dtype):
        return b.bound(expr.body)
    old = b.known.get(expr.var)
    b.known[expr.var] = b.bound(expr.value)
    try:
        return b.bound(expr.body)
    finally:
        if old is None:
            del b.known[expr.var]
        else:
            b.known[expr.var] = old


def _bool_rule(b: BoundAnalyzer, expr: E.PrimExpr) -> Interval:
    return (0, 1)


_RULES: dict[type, Callable[..., Interval]] = {
    E.Var: _var_rule, E.SizeVar: _var_rule, E.IntImm: _int_rule, E.Mul: _mul_rule,
    E.FloorDiv: _floordiv_rule, E.Div: _div_rule, E.FloorMod: _floormod_rule, E.Mod: _mod_rule,
    E.Min: _min_rule, E.Max: _max_rule, E.Select: _select_rule, E.Cast: _cast_rule,
    E.Let: _let_rule, E.EQ: _bool_rule, E.NE: _bool_rule, E.LT: _bool_rule, E.LE: _bool_rule,
    E.GT: _bool_rule, E.GE: _bool_rule, E.And: _bool_rule, E.Or: _bool_rule, E.Not: _bool_rule,
}  # fmt: skip
