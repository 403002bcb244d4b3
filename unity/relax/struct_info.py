"""Struct info: what relax knows statically about a value (kind, dtype, symbolic shape).

Symbolic dimensions are sympy integer symbols; a string ``"n"`` becomes
``sympy.Symbol("n", integer=True, positive=True)``.  Two shapes are equal when sympy
proves every pair of dims equal (``2*n`` equals ``n + n``).

Example:
    >>> sinfo = TensorStructInfo(("n", 4), "float32")
    >>> sinfo.ndim, str(sinfo.shape[0])
    (2, 'n')
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import field

import sympy

from unity.ir import dtype as dt
from unity.ir.node import Node, node

Dim = sympy.Expr
"""A dimension: a sympy integer expression (constant or symbolic)."""

DimLike = int | str | sympy.Expr
"""What users may write for a dimension."""

UNKNOWN_DTYPE = "void"
"""The dtype of a tensor whose element type is not known statically."""


def sym(name: str) -> sympy.Symbol:
    """Return the relax shape symbol called `name` (integer, positive).

    Example:
        >>> sym("n") == sym("n")
        True
    """
    return sympy.Symbol(name, integer=True, positive=True)


def as_dim(value: object) -> Dim:
    """Convert an int, a name or a sympy expression (or a tir int expr) to a dim.

    Example:
        >>> as_dim("n") + as_dim(2)
        n + 2
    """
    if isinstance(value, bool):
        raise TypeError(f"a shape dimension must be an integer or a symbol, not {value!r}")
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, str):
        return sym(value)
    if isinstance(value, sympy.Expr):
        return merge_floors(value) if value.has(sympy.floor) else value
    if hasattr(value, "dtype") and hasattr(value, "span"):  # a tir PrimExpr
        from unity.relax.utils import tir_to_sympy

        return tir_to_sympy(value)
    if hasattr(value, "__index__"):  # numpy integers
        return sympy.Integer(int(value))  # type: ignore[arg-type]  # has __index__
    raise TypeError(f"a shape dimension must be an int, a str or a sympy expr, not {value!r}")


def merge_floors(expr: Dim) -> Dim:
    """Nested floor divisions as one: ``floor((floor(x / a) + r) / b)`` is
    ``floor((x + a*r) / (a*b))`` for integers `x`, `r` and positive `a`, `b`, so the sizes
    of two strided convs in a row and of one conv with both strides compare equal.

    Example:
        >>> merge_floors(sympy.floor(sympy.floor(sym("n") / 5) / 2))
        floor(n/10)
    """

    floors = expr.atoms(sympy.floor)
    if not any(f.args[0].has(sympy.floor) for f in floors):
        return expr  # nothing nested: most dims with a floor (one strided conv)
    return _merge_nested_floors(expr)


@functools.lru_cache(maxsize=4096)
def _merge_nested_floors(expr: Dim) -> Dim:
    def merge(outer: sympy.Expr) -> sympy.Expr:
        num, den = sympy.fraction(sympy.together(outer.args[0]))
        num = sympy.expand(num)
        inner = [t for t in sympy.Add.make_args(num) if isinstance(t, sympy.floor)]
        if not (den.is_Integer and den > 0) or len(inner) != 1:
            return outer
        rest = num - inner[0]
        x, a = sympy.fraction(sympy.together(inner[0].args[0]))
        if not (a.is_Integer and a > 0 and x.is_integer and rest.is_integer):
            return outer
        return sympy.floor(sympy.expand(x + a * rest) / (a * den))

    return expr.replace(lambda e: isinstance(e, sympy.floor), merge)


@functools.lru_cache(maxsize=16384)
def simplify_dim(dim: Dim) -> Dim:
    """``sympy.simplify(dim)``, remembered (sympy exprs are immutable and hashable): shape
    inference simplifies the same sizes each time a pass rebuilds a function.

    Example:
        >>> simplify_dim(sympy.floor((sym("n") + 1) / 1) - 1)
        n
    """
    return sympy.simplify(dim)


def as_shape(values: Iterable[object]) -> tuple[Dim, ...]:
    """Convert each dim with `as_dim`.

    Example:
        >>> as_shape((1, "n"))
        (1, n)
    """
    return tuple(as_dim(v) for v in values)


def prove_equal(a: DimLike, b: DimLike) -> bool:
    """True when sympy proves `a == b` for every value of the symbols.

    Example:
        >>> prove_equal("n", sympy.Integer(2) * sym("n") - sym("n"))
        True
    """
    return _dims_equal(as_dim(a), as_dim(b))


@functools.lru_cache(maxsize=16384)
def _dims_equal(a: Dim, b: Dim) -> bool:
    """`prove_equal` over dims, remembered: shape inference asks the same questions again
    each time a pass rebuilds a function, and sympy's `simplify` takes milliseconds."""
    diff = sympy.expand(a - b)
    if diff == 0:
        return True
    if diff.is_number or not diff.has(*_NON_POLYNOMIAL):
        return False  # expanded polynomials are canonical: a nonzero one is not zero
    if sympy.expand(_whole_steps_out(a) - _whole_steps_out(b)) == 0:
        return True
    return simplify_dim(diff) == 0 or _equal_as_sizes(a, b)


def _whole_steps_out(dim: Dim) -> Dim:
    """`dim` with the whole part of each floor's or ceiling's constant term moved out:
    ``floor(n/20 - 3/2) + 1`` and ``floor(n/20 - 1/2)`` (a pooled length, and the same
    length computed another way) both become ``floor(n/20 + 1/2) - 1``."""

    def moved(e: sympy.Expr) -> sympy.Expr:
        arg = e.args[0]
        const = arg.as_coeff_Add()[0]
        whole = sympy.floor(const)
        if whole == 0 or not const.is_Rational:
            return e
        return type(e)(arg - whole) + whole

    return dim.replace(lambda e: isinstance(e, sympy.floor | sympy.ceiling), moved)


def _equal_as_sizes(a: Dim, b: Dim) -> bool:
    """Dims are sizes, never negative: a size `L` (``floor((n - 10) / 5) + 1``) equals
    ``max(L, 0)``, what slicing ``[0:-1]`` off ``L + 1`` leaves, though sympy cannot prove
    ``L >= 0`` for every `n`."""
    for size, other in ((a, b), (b, a)):
        if size.is_Atom or not other.has(size):
            continue
        t = sympy.Dummy("size", integer=True, nonnegative=True)
        if simplify_dim(other.xreplace({size: t}) - t) == 0:
            return True
    return False


_NON_POLYNOMIAL = (sympy.floor, sympy.ceiling, sympy.Mod, sympy.Min, sympy.Max)


def prove_not_equal(a: DimLike, b: DimLike) -> bool:
    """True when `a` and `b` provably differ (constants, or a nonzero constant difference).

    Example:
        >>> prove_not_equal("n", sym("n") + 1), prove_not_equal("n", 4)
        (True, False)
    """
    diff = sympy.expand(as_dim(a) - as_dim(b))
    return bool(diff.is_number and diff != 0)


def shapes_equal(a: tuple[Dim, ...] | None, b: tuple[Dim, ...] | None) -> bool:
    """True when both shapes are known, of equal rank and provably equal dim by dim.

    Example:
        >>> shapes_equal(as_shape(("n", 4)), as_shape(("n", 4)))
        True
    """
    if a is None or b is None or len(a) != len(b):
        return False
    return all(prove_equal(x, y) for x, y in zip(a, b, strict=True))


def format_shape(shape: tuple[Dim, ...] | None) -> str:
    """Render a shape as script: ``(n, 4)``.

    Example:
        >>> format_shape(as_shape(("n", 4)))
        '(n, 4)'
    """
    if shape is None:
        return "None"
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


@node
class StructInfo(Node):
    """Base of struct info nodes.

    Example:
        >>> isinstance(TensorStructInfo((2, "n"), "float32"), StructInfo)
        True
    """


@node
class ObjectStructInfo(StructInfo):
    """Any value; nothing known statically.

    Example:
        >>> isinstance(ObjectStructInfo(), StructInfo)
        True
    """


@node
class PrimStructInfo(StructInfo):
    """A scalar of `dtype`, with its value when known (a sympy expression).

    Example:
        >>> PrimStructInfo("int64", sym("n")).value
        n
    """

    dtype: str
    value: Dim | None = None


@node
class ShapeStructInfo(StructInfo):
    """A shape value: its dims when known, else its rank (`ndim=-1`: unknown).

    Example:
        >>> ShapeStructInfo((2, "n")).ndim
        2
    """

    values: tuple[Dim, ...] | None = None
    ndim: int = -1

    def __post_init__(self) -> None:
        if self.values is not None:
            values = as_shape(self.values)
            object.__setattr__(self, "values", values)
            _check_ndim(self.ndim, len(values), "ShapeStructInfo")
            object.__setattr__(self, "ndim", len(values))


@node
class TensorStructInfo(StructInfo):
    """A tensor: its shape (None: unknown), dtype (`"void"`: unknown) and rank (-1: unknown).

    Example:
        >>> TensorStructInfo(("n", 4), "float32").shape[1]
        4
        >>> TensorStructInfo(None, "float32", ndim=3).ndim
        3
    """

    shape: tuple[Dim, ...] | None = None
    dtype: str = UNKNOWN_DTYPE
    ndim: int = -1

    def __post_init__(self) -> None:
        if self.shape is not None:
            shape = as_shape(self.shape)
            object.__setattr__(self, "shape", shape)
            _check_ndim(self.ndim, len(shape), "TensorStructInfo")
            object.__setattr__(self, "ndim", len(shape))
            negative = [d for d in shape if d.is_number and d < 0]
            if negative:
                raise ValueError(f"TensorStructInfo: shape {shape} has a negative dim")
        dt.check(self.dtype)

    @property
    def is_static(self) -> bool:
        """True when every dim is a constant."""
        return self.shape is not None and all(d.is_number for d in self.shape)


@node
class TupleStructInfo(StructInfo):
    """A tuple whose fields have the given struct infos.

    Example:
        >>> len(TupleStructInfo((ObjectStructInfo(), ObjectStructInfo())).fields)
        2
    """

    fields: tuple[StructInfo, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))


@node
class FuncStructInfo(StructInfo):
    """A function taking `params` (None: unknown) and returning `ret`.

    Example:
        >>> FuncStructInfo((), ObjectStructInfo()).purity
        True
    """

    params: tuple[StructInfo, ...] | None
    ret: StructInfo
    purity: bool = field(default=True)


def _check_ndim(ndim: int, length: int, what: str) -> None:
    if ndim not in (-1, length):
        raise ValueError(f"{what}: ndim={ndim} disagrees with a shape of {length} dims")
