"""`Analyzer`: variable ranges and known facts, with simplify / prove / bound queries.

Example:
    >>> from unity import tir
    >>> i, j = tir.Var("i"), tir.Var("j")
    >>> ana = Analyzer()
    >>> ana.bind(i, tir.Range.from_min_extent(0, 32))
    >>> ana.can_prove(i < 64), ana.const_int_bound(i * 2 + 1)
    (True, ConstIntBound(min_value=1, max_value=63))
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any

from unity.ir import dtype as dt
from unity.tir import expr as E
from unity.tir.arith.canonical import as_nonpositive
from unity.tir.arith.const_int_bound import POS_INF, BoundAnalyzer, ConstIntBound
from unity.tir.arith.int_set import IntervalSet, eval_set
from unity.tir.arith.key import expr_key, same_tree
from unity.tir.arith.linear import Linear, is_index_dtype
from unity.tir.arith.rewrite_simplify import Simplifier

_RECURSION_LIMIT = 20_000
_MEMO_LIMIT = 200_000  # entries before the memo tables are dropped (long-lived analyzers)


class Analyzer:
    """Simplify and reason about integer index expressions under known ranges and facts.

    Example:
        >>> i = E.Var("i")
        >>> ana = Analyzer()
        >>> ana.bind(i, E.Range.from_min_extent(0, 16))
        >>> ana.simplify((i * 4 + 3) // 4) is i, ana.can_prove(i < 16)
        (True, True)
    """

    def __init__(self) -> None:
        if sys.getrecursionlimit() < _RECURSION_LIMIT:
            sys.setrecursionlimit(_RECURSION_LIMIT)  # long sums nest deeply (shapes, unrolled code)
        self._bounds = BoundAnalyzer()
        self._simplifier = Simplifier(self._bounds)
        self._ranges: dict[E.Var, E.Range] = {}

    # -- state --------------------------------------------------------------------------
    def bind(self, var: E.Var, value: E.Range | E.ExprLike) -> None:
        """Declare `var` to range over a `Range`, or to equal an expression.

        Args:
            var: the variable.
            value: `tir.Range(min, extent)` (loop domain) or an expression/int it equals.

        Raises:
            TypeError: when `var` is not a `tir.Var`.

        Example:
            >>> from unity import tir
            >>> n, i = tir.Var("n"), tir.Var("i")
            >>> ana = Analyzer()
            >>> ana.bind(i, tir.Range.from_min_extent(0, n))
            >>> ana.can_prove(i < n)
            True
        """
        if not isinstance(var, E.Var):
            raise TypeError(f"Analyzer.bind expects a tir.Var, got a {type(var).__name__}")
        self._simplifier.clear()
        if isinstance(value, E.Range):
            self._bind_range(var, value)
            return
        expr = self.simplify(
            E.const(value, var.dtype) if not isinstance(value, E.PrimExpr) else value
        )
        self._simplifier.subst[var] = expr
        self._ranges.pop(var, None)
        if is_index_dtype(expr.dtype):
            self._bounds.known[var] = self._bounds.bound(expr)
        self._simplifier.clear()

    def range_of(self, var: E.Var) -> E.Range | None:
        """The range `var` was bound to (simplified), or None (unbound, or bound to a
        value or a range of one).

        Example:
            >>> from unity import tir
            >>> n, i = tir.Var("n"), tir.Var("i")
            >>> ana = Analyzer()
            >>> ana.bind(i, tir.Range.from_min_extent(0, n))
            >>> ana.range_of(i).extent.name
            'n'
        """
        return self._ranges.get(var)

    def _bind_range(self, var: E.Var, rng: E.Range) -> None:
        lo_expr, ext = self.simplify(rng.min), self.simplify(rng.extent)
        if type(ext) is E.IntImm and ext.value == 1:
            self.bind(var, lo_expr)
            return
        self._simplifier.subst.pop(var, None)
        self._ranges[var] = E.Range(lo_expr, ext)
        last = self.simplify(lo_expr + ext - 1)
        self._bounds.known[var] = (self._bounds.bound(lo_expr)[0], self._bounds.bound(last)[1])
        self._simplifier.clear()
        if type(lo_expr) is E.IntImm and type(ext) is E.IntImm:
            return  # the constant bound says it all
        self._add_fact(var < lo_expr + ext, None)
        self._add_fact(var >= lo_expr, None)

    @contextmanager
    def constraint_scope(self, cond: E.PrimExpr) -> Iterator[None]:
        """Assume `cond` holds inside the `with` block (e.g. inside `if i < n`).

        Example:
            >>> from unity import tir
            >>> i, n = tir.Var("i"), tir.Var("n")
            >>> ana = Analyzer()
            >>> with ana.constraint_scope(i < n):
            ...     ana.can_prove(i - n < 0)
            True
            >>> ana.can_prove(i - n < 0)
            False
        """
        undo: list[Callable[[], None]] = []
        self._add_fact(cond, undo)
        try:
            yield
        finally:
            for step in reversed(undo):
                step()
            self._simplifier.clear()

    def _add_fact(self, cond: E.PrimExpr, undo: list[Callable[[], None]] | None) -> None:
        self._simplifier.clear()
        cond = self.simplify(cond)
        self._simplifier.clear()
        if type(cond) is E.IntImm:
            return  # already known (or contradictory: nothing useful to record)
        if type(cond) is E.And:
            self._add_fact(cond.a, undo)
            self._add_fact(cond.b, undo)
            return
        self._set(self._simplifier.facts, expr_key(cond, self._bounds.keys), True, undo)
        if type(cond) is E.Not:
            self._set(self._simplifier.facts, expr_key(cond.a, self._bounds.keys), False, undo)
        if isinstance(cond, E.CmpOp) and is_index_dtype(cond.a.dtype):
            lin_a, lin_b = self._simplifier.linear(cond.a), self._simplifier.linear(cond.b)
            for d in as_nonpositive(type(cond), lin_a.plus(lin_b, -1)):
                self._record_upper(d, undo)
        self._simplifier.clear()

    def _record_upper(self, d: Linear, undo: list[Callable[[], None]] | None) -> None:
        """Record `d <= 0`: a bound on one atom, or on the sum's non-constant part."""
        if not d.terms:
            return
        if len(d.terms) == 1:
            ((key, (_, coeff)),) = d.terms.items()
            lo, hi = self._bounds.known.get(key, (-POS_INF, POS_INF))
            if coeff > 0:  # coeff * atom <= -const
                hi = min(hi, (-d.const) // coeff)
            else:  # atom >= const / -coeff
                lo = max(lo, -(-d.const // -coeff))
            self._set(self._bounds.known, key, (lo, hi), undo)
            return
        shape, neg_shape = d.shape_key(), d.scaled(-1).shape_key()
        up = min(self._bounds.upper.get(shape, POS_INF), -d.const)
        down = max(self._bounds.lower.get(neg_shape, -POS_INF), d.const)
        self._set(self._bounds.upper, shape, up, undo)
        self._set(self._bounds.lower, neg_shape, down, undo)

    @staticmethod
    def _set(
        table: dict[Any, Any], key: Hashable, value: Any, undo: list[Callable[[], None]] | None
    ) -> None:
        if undo is not None:
            old = table.get(key, _MISSING)
            undo.append(
                lambda: table.pop(key, None) if old is _MISSING else table.__setitem__(key, old)
            )
        table[key] = value

    # -- queries ------------------------------------------------------------------------
    def simplify(self, expr: E.ExprLike) -> E.PrimExpr:
        """Return a simplified expression equal to `expr` under the known ranges and facts.

        Returns `expr` itself when it is already in simplified form.

        Example:
            >>> from unity import tir
            >>> i, j = tir.Var("i"), tir.Var("j")
            >>> Analyzer().simplify(i * 32 + j - i * 32) is j
            True
        """
        expr = E.const(expr) if not isinstance(expr, E.PrimExpr) else expr
        if len(self._simplifier.memo) > _MEMO_LIMIT:
            self._simplifier.clear()
            self._simplifier.lin.clear()
            self._bounds.keys.clear()
        out = self._simplifier.simplify(expr)
        if out is not expr and same_tree(out, expr):
            return expr
        return out

    def rewrite_simplify(self, expr: E.ExprLike) -> E.PrimExpr:
        """TVM's name for one simplifier pass: here the same as `simplify`.

        Example:
            >>> from unity import tir
            >>> Analyzer().rewrite_simplify(tir.Var("x") * 1).name
            'x'
        """
        return self.simplify(expr)

    def canonical_simplify(self, expr: E.ExprLike) -> E.PrimExpr:
        """TVM's name for the canonical-form simplifier: here the same as `simplify`.

        Example:
            >>> from unity import tir
            >>> x = tir.Var("x")
            >>> Analyzer().canonical_simplify(x + 1 - x).value
            1
        """
        return self.simplify(expr)

    def can_prove(self, cond: E.ExprLike) -> bool:
        """True when `cond` simplifies to true (False means "not proven", not "false").

        Example:
            >>> from unity import tir
            >>> i = tir.Var("i")
            >>> ana = Analyzer()
            >>> ana.bind(i, tir.Range.from_min_extent(0, 8))
            >>> ana.can_prove(tir.eq(i // 8, 0))
            True
        """
        out = self.simplify(cond)
        return type(out) is E.IntImm and out.value != 0

    def can_prove_equal(self, a: E.ExprLike, b: E.ExprLike) -> bool:
        """True when `a == b` is provable (for floats: when both simplify to the same form).

        Example:
            >>> from unity import tir
            >>> i = tir.Var("i")
            >>> Analyzer().can_prove_equal((i + 3) + 5, i + 8)
            True
        """
        x, y = (
            E.const(a) if not isinstance(a, E.PrimExpr) else a,
            E.const(b) if not isinstance(b, E.PrimExpr) else b,
        )
        if is_index_dtype(x.dtype) and is_index_dtype(y.dtype):
            return self.can_prove(E.eq(x, y))
        keys = self._bounds.keys
        return expr_key(self.simplify(x), keys) == expr_key(self.simplify(y), keys)

    def const_int_bound(self, expr: E.ExprLike) -> ConstIntBound:
        """Return constant bounds of an integer expression (`NEG_INF`/`POS_INF` if open).

        Example:
            >>> from unity import tir
            >>> i = tir.Var("i")
            >>> ana = Analyzer()
            >>> ana.bind(i, tir.Range.from_min_extent(0, 100))
            >>> ana.const_int_bound(i % 8)
            ConstIntBound(min_value=0, max_value=7)
        """
        expr = E.const(expr) if not isinstance(expr, E.PrimExpr) else expr
        if not (dt.is_integer(expr.dtype) or dt.is_bool(expr.dtype)):
            raise TypeError(f"const_int_bound needs an integer expression, got dtype {expr.dtype}")
        lo, hi = self._bounds.bound(expr)
        s_lo, s_hi = self._bounds.bound(self.simplify(expr))
        return ConstIntBound(max(lo, s_lo), min(hi, s_hi))

    def int_set(
        self, expr: E.ExprLike, dom_map: dict[E.Var, E.Range | IntervalSet] | None = None
    ) -> IntervalSet:
        """Return the symbolic interval `expr` covers when variables range over `dom_map`.

        Without `dom_map`, the ranges given to `bind` are used.

        Example:
            >>> from unity import tir
            >>> i, n = tir.Var("i"), tir.Var("n")
            >>> s = Analyzer().int_set(i * 4 + 1, {i: tir.Range.from_min_extent(0, n)})
            >>> s.min_value.value, type(s.max_value).__name__
            (1, 'Sub')
        """
        expr = E.const(expr) if not isinstance(expr, E.PrimExpr) else expr
        domains = dict(self._ranges) if dom_map is None else dom_map
        return eval_set(self, expr, domains)


_MISSING = object()
