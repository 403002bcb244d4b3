"""Convert TIR integer expressions to sympy and back, losslessly.

`floordiv(a, b)` is `floor(a / b)`, `floormod(a, b)` is `Mod(a, b)` (sympy's `Mod` takes the
sign of the divisor, as floormod does), `min`/`max` are `Min`/`Max`, and `select` is a
`Piecewise`.  Truncating division and modulo become the undefined functions `truncdiv` /
`truncmod` so they survive a round trip.  Variables become integer symbols (`SizeVar`s are
non-negative); name clashes get a suffix.  Only the relax shape code and proofs use this:
never the simplifier's hot path.

Example:
    >>> from unity import tir
    >>> i = tir.Var("i")
    >>> str(to_sympy((i * 4 + 5) // 8))
    'floor(i/2 + 5/8)'
    >>> to_sympy((i * 32 + 5) // 32)      # sympy knows i is an integer
    i
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import sympy

from unity.ir import dtype as dt
from unity.tir import expr as E

truncdiv = sympy.Function("truncdiv")
"""sympy stand-in for `tir.Div` on integers (rounds toward zero)."""
truncmod = sympy.Function("truncmod")
"""sympy stand-in for `tir.Mod` on integers (sign of the dividend)."""

_CMP_TO = {
    E.EQ: sympy.Eq,
    E.NE: sympy.Ne,
    E.LT: sympy.Lt,
    E.LE: sympy.Le,
    E.GT: sympy.Gt,
    E.GE: sympy.Ge,
}


def to_sympy(expr: E.PrimExpr, var_map: dict[E.Var, sympy.Symbol] | None = None) -> sympy.Basic:
    """Convert an integer/bool TIR expression to sympy.

    Args:
        expr: the expression (integer arithmetic, min/max, comparisons, logic, select).
        var_map: filled with (and reused for) the symbol of each variable.

    Returns:
        The sympy expression.

    Raises:
        TypeError: for nodes sympy cannot hold exactly (loads, calls, float casts).

    Example:
        >>> from unity import tir
        >>> n = tir.SizeVar("n")
        >>> to_sympy(tir.min(n, 4) % 3)
        Mod(Min(4, n), 3)
    """
    var_map = {} if var_map is None else var_map
    return _To(var_map).convert(expr)


class _To:
    def __init__(self, var_map: dict[E.Var, sympy.Symbol]) -> None:
        self.var_map = var_map
        self.names = {s.name for s in var_map.values()}

    def symbol(self, var: E.Var) -> sympy.Symbol:
        sym = self.var_map.get(var)
        if sym is None:
            name, k = var.name, 1
            while name in self.names:
                name, k = f"{var.name}_{k}", k + 1
            self.names.add(name)
            nonneg = True if isinstance(var, E.SizeVar) else None
            sym = sympy.Symbol(name, integer=True, nonnegative=nonneg)
            self.var_map[var] = sym
        return sym

    def convert(self, e: E.PrimExpr) -> sympy.Basic:
        cls = type(e)
        if isinstance(e, E.Var):
            return self.symbol(e)
        if cls is E.IntImm:
            return (
                sympy.true
                if e.dtype == "bool" and e.value
                else sympy.false
                if e.dtype == "bool"
                else sympy.Integer(e.value)
            )
        if cls is E.Cast and (dt.is_integer(e.dtype) and dt.is_integer(e.value.dtype)):
            return self.convert(e.value)
        if isinstance(e, E.BinaryOp) and not (dt.is_integer(e.a.dtype) or dt.is_bool(e.a.dtype)):
            raise TypeError(
                f"to_sympy converts integer expressions only; found {cls.__name__} of {e.a.dtype}"
            )
        if cls in _BINARY:
            return _BINARY[cls](self.convert(e.a), self.convert(e.b))
        if cls in _CMP_TO:
            return _CMP_TO[cls](self.convert(e.a), self.convert(e.b))
        if cls is E.Not:
            return sympy.Not(self.convert(e.a))
        if cls is E.Select:
            c, t, f = (self.convert(v) for v in (e.condition, e.true_value, e.false_value))
            return sympy.Piecewise((t, c), (f, True))
        raise TypeError(f"to_sympy cannot convert a {cls.__name__} node (dtype {e.dtype})")


_BINARY = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
    E.FloorDiv: lambda a, b: sympy.floor(a / b), E.FloorMod: sympy.Mod, E.Div: truncdiv,
    E.Mod: truncmod, E.Min: sympy.Min, E.Max: sympy.Max, E.And: sympy.And, E.Or: sympy.Or,
}  # fmt: skip


def from_sympy(
    sexpr: sympy.Basic | int,
    var_map: Mapping[sympy.Symbol | str, E.Var] | Mapping[E.Var, sympy.Symbol],
    dtype: str | None = None,
) -> E.PrimExpr:
    """Convert a sympy integer expression back to TIR.

    Args:
        sexpr: the sympy expression (or a Python int).
        var_map: symbol (or symbol name) -> `tir.Var`; the map `to_sympy` filled also works.
        dtype: dtype of the constants; by default the widest dtype of the variables in
            `var_map` (int64 when there are none), so no casts appear.

    Returns:
        The TIR expression.

    Raises:
        TypeError: for a free symbol missing from `var_map`, non-integer rationals outside
            `floor`/`ceiling`, or unsupported functions.

    Example:
        >>> import sympy
        >>> from unity import tir
        >>> n = tir.Var("n", "int64")
        >>> e = from_sympy(sympy.floor(sympy.Symbol("n", integer=True) / 4), {"n": n})
        >>> type(e).__name__, e.dtype
        ('FloorDiv', 'int64')
    """
    by_name: dict[str, E.Var] = {}
    for k, v in var_map.items():
        if isinstance(k, E.Var):
            by_name[v.name] = k  # type: ignore[union-attr]  # a to_sympy map: Var -> Symbol
        else:
            by_name[k if isinstance(k, str) else k.name] = v  # type: ignore[assignment]
    if dtype is None:
        widths = sorted(((dt.bits(v.dtype), v.dtype) for v in by_name.values()), reverse=True)
        dtype = widths[0][1] if widths else "int64"
    return _From(by_name, dtype).convert(sympy.sympify(sexpr))


class _From:
    def __init__(self, by_name: dict[str, E.Var], dtype: str) -> None:
        self.by_name = by_name
        self.dtype = dtype

    def const(self, value: int) -> E.PrimExpr:
        return E.const(int(value), self.dtype)

    def convert(self, s: sympy.Basic) -> E.PrimExpr:
        if s is sympy.true or s is sympy.false:
            return E.const(bool(s))
        if isinstance(s, sympy.Integer):
            return self.const(int(s))
        if isinstance(s, sympy.Symbol):
            var = self.by_name.get(s.name)
            if var is None:
                raise TypeError(f"from_sympy: symbol {s.name} has no tir.Var in var_map")
            return var
        if isinstance(s, sympy.Add):
            return self._add(s)
        if isinstance(s, sympy.Mul):
            return self._mul(s)
        if isinstance(s, sympy.Pow) and isinstance(s.exp, sympy.Integer) and s.exp > 0:
            base = self.convert(s.base)
            out = base
            for _ in range(int(s.exp) - 1):
                out = out * base
            return out
        if isinstance(s, sympy.floor):
            num, den = self._fraction(s.args[0])
            return num if den is None else E.floordiv(num, den)
        if isinstance(s, sympy.ceiling):
            num, den = self._fraction(s.args[0])
            return (
                num
                if den is None
                else E.const(0, num.dtype) - E.floordiv(E.const(0, num.dtype) - num, den)
            )
        if isinstance(s, sympy.Mod):
            return E.floormod(self.convert(s.args[0]), self.convert(s.args[1]))
        if isinstance(s, (sympy.Min, sympy.Max)):
            build = E.min_value_of if isinstance(s, sympy.Min) else E.max_value_of
            args = [self.convert(a) for a in s.args]
            out = args[0]
            for a in args[1:]:
                out = build(out, a)
            return out
        if s.func in (truncdiv, truncmod):
            a, b = (self.convert(x) for x in s.args)
            return E.truncdiv(a, b) if s.func is truncdiv else E.truncmod(a, b)
        return self._logic(s)

    def _logic(self, s: sympy.Basic) -> E.PrimExpr:
        rel = {
            sympy.Eq: E.eq,
            sympy.Ne: E.ne,
            sympy.Lt: E.lt,
            sympy.Le: E.le,
            sympy.Gt: E.gt,
            sympy.Ge: E.ge,
        }
        if type(s) in rel:
            return rel[type(s)](self.convert(s.lhs), self.convert(s.rhs))  # type: ignore[attr-defined]
        if isinstance(s, (sympy.And, sympy.Or)):
            args = [self.convert(a) for a in s.args]
            out = args[0]
            for a in args[1:]:
                out = E.logical_and(out, a) if isinstance(s, sympy.And) else E.logical_or(out, a)
            return out
        if isinstance(s, sympy.Not):
            return E.Not(self.convert(s.args[0]))
        if isinstance(s, sympy.Piecewise):
            return self._piecewise(list(s.args))
        raise TypeError(f"from_sympy cannot convert {s} (a {type(s).__name__})")

    def _piecewise(self, pieces: list[tuple[sympy.Basic, sympy.Basic]]) -> E.PrimExpr:
        value, cond = pieces[0]
        if cond is sympy.true or len(pieces) == 1:
            return self.convert(value)
        return E.select(self.convert(cond), self.convert(value), self._piecewise(pieces[1:]))

    def _add(self, s: sympy.Add) -> E.PrimExpr:
        pos, neg = _signed_terms(s)
        out = self.convert(pos[0]) if pos else None
        for term in pos[1:]:
            out = out + self.convert(term)  # type: ignore[operator]
        for term in neg:
            out = self.const(0) - self.convert(term) if out is None else out - self.convert(term)
        return out  # type: ignore[return-value]

    def _mul(self, s: sympy.Mul) -> E.PrimExpr:
        coeff, rest = s.as_coeff_Mul()
        if not isinstance(coeff, sympy.Integer):
            raise TypeError(f"from_sympy: {s} is not an integer expression (rational coefficient)")
        factors = [self.convert(f) for f in sympy.Mul.make_args(rest)]
        out = factors[0]
        for f in factors[1:]:
            out = out * f
        return out if coeff == 1 else out * int(coeff)

    def _fraction(self, arg: sympy.Basic) -> tuple[E.PrimExpr, E.PrimExpr | None]:
        num, den = common_fraction(arg, expand=True)
        return self.convert(num), (None if den == 1 else self.convert(den))


@lru_cache(maxsize=4096)
def common_fraction(arg: sympy.Basic, expand: bool = False) -> tuple[sympy.Basic, sympy.Basic]:
    """`arg` as ``(numerator, denominator)`` over one common denominator (the numerator
    expanded with `expand` where there is a denominator).  Cached: sympy's `together` is
    slow, and the same few sizes (``H/16 - 13/16`` for every conv tile over a symbolic
    image) come back thousands of times in one compile.

    Example:
        >>> H = sympy.Symbol("H", integer=True)
        >>> common_fraction(H / 16 - sympy.Rational(13, 16))
        (H - 13, 16)
    """
    num, den = sympy.fraction(sympy.together(arg))
    return (sympy.expand(num), den) if expand and den != 1 else (num, den)


@lru_cache(maxsize=4096)
def _signed_terms(s: sympy.Add) -> tuple[tuple[sympy.Basic, ...], tuple[sympy.Basic, ...]]:
    """The terms of `s` in sympy's printing order, split into those added and those
    subtracted (negated); cached, as `as_ordered_terms` sorts (slowly) every time."""
    pos, neg = [], []
    for term in s.as_ordered_terms():
        coeff = term.as_coeff_Mul()[0]
        (neg if coeff < 0 else pos).append(-term if coeff < 0 else term)
    return tuple(pos), tuple(neg)
