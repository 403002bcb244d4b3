"""Division, modulo and comparison on linear forms, using bounds.

The simplifier hands these functions the linear form of a (simplified) dividend and a
constant divisor.  They pull out the multiples of the divisor, use the bounds of what
remains, and split off low "digits" that provably stay below a common factor:

    floordiv(c*q + r, c) = q + floordiv(r, c)                          (always)
    floordiv(r, c) = k              when k*c <= r < (k+1)*c              (bounds)
    floordiv(g*r1 + r2, g*c') = floordiv(r1, c')  when 0 <= r2 < g      (digits)
    floormod(g*r1 + r2, g*c') = g*floormod(r1, c') + r2  when 0 <= r2 < g

Example:
    >>> from unity import tir
    >>> from unity.tir.arith.const_int_bound import BoundAnalyzer
    >>> i0, i1 = tir.Var("i0"), tir.Var("i1")
    >>> b = BoundAnalyzer()
    >>> b.known[i1] = (0, 31)
    >>> floordiv_linear(b, to_linear(i0 * 32 + i1), 32).to_expr() is i0
    True
"""

from __future__ import annotations

from collections.abc import Hashable
from math import gcd

from unity.tir import expr as E
from unity.tir.arith.const_int_bound import POS_INF, BoundAnalyzer
from unity.tir.arith.key import expr_key
from unity.tir.arith.linear import Linear, make_int, to_linear
from unity.tir.expr import FloorDiv, FloorMod, IntImm, PrimExpr

_TRUE = IntImm("bool", 1)
_FALSE = IntImm("bool", 0)


def split_multiples(lin: Linear, c: int) -> tuple[Linear, Linear]:
    """Write `lin = c*q + r` with `q` taking the terms whose coefficient `c` divides.

    Example:
        >>> i, j = E.Var("i"), E.Var("j")
        >>> q, r = split_multiples(to_linear(i * 8 + j * 3 + 4), 4)
        >>> [c for _, c in q.terms.values()], q.const, [c for _, c in r.terms.values()], r.const
        ([2], 1, [3], 0)
    """
    q_terms: dict[Hashable, tuple[PrimExpr, int]] = {}
    r_terms: dict[Hashable, tuple[PrimExpr, int]] = {}
    for key, (atom, coeff) in lin.terms.items():
        if coeff % c == 0:
            q_terms[key] = (atom, coeff // c)
        else:
            r_terms[key] = (atom, coeff)
    q = Linear(lin.dtype, q_terms, lin.const // c)
    return q, Linear(lin.dtype, r_terms, lin.const % c)


def _digit_split(b: BoundAnalyzer, r: Linear, c: int) -> tuple[int, Linear, Linear] | None:
    """Find `g | c` with `r = g*r1 + r2`, `0 <= r2 < g`; return `(g, r1, r2)` or None."""
    factors = sorted({gcd(coeff, c) for _, coeff in r.terms.values()}, reverse=True)
    for g in factors:
        if g <= 1 or g >= c:
            continue
        r1, r2 = split_multiples(r, g)
        lo, hi = b.bound_linear(r2)
        if lo >= 0 and hi < g:
            return g, r1, r2
    return None


def floordiv_linear(b: BoundAnalyzer, lin: Linear, c: int) -> Linear:
    """Return the linear form of `floordiv(lin, c)` for a constant `c > 0`.

    Example:
        >>> from unity import tir
        >>> i = tir.Var("i")
        >>> floordiv_linear(BoundAnalyzer(), to_linear(i * 8 + 4), 4).to_expr().b.value
        1
    """
    if c == 1:
        return lin
    q, r = split_multiples(lin, c)
    if r.is_const():
        return q
    lo, hi = b.bound_linear(r)
    if lo // c == hi // c and hi < POS_INF and -lo < POS_INF:
        return q.plus(Linear(lin.dtype, None, lo // c))
    split = _digit_split(b, r, c)
    if split is not None:
        g, r1, _ = split
        return q.plus(floordiv_linear(b, r1, c // g))
    if len(r.terms) == 1 and r.const:  # (x // c1 + k) // c = (x + k * c1) // (c1 * c)
        ((atom, coeff),) = r.terms.values()
        if coeff == 1 and type(atom) is FloorDiv and type(atom.b) is IntImm and atom.b.value > 0:
            c1 = atom.b.value
            inner = to_linear(atom.a).plus(Linear(lin.dtype, None, r.const * c1))
            return q.plus(floordiv_linear(b, inner, c1 * c))
    return q.plus(_atom_of(b, _nested(FloorDiv, r, c)))


def floormod_linear(b: BoundAnalyzer, lin: Linear, c: int) -> Linear:
    """Return the linear form of `floormod(lin, c)` for a constant `c > 0`.

    Example:
        >>> from unity import tir
        >>> i, j = tir.Var("i"), tir.Var("j")
        >>> bounds = BoundAnalyzer()
        >>> bounds.known[j] = (0, 7)
        >>> floormod_linear(bounds, to_linear(i * 8 + j), 8).to_expr() is j
        True
    """
    if c == 1:
        return Linear(lin.dtype)
    _, r = split_multiples(lin, c)
    if r.is_const():
        return r
    lo, hi = b.bound_linear(r)
    if lo // c == hi // c and hi < POS_INF and -lo < POS_INF:
        return r.plus(Linear(lin.dtype, None, -(lo // c) * c))
    split = _digit_split(b, r, c)
    if split is not None:
        g, r1, r2 = split
        return floormod_linear(b, r1, c // g).scaled(g).plus(r2)
    return _atom_of(b, _nested(FloorMod, r, c))


def _nested(cls: type, r: Linear, c: int) -> PrimExpr:
    """Build `cls(r, c)`, merging `floordiv(floordiv(x, c1), c)` and `x % c1 % c` (c | c1)."""
    dtype = r.dtype
    if r.const == 0 and len(r.terms) == 1:
        ((atom, coeff),) = r.terms.values()
        inner_c = atom.b.value if type(atom) is cls and type(atom.b) is IntImm else 0  # type: ignore[attr-defined]
        if coeff == 1 and inner_c > 0:
            if cls is FloorDiv:
                return FloorDiv(atom.a, make_int(dtype, inner_c * c))  # type: ignore[attr-defined]
            if inner_c % c == 0:
                return FloorMod(atom.a, make_int(dtype, c))  # type: ignore[attr-defined]
    return cls(r.to_expr(), make_int(dtype, c))


def _atom_of(b: BoundAnalyzer, expr: PrimExpr) -> Linear:
    return Linear.atom(expr, expr_key(expr, b.keys))


def merge_div_mod_pairs(b: BoundAnalyzer, lin: Linear) -> Linear:
    """Rewrite `k*c*floordiv(x, c) + k*floormod(x, c)` to `k*x` inside a sum.

    Example:
        >>> from unity import tir
        >>> x = tir.Var("x")
        >>> lin = to_linear(x // 8 * 8 + x % 8)
        >>> merge_div_mod_pairs(BoundAnalyzer(), lin).to_expr() is x
        True
    """
    for key, (atom, coeff) in lin.terms.items():
        if type(atom) is not FloorMod or type(key) is not tuple:
            continue
        if type(atom.b) is IntImm:  # type: ignore[attr-defined]
            div_key: Hashable | None = (FloorDiv, *key[1:])
            div = lin.terms.get(div_key)
            c = atom.b.value  # type: ignore[attr-defined]
            if div is None or c <= 0 or div[1] != coeff * c:
                continue
        else:  # a symbolic divisor: the pair's quotient is the atom `floordiv(x, n) * n`
            div_key = _symbolic_quotient(lin, atom, coeff)
            if div_key is None:
                continue
        rest = Linear(lin.dtype, dict(lin.terms), lin.const)
        del rest.terms[key], rest.terms[div_key]
        merged = rest.plus(to_linear(atom.a, b.keys).scaled(coeff))  # type: ignore[attr-defined]
        return merge_div_mod_pairs(b, merged)
    return lin


def _symbolic_quotient(lin: Linear, mod: PrimExpr, coeff: int) -> Hashable | None:
    """The key of the term ``coeff * (floordiv(x, n) * n)`` of `lin` that pairs with
    ``coeff * floormod(x, n)`` (`mod`) for a symbolic `n`, else None.  Reshapes over a
    symbolic length (``seq``) leave such pairs: ``i // seq * seq + i % seq`` is `i`."""
    x, n = expr_key(mod.a), expr_key(mod.b)  # type: ignore[attr-defined]
    for key, (atom, c) in lin.terms.items():
        if c != coeff or type(atom) is not E.Mul:
            continue
        for div, other in ((atom.a, atom.b), (atom.b, atom.a)):
            if type(div) is FloorDiv and expr_key(other) == n:
                if expr_key(div.a) == x and expr_key(div.b) == n:
                    return key
    return None


def as_nonpositive(cls: type, d: Linear) -> list[Linear]:
    """Turn `d <op> 0` into facts of the form `e <= 0` (integers; `!=` gives none).

    Example:
        >>> from unity import tir
        >>> i = tir.Var("i")
        >>> as_nonpositive(E.LT, to_linear(i - 3))[0].const        # i - 3 < 0 -> i - 2 <= 0
        -2
    """
    one = Linear(d.dtype, None, 1)
    if cls is E.LT:
        return [d.plus(one)]
    if cls is E.LE:
        return [d]
    if cls is E.GT:
        return [d.scaled(-1).plus(one)]
    if cls is E.GE:
        return [d.scaled(-1)]
    if cls is E.EQ:
        return [d, d.scaled(-1)]
    return []


_FLIP = {E.LT: E.GT, E.GT: E.LT, E.LE: E.GE, E.GE: E.LE, E.EQ: E.EQ, E.NE: E.NE}


def decide(cls: type, lo: int, hi: int) -> bool | None:
    """Decide `d <op> 0` from `lo <= d <= hi`, or None.

    Example:
        >>> decide(E.LT, -5, -1), decide(E.LT, -5, 3)
        (True, None)
    """
    if cls is E.LT:
        return True if hi < 0 else False if lo >= 0 else None
    if cls is E.LE:
        return True if hi <= 0 else False if lo > 0 else None
    if cls is E.GT:
        return True if lo > 0 else False if hi <= 0 else None
    if cls is E.GE:
        return True if lo >= 0 else False if hi < 0 else None
    if lo == hi == 0:
        return cls is E.EQ
    if lo > 0 or hi < 0:
        return cls is E.NE
    return None


def normalize_compare(cls: type, d: Linear) -> E.PrimExpr:
    """Write `d <op> 0` as `positive terms <op> other terms + k`, divided by the terms' gcd.

    Example:
        >>> from unity import tir
        >>> i = tir.Var("i")
        >>> normalize_compare(E.LT, to_linear(i * 4 - 8)).b.value        # i*4 - 8 < 0 -> i < 2
        2
    """
    if all(c < 0 for _, c in d.terms.values()):
        d, cls = d.scaled(-1), _FLIP[cls]
    g = 0
    for _, c in d.terms.values():
        g = gcd(g, c)
    k = -d.const
    if cls is E.EQ or cls is E.NE:
        if k % g:
            return _TRUE if cls is E.NE else _FALSE
        bound = k // g
    else:
        rounds_up = cls is E.LT or cls is E.GE
        bound = -((-k) // g) if rounds_up else k // g
    left = Linear(d.dtype, {key: (a, c // g) for key, (a, c) in d.terms.items() if c > 0})
    right = Linear(d.dtype, {key: (a, -c // g) for key, (a, c) in d.terms.items() if c < 0}, bound)
    return cls(left.to_expr(), right.to_expr())
