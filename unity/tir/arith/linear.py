"""Canonical linear form of integer expressions: `sum(coeff * atom) + const`.

Atoms are the non-linear parts (variables, `x // c`, `x % c`, `min`, loads, ...), keyed
structurally (`expr_key`), so like terms collect: `i*32 + j - i*32` has the single term
`j`.  The simplifier works on this form and rebuilds an expression with `to_expr`, keeping
terms in order of first appearance, positive terms first and the constant last.

Example:
    >>> from unity import tir
    >>> i, j = tir.Var("i"), tir.Var("j")
    >>> lin = to_linear((i * 4 + 3) * 8 + j + 5)
    >>> [coeff for _, coeff in lin.terms.values()], lin.const
    ([32, 1], 29)
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import cache

from unity.ir import dtype as dt
from unity.ir.node import Node
from unity.tir.arith.key import expr_key
from unity.tir.expr import Add, IntImm, Mul, PrimExpr, Sub

Term = tuple[PrimExpr, int]


class Linear:
    """`sum(coeff * atom for atom, coeff in terms.values()) + const` in one integer dtype.

    Example:
        >>> from unity.tir.expr import Var
        >>> i = Var("i")
        >>> lin = Linear("int32", {"i": (i, 3)}, 5)
        >>> lin.to_expr().script()
        'i * 3 + 5'
    """

    __slots__ = ("const", "dtype", "terms")

    def __init__(self, dtype: str, terms: dict[Hashable, Term] | None = None, const: int = 0):
        self.dtype = dtype
        self.terms: dict[Hashable, Term] = terms if terms is not None else {}
        self.const = const

    @staticmethod
    def atom(expr: PrimExpr, key: Hashable) -> Linear:
        """The form `1 * expr`.

        Example:
            >>> from unity.tir.expr import Var
            >>> i = Var("i")
            >>> Linear.atom(i, "i").terms["i"][1], Linear.atom(i, "i").const
            (1, 0)
        """
        return Linear(expr.dtype, {key: (expr, 1)})

    def is_const(self) -> bool:
        """True when there are no terms.

        Example:
            >>> from unity.tir.expr import Var
            >>> Linear("int32", const=4).is_const(), Linear.atom(Var("i"), "i").is_const()
            (True, False)
        """
        return not self.terms

    def plus(self, other: Linear, sign: int = 1) -> Linear:
        """Return `self + sign * other`, dropping terms whose coefficient cancels.

        Example:
            >>> from unity.tir.expr import Var
            >>> i = Var("i")
            >>> a = Linear("int32", {"i": (i, 2)}, 1)
            >>> d = a.plus(a, sign=-1)
            >>> d.terms, d.const
            ({}, 0)
        """
        terms = dict(self.terms)
        for key, (atom, coeff) in other.terms.items():
            old = terms.get(key)
            total = sign * coeff + (old[1] if old is not None else 0)
            if total == 0:
                terms.pop(key, None)
            else:
                terms[key] = (old[0] if old is not None else atom, total)
        return Linear(self.dtype, terms, self.const + sign * other.const)

    def scaled(self, factor: int) -> Linear:
        """Return `factor * self`.

        Example:
            >>> from unity.tir.expr import Var
            >>> i = Var("i")
            >>> s = Linear("int32", {"i": (i, 2)}, 1).scaled(3)
            >>> s.terms["i"][1], s.const
            (6, 3)
        """
        if factor == 0:
            return Linear(self.dtype)
        terms = {k: (a, c * factor) for k, (a, c) in self.terms.items()}
        return Linear(self.dtype, terms, self.const * factor)

    def shape_key(self) -> Hashable:
        """Key of the non-constant part (order-independent), for facts about it.

        Example:
            >>> from unity.tir.expr import Var
            >>> i, j = Var("i"), Var("j")
            >>> a = Linear("int32", {"i": (i, 2), "j": (j, 1)}, 0)
            >>> b = Linear("int32", {"j": (j, 1), "i": (i, 2)}, 7)
            >>> a.shape_key() == b.shape_key()
            True
        """
        return frozenset((k, c) for k, (_, c) in self.terms.items())

    def to_expr(self) -> PrimExpr:
        """Rebuild an expression: positive terms, then subtracted ones, then the constant.

        Example:
            >>> from unity import tir
            >>> i = tir.Var("i")
            >>> type(to_linear(i * 2 - 3).to_expr()).__name__
            'Sub'
        """
        dtype = self.dtype
        pos = [(a, c) for a, c in self.terms.values() if c > 0]
        neg = [(a, -c) for a, c in self.terms.values() if c < 0]
        if not pos:
            if not neg:
                return make_int(dtype, self.const)
            if self.const == 0:
                first, coeff = neg.pop(0)
                result: PrimExpr = Mul(first, make_int(dtype, -coeff))
            else:
                result = make_int(dtype, self.const)
            for atom, coeff in neg:
                result = Sub(result, _term(atom, coeff, dtype))
            return result
        result = _term(pos[0][0], pos[0][1], dtype)
        for atom, coeff in pos[1:]:
            result = Add(result, _term(atom, coeff, dtype))
        for atom, coeff in neg:
            result = Sub(result, _term(atom, coeff, dtype))
        if self.const > 0:
            return Add(result, make_int(dtype, self.const))
        if self.const < 0:
            return Sub(result, make_int(dtype, -self.const))
        return result


def _term(atom: PrimExpr, coeff: int, dtype: str) -> PrimExpr:
    return atom if coeff == 1 else Mul(atom, make_int(dtype, coeff))


def make_int(dtype: str, value: int) -> IntImm:
    """An `IntImm` of `dtype` holding `value` wrapped to the dtype's width, as hardware does.

    Example:
        >>> make_int("int8", 130).value
        -126
    """
    cached = _IMM_CACHE.get((dtype, value))
    if cached is not None:
        return cached
    _, hi, mask = _int_layout(dtype)
    wrapped = (1 if value else 0) if mask == 1 else value & mask
    if wrapped > hi:
        wrapped -= mask + 1
    imm = IntImm(dtype, wrapped)
    if -1024 <= value <= 1024 and len(_IMM_CACHE) < 65536:
        _IMM_CACHE[(dtype, value)] = imm  # immediates are immutable: sharing them is safe
    return imm


_IMM_CACHE: dict[tuple[str, int], IntImm] = {}


@cache
def _int_layout(dtype: str) -> tuple[int, int, int]:
    """`(min, max, mask)` of an integer or bool dtype."""
    if dt.is_bool(dtype):
        return (0, 1, 1)
    bits = dt.bits(dtype)
    if dt.is_int(dtype):
        return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1, (1 << bits) - 1)
    return (0, (1 << bits) - 1, (1 << bits) - 1)


@cache
def is_index_dtype(dtype: str) -> bool:
    """True for scalar signed/unsigned integer dtypes (the ones linear forms cover).

    Example:
        >>> is_index_dtype("int64"), is_index_dtype("uint8"), is_index_dtype("int32x4")
        (True, True, False)
    """
    return dt.is_integer(dtype) and dt.lanes(dtype) == 1


@cache
def is_signed_index_dtype(dtype: str) -> bool:
    """True for scalar signed integers: their sums do not wrap (overflow is ignored).

    Example:
        >>> is_signed_index_dtype("int64"), is_signed_index_dtype("uint8")
        (True, False)
    """
    return dt.is_int(dtype) and dt.lanes(dtype) == 1


def to_linear(expr: PrimExpr, memo: dict[Node, Hashable] | None = None) -> Linear:
    """Flatten `Add`/`Sub`/`Mul`-by-constant into a `Linear`; anything else is an atom.

    Example:
        >>> from unity import tir
        >>> to_linear(tir.Var("i") * 3 - 3).const
        -3
    """
    cls = type(expr)
    if cls is IntImm:
        return Linear(expr.dtype, None, expr.value)  # type: ignore[attr-defined]
    if cls is Add or cls is Sub:
        a = to_linear(expr.a, memo)  # type: ignore[attr-defined]
        return a.plus(to_linear(expr.b, memo), 1 if cls is Add else -1)  # type: ignore[attr-defined]
    if cls is Mul:
        a = to_linear(expr.a, memo)  # type: ignore[attr-defined]
        b = to_linear(expr.b, memo)  # type: ignore[attr-defined]
        if b.is_const():
            return a.scaled(b.const)
        if a.is_const():
            return b.scaled(a.const)
    return Linear.atom(expr, expr_key(expr, memo))
