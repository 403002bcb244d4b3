"""Interval sets: the symbolic range `[min_value, max_value]` an expression covers.

`eval_set` evaluates an integer expression over variable domains (loop ranges) and returns
inclusive symbolic ends, e.g. the region of a buffer a loop nest touches.  An end is `None`
when unbounded.  Sums use the linear form, so `i*32 + j - i*32` covers only `j`'s range.

Example:
    >>> from unity import tir
    >>> from unity.tir.arith import Analyzer
    >>> i, j = tir.Var("i"), tir.Var("j")
    >>> doms = {i: tir.Range.from_min_extent(0, 4), j: tir.Range.from_min_extent(0, 32)}
    >>> s = Analyzer().int_set(i * 32 + j, doms)
    >>> s.min_value.value, s.max_value.value
    (0, 127)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from unity.tir import expr as E
from unity.tir.arith.const_int_bound import NEG_INF, POS_INF, dtype_range
from unity.tir.arith.linear import is_index_dtype, make_int
from unity.tir.functor import post_order_visit

if TYPE_CHECKING:
    from unity.tir.arith.analyzer import Analyzer

End = E.PrimExpr | None


@dataclass(frozen=True, slots=True)
class IntervalSet:
    """All integers in `[min_value, max_value]` (inclusive); `None` ends are unbounded.

    Example:
        >>> from unity import tir
        >>> IntervalSet.from_range(tir.Range.from_min_extent(2, 8)).max_value.value
        9
    """

    min_value: End
    max_value: End

    @staticmethod
    def point(value: E.PrimExpr) -> IntervalSet:
        """The set holding only `value`.

        Example:
            >>> s = IntervalSet.point(E.Var("i"))
            >>> s.is_single_point(), s.min_value.name
            (True, 'i')
        """
        return IntervalSet(value, value)

    @staticmethod
    def everything() -> IntervalSet:
        """The unbounded set.

        Example:
            >>> IntervalSet.everything()
            IntervalSet(min_value=None, max_value=None)
        """
        return IntervalSet(None, None)

    @staticmethod
    def from_range(rng: E.Range) -> IntervalSet:
        """`[min, min + extent - 1]` (ends folded when constant).

        Example:
            >>> s = IntervalSet.from_range(E.Range.from_min_extent(E.Var("n"), 4))
            >>> type(s.max_value).__name__  # n + 4 - 1, left for the analyzer to fold
            'Sub'
        """
        if type(rng.min) is E.IntImm and type(rng.extent) is E.IntImm:
            return IntervalSet(
                rng.min, make_int(rng.min.dtype, rng.min.value + rng.extent.value - 1)
            )
        return IntervalSet(rng.min, rng.min + rng.extent - 1)

    def is_single_point(self) -> bool:
        """True when both ends are the same node (or equal immediates).

        Example:
            >>> three = IntervalSet(E.const(3), E.const(3))
            >>> three.is_single_point(), IntervalSet.everything().is_single_point()
            (True, False)
        """
        a, b = self.min_value, self.max_value
        if a is None or b is None:
            return False
        return a is b or (type(a) is E.IntImm and type(b) is E.IntImm and a.value == b.value)

    def to_range(self, analyzer: Analyzer) -> E.Range:
        """`Range(min, max - min + 1)`, simplified.

        Raises:
            ValueError: when an end is unbounded.

        Example:
            >>> from unity.tir.arith.analyzer import Analyzer
            >>> IntervalSet(E.const(2), E.const(9)).to_range(Analyzer()).extent.value
            8
        """
        if self.min_value is None or self.max_value is None:
            raise ValueError("cannot turn an unbounded interval set into a Range")
        extent = analyzer.simplify(self.max_value - self.min_value + 1)
        return E.Range(self.min_value, extent)

    def union(self, other: IntervalSet, analyzer: Analyzer) -> IntervalSet:
        """The smallest interval holding both sets.

        Example:
            >>> from unity.tir.arith.analyzer import Analyzer
            >>> a, b = IntervalSet(E.const(0), E.const(3)), IntervalSet(E.const(8), E.const(9))
            >>> s = a.union(b, Analyzer())
            >>> s.min_value.value, s.max_value.value
            (0, 9)
        """
        return IntervalSet(
            _combine(E.Min, self.min_value, other.min_value, analyzer),
            _combine(E.Max, self.max_value, other.max_value, analyzer),
        )

    def intersect(self, other: IntervalSet, analyzer: Analyzer) -> IntervalSet:
        """The interval both sets share (may be empty: min > max).

        Example:
            >>> from unity.tir.arith.analyzer import Analyzer
            >>> a, b = IntervalSet(E.const(0), E.const(7)), IntervalSet(E.const(4), E.const(12))
            >>> s = a.intersect(b, Analyzer())
            >>> s.min_value.value, s.max_value.value
            (4, 7)
        """
        lo = _pick(E.Max, self.min_value, other.min_value, analyzer)
        hi = _pick(E.Min, self.max_value, other.max_value, analyzer)
        return IntervalSet(lo, hi)


def _combine(cls: type, a: End, b: End, analyzer: Analyzer) -> End:
    if a is None or b is None:
        return None
    return analyzer.simplify(cls(a, b))


def _pick(cls: type, a: End, b: End, analyzer: Analyzer) -> End:
    if a is None:
        return b
    if b is None:
        return a
    return analyzer.simplify(cls(a, b))


def eval_set(
    analyzer: Analyzer, expr: E.PrimExpr, dom_map: Mapping[E.Var, E.Range | IntervalSet]
) -> IntervalSet:
    """Evaluate the interval `expr` covers when each variable of `dom_map` ranges over its set.

    Example:
        >>> from unity import tir
        >>> from unity.tir.arith import Analyzer
        >>> i = tir.Var("i")
        >>> s = eval_set(Analyzer(), i % 8, {i: tir.Range.from_min_extent(0, 64)})
        >>> s.min_value.value, s.max_value.value
        (0, 7)
    """
    doms = {
        v: d if isinstance(d, IntervalSet) else IntervalSet.from_range(d)
        for v, d in dom_map.items()
    }
    facts: E.PrimExpr = E.const(True)
    for var, dom in doms.items():
        if dom.min_value is not None:
            facts = E.And(facts, E.GE(var, dom.min_value))
        if dom.max_value is not None:
            facts = E.And(facts, E.LE(var, dom.max_value))
    with analyzer.constraint_scope(facts):
        return _Evaluator(analyzer, doms).eval(analyzer.simplify(expr))


class _Evaluator:
    def __init__(self, analyzer: Analyzer, doms: dict[E.Var, IntervalSet]) -> None:
        self.ana = analyzer
        self.doms = doms

    def eval(self, expr: E.PrimExpr) -> IntervalSet:
        if not self._depends(expr):
            return IntervalSet.point(expr)
        if isinstance(expr, E.Var):
            return self.doms[expr]
        if not is_index_dtype(expr.dtype):
            return IntervalSet.everything()
        lin = self.ana._simplifier.linear(expr)
        if len(lin.terms) > 1 or lin.const != 0 or any(c != 1 for _, c in lin.terms.values()):
            return self._sum(lin.terms.values(), lin.const, expr.dtype)
        return self._atom(expr)

    def _sum(self, terms: object, const: int, dtype: str) -> IntervalSet:
        lo: End = make_int(dtype, const)
        hi: End = lo
        for atom, coeff in terms:  # type: ignore[attr-defined]
            s = self.eval(atom)
            small, big = (s.min_value, s.max_value) if coeff > 0 else (s.max_value, s.min_value)
            lo = None if lo is None or small is None else lo + small * coeff
            hi = None if hi is None or big is None else hi + big * coeff
        return self._simplified(lo, hi)

    def _atom(self, expr: E.PrimExpr) -> IntervalSet:
        cls = type(expr)
        const_b = cls in (E.FloorDiv, E.FloorMod) and type(expr.b) is E.IntImm and expr.b.value > 0  # type: ignore[attr-defined]
        if cls is E.FloorDiv and const_b:
            s = self.eval(expr.a)  # type: ignore[attr-defined]
            return self._simplified(_div_end(s.min_value, expr.b), _div_end(s.max_value, expr.b))  # type: ignore[attr-defined]
        if cls is E.FloorMod and const_b:
            return self._floormod(expr)  # type: ignore[arg-type]
        if cls is E.Min or cls is E.Max:
            sa, sb = self.eval(expr.a), self.eval(expr.b)  # type: ignore[attr-defined]
            return IntervalSet(
                _combine(cls, sa.min_value, sb.min_value, self.ana),
                _combine(cls, sa.max_value, sb.max_value, self.ana),
            )
        if cls is E.Select:
            return self.eval(expr.true_value).union(self.eval(expr.false_value), self.ana)  # type: ignore[attr-defined]
        return self._const_bound(expr)

    def _floormod(self, expr: E.FloorMod) -> IntervalSet:
        s, c = self.eval(expr.a), expr.b
        if s.min_value is not None and s.max_value is not None:
            same = self.ana.simplify(E.FloorDiv(s.max_value, c) - E.FloorDiv(s.min_value, c))
            if type(same) is E.IntImm and same.value == 0:
                return self._simplified(E.FloorMod(s.min_value, c), E.FloorMod(s.max_value, c))
        return self._const_bound(expr)

    def _const_bound(self, expr: E.PrimExpr) -> IntervalSet:
        b = self.ana.const_int_bound(expr)
        d_lo, d_hi = dtype_range(expr.dtype)  # past the dtype's range the value may wrap
        lo = None if b.min_value <= max(NEG_INF, d_lo - 1) else make_int(expr.dtype, b.min_value)
        hi = None if b.max_value >= min(POS_INF, d_hi + 1) else make_int(expr.dtype, b.max_value)
        return IntervalSet(lo, hi)

    def _simplified(self, lo: End, hi: End) -> IntervalSet:
        return IntervalSet(
            None if lo is None else self.ana.simplify(lo),
            None if hi is None else self.ana.simplify(hi),
        )

    def _depends(self, expr: E.PrimExpr) -> bool:
        found: list[bool] = []
        post_order_visit(expr, lambda n: found.append(True) if n in self.doms else None)
        return bool(found)


def _div_end(end: End, c: E.PrimExpr) -> End:
    return None if end is None else E.FloorDiv(end, c)
