"""The simplifier: canonical linear sums, bound-driven div/mod/min/max/compare, rule tables.

Integer `+ - *` go through the linear form (`linear.py`); `//`, `%` and comparisons use
`canonical.py` and the bounds; the rest (logic, select, min/max shapes) are rule tables.
Floats only fold constants with the dtype's own arithmetic (never reassociate).

Example:
    >>> from unity import tir
    >>> from unity.tir.arith import Analyzer
    >>> i0, i1 = tir.Var("i0"), tir.Var("i1")
    >>> ana = Analyzer()
    >>> ana.bind(i1, tir.Range.from_min_extent(0, 32))
    >>> ana.simplify((i0 * 32 + i1) % 32) is i1
    True
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from unity.ir import dtype as dt
from unity.ir.node import Node
from unity.tir import expr as E
from unity.tir.arith.canonical import (
    as_nonpositive,
    decide,
    floordiv_linear,
    floormod_linear,
    merge_div_mod_pairs,
    normalize_compare,
)
from unity.tir.arith.const_fold import fold, fold_cast
from unity.tir.arith.const_int_bound import BoundAnalyzer
from unity.tir.arith.key import expr_key
from unity.tir.arith.linear import (
    Linear,
    is_index_dtype,
    is_signed_index_dtype,
    make_int,
    to_linear,
)
from unity.tir.arith.pattern import P, Rule, RuleSet
from unity.tir.arith.rewrite_vector import VECTOR_RULES, ramp_divmod
from unity.tir.functor import child_fields, substitute

TRUE = E.IntImm("bool", 1)
FALSE = E.IntImm("bool", 0)

x, y, z = P.var("x"), P.var("y"), P.var("z")
c1, c2 = P.const("c1"), P.const("c2")

LOGIC_RULES = RuleSet([
    Rule(x & True, lambda x: x),                                        # x && true -> x
    Rule(True & x, lambda x: x),                                        # true && x -> x
    Rule(x & False, lambda x: FALSE),                                   # x && false -> false
    Rule(False & x, lambda x: FALSE),                                   # false && x -> false
    Rule(x & x, lambda x: x),                                           # x && x -> x
    Rule(x & ~x, lambda x: FALSE),                                      # x && !x -> false
    Rule(x | True, lambda x: TRUE),                                     # x || true -> true
    Rule(True | x, lambda x: TRUE),                                     # true || x -> true
    Rule(x | False, lambda x: x),                                       # x || false -> x
    Rule(False | x, lambda x: x),                                       # false || x -> x
    Rule(x | x, lambda x: x),                                           # x || x -> x
    Rule(x | ~x, lambda x: TRUE),                                       # x || !x -> true
    Rule(~P.var("t"), lambda t: _not_const(t)),                        # !true -> false, !false -> true
    Rule(~~x, lambda x: x),                                             # !!x -> x
    Rule(~(x < y), lambda x, y: _int_only(x, E.LE(y, x))),              # !(x < y) -> y <= x
    Rule(~(x <= y), lambda x, y: _int_only(x, E.LT(y, x))),             # !(x <= y) -> y < x
    Rule(~(x > y), lambda x, y: _int_only(x, E.LE(x, y))),              # !(x > y) -> x <= y
    Rule(~(x >= y), lambda x, y: _int_only(x, E.LT(x, y))),             # !(x >= y) -> x < y
    Rule(~P.eq(x, y), lambda x, y: _int_only(x, E.NE(x, y))),           # !(x == y) -> x != y
    Rule(~P.ne(x, y), lambda x, y: _int_only(x, E.EQ(x, y))),           # !(x != y) -> x == y
])  # fmt: skip

MINMAX_RULES = RuleSet([
    Rule(P.min(x, x), lambda x: x),                                     # min(x, x) -> x
    Rule(P.max(x, x), lambda x: x),                                     # max(x, x) -> x
    Rule(P.min(x, P.max(x, y)), lambda x, y: x),                        # min(x, max(x, y)) -> x
    Rule(P.min(P.max(x, y), x), lambda x, y: x),                        # min(max(x, y), x) -> x
    Rule(P.max(x, P.min(x, y)), lambda x, y: x),                        # max(x, min(x, y)) -> x
    Rule(P.max(P.min(x, y), x), lambda x, y: x),                        # max(min(x, y), x) -> x
    Rule(P.min(x, P.min(x, y)), lambda x, y: E.Min(x, y)),              # min(x, min(x, y)) -> min(x, y)
    Rule(P.max(x, P.max(x, y)), lambda x, y: E.Max(x, y)),              # max(x, max(x, y)) -> max(x, y)
    Rule(P.min(P.min(x, c1), c2), lambda x, c1, c2: E.Min(x, fold(E.Min, c1, c2))),  # fold consts
    Rule(P.max(P.max(x, c1), c2), lambda x, c1, c2: E.Max(x, fold(E.Max, c1, c2))),  # fold consts
])  # fmt: skip

SELECT_RULES = RuleSet([
    Rule(P.select(True, x, y), lambda x, y: x),                         # select(true, x, y) -> x
    Rule(P.select(False, x, y), lambda x, y: y),                        # select(false, x, y) -> y
    Rule(P.select(z, x, x), lambda z, x: x),                            # select(c, x, x) -> x
    Rule(P.select(~z, x, y), lambda z, x, y: E.Select(z, y, x)),        # select(!c, x, y) -> select(c, y, x)
])  # fmt: skip


def _not_const(t: E.PrimExpr) -> E.PrimExpr | None:
    if type(t) is E.IntImm:
        return FALSE if t.value else TRUE
    return None


def _int_only(operand: E.PrimExpr, out: E.PrimExpr) -> E.PrimExpr | None:
    """Comparisons of floats do not negate (NaN), so integer operands only."""
    return out if is_index_dtype(operand.dtype) else None


def _is_imm(expr: E.PrimExpr, value: float) -> bool:
    return type(expr) in (E.IntImm, E.FloatImm) and expr.value == value  # type: ignore[attr-defined]


_VECTORS = (E.Ramp, E.Broadcast)
_ORDERED = (E.LT, E.LE, E.GT, E.GE)
_NOT_PINNED = (E.IntImm, E.Add, E.Sub, E.Mul)  # sums of unpinned atoms are not pinned


# -- the simplifier -----------------------------------------------------------------------
class Simplifier:
    """Simplify expressions against the bounds and facts of a `BoundAnalyzer` (memoized).

    Example:
        >>> simp = Simplifier(BoundAnalyzer())
        >>> i = E.Var("i")
        >>> simp.simplify(i * 2 - i) is i
        True
    """

    def __init__(self, bounds: BoundAnalyzer) -> None:
        self.bounds = bounds
        self.keys = bounds.keys
        self.subst: dict[E.Var, E.PrimExpr] = {}
        self.facts: dict[Hashable, bool] = {}
        self.memo: dict[Node, E.PrimExpr] = {}
        self.lin: dict[Node, Linear] = bounds.lin

    def clear(self) -> None:
        """Forget memoized results (call when bounds or facts change).

        Example:
            >>> simp = Simplifier(BoundAnalyzer())
            >>> _ = simp.simplify(E.Var("i") + 0)
            >>> simp.clear()
            >>> len(simp.memo)
            0
        """
        self.memo.clear()
        self.bounds.memo.clear()

    def simplify(self, expr: E.PrimExpr) -> E.PrimExpr:
        """Return the simplified form of `expr`.

        Example:
            >>> i = E.Var("i")
            >>> Simplifier(BoundAnalyzer()).simplify(E.min_value_of(i, i) + 0) is i
            True
        """
        done = self.memo.get(expr)
        if done is not None:
            return done
        out = _DISPATCH.get(type(expr), Simplifier._generic)(self, expr)
        if type(out) not in _NOT_PINNED and is_index_dtype(out.dtype):
            lo, hi = self.bounds.bound(out)
            if lo == hi:  # pinned down by bounds or facts (e.g. inside `if x % 4 == 0`)
                out = make_int(out.dtype, lo)
        if self.facts and dt.is_bool(out.dtype) and type(out) is not E.IntImm:
            known = self.facts.get(expr_key(out, self.keys))
            out = out if known is None else (TRUE if known else FALSE)
        self.memo[expr] = out
        self.memo[out] = out
        return out

    def linear(self, expr: E.PrimExpr) -> Linear:
        """The linear form of an already simplified integer expression.

        Example:
            >>> i = E.Var("i")
            >>> lin = Simplifier(BoundAnalyzer()).linear(i * 4 + 2)
            >>> [c for _, c in lin.terms.values()], lin.const
            ([4], 2)
        """
        lin = self.lin.get(expr)
        if lin is None:
            lin = to_linear(expr, self.keys)
            self.lin[expr] = lin
        return lin

    def emit(self, lin: Linear) -> E.PrimExpr:
        """Rebuild an expression from a linear form, remembering the form.

        Example:
            >>> i = E.Var("i")
            >>> Simplifier(BoundAnalyzer()).emit(Linear("int32", {"i": (i, 2)}, -1)).script()
            'i * 2 - 1'
        """
        out = lin.to_expr()
        self.lin[out] = lin
        return out

    def _children(self, expr: Any) -> tuple[E.PrimExpr, E.PrimExpr]:
        return self.simplify(expr.a), self.simplify(expr.b)

    def _rules(self, rules: RuleSet, out: E.PrimExpr) -> E.PrimExpr:
        new = rules.apply(out, self.keys)
        return out if new is None else self.simplify(new)

    def _var(self, expr: E.Var) -> E.PrimExpr:
        return self.subst.get(expr, expr)

    def _leaf(self, expr: E.PrimExpr) -> E.PrimExpr:
        return expr

    def _arith(self, expr: Any) -> E.PrimExpr:
        a, b = self._children(expr)
        cls = type(expr)
        folded = fold(cls, a, b)
        if folded is not None:
            return folded
        if not is_index_dtype(expr.dtype):
            return self._non_index(expr, a, b)
        la, lb = self.linear(a), self.linear(b)
        if cls is E.Add or cls is E.Sub:
            lin = la.plus(lb, 1 if cls is E.Add else -1)
        elif lb.is_const():
            lin = la.scaled(lb.const)
        elif la.is_const():
            lin = lb.scaled(la.const)
        else:
            return expr.replace(a=a, b=b)  # a product of two non-constants is an atom
        if any(type(atom) is E.FloorMod for atom, _ in lin.terms.values()):
            lin = merge_div_mod_pairs(self.bounds, lin)
        return self.emit(lin)

    def _non_index(self, expr: Any, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
        if type(a) in _VECTORS or type(b) in _VECTORS:
            return self._vector(expr, a, b)
        return self._float_arith(expr, a, b)

    def _vector(self, expr: Any, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
        cls = type(expr)
        if (
            (cls is E.FloorDiv or cls is E.FloorMod)
            and type(a) is E.Ramp
            and type(b) is E.Broadcast
        ):
            c = b.value
            if type(c) is E.IntImm and c.value > 0 and is_signed_index_dtype(c.dtype):
                out = ramp_divmod(self, cls, a, c.value)
                if out is not None:
                    return self.simplify(out)
        return self._rules(VECTOR_RULES, expr.replace(a=a, b=b))

    def _ramp(self, expr: E.Ramp) -> E.PrimExpr:
        base, stride = self.simplify(expr.base), self.simplify(expr.stride)
        if type(stride) is E.IntImm and stride.value == 0:
            return E.Broadcast(base, expr.lanes)  # ramp(b, 0, l) -> broadcast(b, l)
        return expr.replace(base=base, stride=stride)

    def _float_arith(self, expr: Any, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
        cls = type(expr)
        if (cls is E.Mul or cls is E.Div) and _is_imm(b, 1):
            return a  # x * 1 and x / 1 are exact, NaN and -0 included
        if cls is E.Mul and _is_imm(a, 1):
            return b
        return expr.replace(a=a, b=b)

    def _division(self, expr: Any) -> E.PrimExpr:
        a, b = self._children(expr)
        cls = type(expr)
        folded = fold(cls, a, b)
        if folded is not None:
            return folded
        if not is_index_dtype(expr.dtype):
            return self._non_index(expr, a, b)
        floor = cls is E.FloorDiv or cls is E.FloorMod
        is_div = cls is E.FloorDiv or cls is E.Div
        if type(b) is E.IntImm and b.value == 1:
            return a if is_div else make_int(expr.dtype, 0)
        if not is_signed_index_dtype(expr.dtype):
            return expr.replace(a=a, b=b)  # unsigned sums wrap: linear reasoning is unsafe
        if type(b) is E.IntImm and b.value > 0 and (floor or self.bounds.bound(a)[0] >= 0):
            split = floordiv_linear if is_div else floormod_linear
            return self.emit(split(self.bounds, self.linear(a), b.value))
        if self._nonneg_below(a, b):
            return make_int(expr.dtype, 0) if is_div else a
        if floor and type(b) is not E.IntImm:
            split = self._split_by(a, b)
            if split is not None:
                return split[0] if is_div else split[1]
        return expr.replace(a=a, b=b)

    def _split_by(self, a: E.PrimExpr, b: E.PrimExpr) -> tuple[E.PrimExpr, E.PrimExpr] | None:
        """`(q, r)` with ``a == q * b + r`` and ``0 <= r < b`` provable, for a symbolic
        divisor `b`: the terms of `a` that are products with `b` make `q`, the others `r`
        (``(n * seq + s) // seq`` is `n` when ``0 <= s < seq``: a reshape over a symbolic
        sequence length read its input through a division per element)."""
        quotient = Linear(a.dtype)
        rest = Linear(a.dtype, const=self.linear(a).const)
        for key, (atom, coeff) in self.linear(a).terms.items():
            other = _other_factor(atom, b)
            if other is None:
                rest.terms[key] = (atom, coeff)
            else:
                quotient = quotient.plus(self.linear(other).scaled(coeff))
        if quotient.is_const() and quotient.const == 0:
            return None
        remainder = self.emit(rest)
        if not (_mod_by(remainder, b) or self._nonneg_below(remainder, b)):
            return None
        return self.emit(quotient), remainder

    def _nonneg_below(self, a: E.PrimExpr, b: E.PrimExpr) -> bool:
        """True when `0 <= a < b` is provable."""
        if self.bounds.bound(a)[0] < 0:
            return False
        return self.bounds.bound_linear(self.linear(a).plus(self.linear(b), -1))[1] < 0

    def _min_max(self, expr: Any) -> E.PrimExpr:
        a, b = self._children(expr)
        folded = fold(type(expr), a, b)
        if folded is not None:
            return folded
        if type(a) in _VECTORS or type(b) in _VECTORS:
            return self._vector(expr, a, b)
        if is_signed_index_dtype(expr.dtype):
            lo, hi = self.bounds.bound_linear(self.linear(a).plus(self.linear(b), -1))
            if hi <= 0:
                return a if type(expr) is E.Min else b
            if lo >= 0:
                return b if type(expr) is E.Min else a
        return self._rules(MINMAX_RULES, expr.replace(a=a, b=b))

    def _compare(self, expr: Any) -> E.PrimExpr:
        a, b = self._children(expr)
        cls = type(expr)
        folded = fold(cls, a, b)
        if folded is not None:
            return folded
        if not is_signed_index_dtype(a.dtype):
            return expr.replace(a=a, b=b)  # unsigned differences wrap: no normal form
        d = self.linear(a).plus(self.linear(b), -1)
        decided = decide(cls, *self.bounds.bound_linear(d))
        if decided is not None:
            return TRUE if decided else FALSE
        return normalize_compare(cls, d)

    def _logic(self, expr: Any) -> E.PrimExpr:
        if type(expr) is E.Not:
            out = expr.replace(a=self.simplify(expr.a))
        else:
            a, b = self._children(expr)
            folded = fold(type(expr), a, b)
            if folded is not None:
                return folded
            merged = self._merge_compares(type(expr) is E.And, a, b)
            if merged is not None:
                return merged
            out = expr.replace(a=a, b=b)
        return self._rules(LOGIC_RULES, out)

    def _as_le0(self, cond: E.PrimExpr) -> Linear | None:
        """`cond` as `d <= 0` when it is an integer `<`, `<=`, `>`, `>=`."""
        cls = type(cond)
        if cls not in _ORDERED or not is_signed_index_dtype(cond.a.dtype):  # type: ignore[attr-defined]
            return None
        d = self.linear(cond.a).plus(self.linear(cond.b), -1)  # type: ignore[attr-defined]
        return as_nonpositive(cls, d)[0]

    def _merge_compares(self, is_and: bool, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr | None:
        """`a && b` / `a || b` of comparisons whose sums differ by a constant.

        With `a` as `p <= 0` and `b` as `q <= 0`: `q - p` constant and <= 0 means a implies
        b; `p + q` constant tells whether both can hold, or whether one always does.
        """
        p, q = self._as_le0(a), self._as_le0(b)
        if p is None or q is None:
            return None
        diff, total = q.plus(p, -1), q.plus(p)
        if not diff.terms:  # q = p + c: the larger side is implied by the smaller
            a_implies_b = diff.const <= 0
            return (a if a_implies_b else b) if is_and else (b if a_implies_b else a)
        if not total.terms:  # q = -p + c: either both can hold, or one always does
            if is_and and total.const > 0:
                return FALSE  # p <= 0 and -p + c <= 0 need c <= 0
            if not is_and and total.const <= 1:
                return TRUE  # p >= 1 forces q = c - p <= 0
        return None

    def _select(self, expr: E.Select) -> E.PrimExpr:
        cond = self.simplify(expr.condition)
        if type(cond) is E.IntImm:
            return self.simplify(expr.true_value if cond.value else expr.false_value)
        t, f = self.simplify(expr.true_value), self.simplify(expr.false_value)
        return self._rules(SELECT_RULES, expr.replace(condition=cond, true_value=t, false_value=f))

    def _cast(self, expr: E.Cast) -> E.PrimExpr:
        value = self.simplify(expr.value)
        if value.dtype == expr.dtype:
            return value
        folded = fold_cast(expr.dtype, value)
        return folded if folded is not None else expr.replace(value=value)

    def _let(self, expr: E.Let) -> E.PrimExpr:
        value = self.simplify(expr.value)
        if type(value) in (E.IntImm, E.FloatImm) or isinstance(value, E.Var):
            return self.simplify(substitute(expr.body, {expr.var: value}))
        body = self._simplify_with_bound(expr.body, expr.var, value)
        if not _uses_var(body, expr.var):
            return body
        return expr.replace(value=value, body=body)

    def _simplify_with_bound(self, body: E.PrimExpr, var: E.Var, value: E.PrimExpr) -> E.PrimExpr:
        """Simplify `body` knowing `var`'s bounds are `value`'s; forget them afterwards."""
        if not is_index_dtype(value.dtype):
            return self.simplify(body)
        old = self.bounds.known.get(var)
        self.bounds.known[var] = self.bounds.bound(value)
        self.clear()
        try:
            return self.simplify(body)
        finally:
            if old is None:
                del self.bounds.known[var]
            else:
                self.bounds.known[var] = old
            self.clear()

    def _generic(self, expr: E.PrimExpr) -> E.PrimExpr:
        changes: dict[str, Any] = {}
        for name in child_fields(type(expr)):
            old = getattr(expr, name)
            if isinstance(old, E.PrimExpr):
                new: Any = self.simplify(old)
            elif isinstance(old, tuple) and all(isinstance(v, E.PrimExpr) for v in old):
                new = tuple(self.simplify(v) for v in old)  # type: ignore[arg-type]
                new = old if all(p is q for p, q in zip(new, old)) else new  # type: ignore[arg-type]
            else:
                continue
            if new is not old:
                changes[name] = new
        return expr.replace(**changes) if changes else expr


def _uses_var(expr: E.PrimExpr, var: E.Var) -> bool:
    from unity.tir.functor import uses_var  # functor imports arith

    return uses_var(expr, var)


_DISPATCH: dict[type, Callable[[Simplifier, Any], E.PrimExpr]] = {
    E.Var: Simplifier._var, E.SizeVar: Simplifier._var, E.IntImm: Simplifier._leaf,
    E.FloatImm: Simplifier._leaf, E.StringImm: Simplifier._leaf, E.Add: Simplifier._arith,
    E.Sub: Simplifier._arith, E.Mul: Simplifier._arith, E.Div: Simplifier._division,
    E.Mod: Simplifier._division, E.FloorDiv: Simplifier._division,
    E.FloorMod: Simplifier._division, E.Min: Simplifier._min_max, E.Max: Simplifier._min_max,
    E.EQ: Simplifier._compare, E.NE: Simplifier._compare, E.LT: Simplifier._compare,
    E.LE: Simplifier._compare, E.GT: Simplifier._compare, E.GE: Simplifier._compare,
    E.And: Simplifier._logic, E.Or: Simplifier._logic, E.Not: Simplifier._logic,
    E.Select: Simplifier._select, E.Cast: Simplifier._cast, E.Let: Simplifier._let,
    E.Ramp: Simplifier._ramp,
}  # fmt: skip


def _mod_by(r: E.PrimExpr, b: E.PrimExpr) -> bool:
    """Whether `r` is ``floormod(x, b)``: it has the sign of `b` and is smaller, so
    ``floordiv(q * b + r, b)`` is `q` whatever the sign of `b` (a reshape that splits
    and merges a symbolic axis: ``(h * seq + i % seq) // seq`` is `h`)."""
    return type(r) is E.FloorMod and expr_key(r.b) == expr_key(b)


def _other_factor(atom: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr | None:
    """`x` when `atom` is the product ``x * b`` or ``b * x`` (the same `b`), else None."""
    if type(atom) is not E.Mul:
        return None
    if expr_key(atom.b) == expr_key(b):
        return atom.a
    if expr_key(atom.a) == expr_key(b):
        return atom.b
    return None
