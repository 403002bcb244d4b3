"""Prove an index inside its buffer over symbolic sizes, assuming each size at least 1.

A flattened index over symbolic sizes is not linear: a padded copy of an ``(N, C, H, W)``
tensor reads ``x[(c * 8 + j) * (W * H) + max(min(y - 1, H - 1), 0) * W + max(min(x - 1,
W - 1), 0)]``, inside ``C * H * W`` elements only because each clamped index stays below
its size.  The analyzer's linear forms and constant bounds cannot see it; here each
expression is bounded by polynomials in the size variables (loop variables replaced by
their ranges' ends, products of non-negative factors by products of bounds, a `min`'s
upper bound by its smaller side...), and a polynomial is taken non-negative when, with
every size written ``1 + s``, all its coefficients are.  The proof holds only for sizes of
at least 1 (``max(min(i, H - 1), 0) < H`` fails for an empty tensor): `prove_in_bounds`
returns the size variables it assumed, for the caller to test at run time.

Example:
    >>> from unity import tir
    >>> from unity.tir.arith import Analyzer
    >>> H = tir.SizeVar("H", "int64")
    >>> y = tir.Var("y", "int64")
    >>> ana = Analyzer()
    >>> ana.bind(y, tir.Range.from_min_extent(tir.const(0, "int64"), H + 2))
    >>> index = tir.max(tir.min(y - 1, H - 1), tir.const(0, "int64"))
    >>> sorted(v.name for v in prove_in_bounds(ana, index, H, {H}))
    ['H']
"""

from __future__ import annotations

from collections.abc import Set

import sympy

from unity.tir import expr as E
from unity.tir.arith.analyzer import Analyzer
from unity.tir.arith.const_int_bound import NEG_INF, POS_INF

__all__ = ["prove_in_bounds"]

Bounds = tuple[sympy.Expr, sympy.Expr]


def prove_in_bounds(
    analyzer: Analyzer, index: E.PrimExpr, extent: E.PrimExpr, sizes: Set[E.Var]
) -> frozenset[E.Var] | None:
    """The size variables that, when each is at least 1, make ``0 <= index < extent`` hold
    for every value of the loop variables `analyzer` knows the ranges of; None when this
    cannot be shown.  `sizes` are the variables that may be assumed at least 1 (the
    function's shape variables); any other free variable fails the proof.

    Example:
        >>> prove_in_bounds(ana, index, H, {H})  # doctest: +SKIP
        frozenset({H})
    """
    bounder = _Bounder(analyzer, sizes)
    try:
        lo, hi = bounder.bounds(index)
        ext_lo, _ = bounder.bounds(extent)
    except _Unbounded:
        return None
    if not bounder.nonneg(lo) or not bounder.nonneg(ext_lo - hi - 1):
        return None
    return frozenset(bounder.used)


class _Unbounded(Exception):
    """An expression without polynomial bounds."""


class _Bounder:
    def __init__(self, analyzer: Analyzer, sizes: Set[E.Var]) -> None:
        self.analyzer = analyzer
        self.sizes = sizes
        self.symbols: dict[E.Var, sympy.Symbol] = {}
        self.used: set[E.Var] = set()
        self.memo: dict[int, tuple[E.PrimExpr, Bounds]] = {}  # the node kept: its id stays its own

    def bounds(self, e: E.PrimExpr) -> Bounds:
        if id(e) not in self.memo:
            self.memo[id(e)] = (e, self._bounds(e))
        return self.memo[id(e)][1]

    def _bounds(self, e: E.PrimExpr) -> Bounds:
        if isinstance(e, E.IntImm):
            return sympy.Integer(e.value), sympy.Integer(e.value)
        if isinstance(e, E.Var):
            return self._var(e)
        if isinstance(e, E.Cast) and "int" in e.dtype and "int" in e.value.dtype:
            return self.bounds(e.value)
        if isinstance(e, E.Add | E.Sub | E.Mul | E.Min | E.Max):
            a, b = self.bounds(e.a), self.bounds(e.b)
            if isinstance(e, E.Add):
                return a[0] + b[0], a[1] + b[1]
            if isinstance(e, E.Sub):
                return a[0] - b[1], a[1] - b[0]
            if isinstance(e, E.Mul):
                return self._mul(a, b)
            if isinstance(e, E.Min):  # below the smaller low end; below either high end
                lo = self._pick(a[0], b[0], low=True)
                return lo, self._pick(a[1], b[1], low=True, any_ok=True)
            hi = self._pick(a[1], b[1], low=False)
            return self._pick(a[0], b[0], low=False, any_ok=True), hi
        if isinstance(e, E.FloorDiv | E.FloorMod) and isinstance(e.b, E.IntImm) and e.b.value > 0:
            c = e.b.value
            if isinstance(e, E.FloorMod):
                return sympy.Integer(0), sympy.Integer(c - 1)
            a = self.bounds(e.a)
            return (a[0] - (c - 1)) / c, a[1] / c
        raise _Unbounded(type(e).__name__)

    def _var(self, v: E.Var) -> Bounds:
        rng = self.analyzer.range_of(v)
        if rng is not None:  # a loop variable: its range's ends
            return self.bounds(rng.min)[0], self.bounds(rng.min + rng.extent - 1)[1]
        known = self.analyzer.const_int_bound(v)
        if known.min_value != NEG_INF and known.max_value != POS_INF:
            return sympy.Integer(known.min_value), sympy.Integer(known.max_value)
        if v not in self.sizes:
            raise _Unbounded(v.name)
        self.used.add(v)
        sym = self.symbols.setdefault(v, sympy.Symbol(f"s{len(self.symbols)}", integer=True))
        return sym, sym

    def _mul(self, a: Bounds, b: Bounds) -> Bounds:
        if self.nonneg(a[0]) and self.nonneg(b[0]):
            return a[0] * b[0], a[1] * b[1]
        for (x, y) in ((a, b), (b, a)):  # a constant factor
            if x[0] == x[1] and x[0].is_number:
                c = x[0]
                return (c * y[0], c * y[1]) if c >= 0 else (c * y[1], c * y[0])
        raise _Unbounded("a product of factors of unknown sign")

    def _pick(self, p: sympy.Expr, q: sympy.Expr, low: bool, any_ok: bool = False) -> sympy.Expr:
        """The smaller (`low`) or larger of `p` and `q` where provable; with `any_ok` (the
        bound holds with either) the tighter one if known, else `q`."""
        if self.nonneg(q - p):
            return p if low else q
        if self.nonneg(p - q):
            return q if low else p
        if any_ok:
            return q
        raise _Unbounded("min/max of incomparable bounds")

    def nonneg(self, poly: sympy.Expr) -> bool:
        """True when `poly` >= 0 for every size >= 1 (every coefficient non-negative once
        each size is written 1 + s)."""
        ones = {s: s + 1 for s in self.symbols.values()}
        shifted = sympy.expand(poly.subs(ones, simultaneous=True))
        if shifted.is_number:
            return bool(shifted >= 0)
        try:
            coeffs = sympy.Poly(shifted, *self.symbols.values()).coeffs()
        except sympy.PolynomialError:
            return False
        return all(c >= 0 for c in coeffs)
