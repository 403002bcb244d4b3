"""TIR expressions: variables, immediates, arithmetic, comparisons, vectors, calls, loads.

Python operators build nodes: `+ - * / // %`, unary `-`, `< <= > >=`, `& | ~` (on
bools).  `==` and `!=` stay identity (nodes are dict keys); use `tir.eq(a, b)` /
`tir.ne(a, b)`.  `//` and `%` are floor division and floor modulo, `/` is `Div`
(true division for floats, truncating division for integers, as in TVM).

Example:
    >>> from unity import tir
    >>> i = tir.Var("i", "int32")
    >>> e = (i * 32 + 5) // 32
    >>> type(e).__name__, e.dtype
    ('FloorDiv', 'int32')
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Union

from unity.ir import dtype as dt
from unity.ir.node import Node, binds, hint, node
from unity.ir.op import Op

if TYPE_CHECKING:
    from unity.tir.buffer import Buffer

ExprLike = Union["PrimExpr", int, float, bool]
"""Anything `const` can turn into a `PrimExpr`."""


@node
class PrimExpr(Node):
    """Base of all TIR expressions; every expression has a `dtype` string.

    Example:
        >>> isinstance(Var("i") + 1, PrimExpr), (Var("i") + 1).dtype
        (True, 'int32')
    """

    if TYPE_CHECKING:  # a field or a property in each subclass (not a dataclass field here)

        @property
        def dtype(self) -> str: ...

    # -- arithmetic -----------------------------------------------------------------------
    def __add__(self, other: ExprLike) -> PrimExpr:
        return _binary(Add, self, other)

    def __radd__(self, other: ExprLike) -> PrimExpr:
        return _binary(Add, other, self)

    def __sub__(self, other: ExprLike) -> PrimExpr:
        return _binary(Sub, self, other)

    def __rsub__(self, other: ExprLike) -> PrimExpr:
        return _binary(Sub, other, self)

    def __mul__(self, other: ExprLike) -> PrimExpr:
        return _binary(Mul, self, other)

    def __rmul__(self, other: ExprLike) -> PrimExpr:
        return _binary(Mul, other, self)

    def __truediv__(self, other: ExprLike) -> PrimExpr:
        return _binary(Div, self, other)

    def __rtruediv__(self, other: ExprLike) -> PrimExpr:
        return _binary(Div, other, self)

    def __floordiv__(self, other: ExprLike) -> PrimExpr:
        return _binary(FloorDiv, self, other)

    def __rfloordiv__(self, other: ExprLike) -> PrimExpr:
        return _binary(FloorDiv, other, self)

    def __mod__(self, other: ExprLike) -> PrimExpr:
        return _binary(FloorMod, self, other)

    def __rmod__(self, other: ExprLike) -> PrimExpr:
        return _binary(FloorMod, other, self)

    def __neg__(self) -> PrimExpr:
        return _binary(Sub, const(0, self.dtype), self)

    # -- comparisons and logic ------------------------------------------------------------
    def __lt__(self, other: ExprLike) -> PrimExpr:
        return _binary(LT, self, other)

    def __le__(self, other: ExprLike) -> PrimExpr:
        return _binary(LE, self, other)

    def __gt__(self, other: ExprLike) -> PrimExpr:
        return _binary(GT, self, other)

    def __ge__(self, other: ExprLike) -> PrimExpr:
        return _binary(GE, self, other)

    def __and__(self, other: ExprLike) -> PrimExpr:
        return _binary(And, self, other)

    def __rand__(self, other: ExprLike) -> PrimExpr:
        return _binary(And, other, self)

    def __or__(self, other: ExprLike) -> PrimExpr:
        return _binary(Or, self, other)

    def __ror__(self, other: ExprLike) -> PrimExpr:
        return _binary(Or, other, self)

    def __invert__(self) -> PrimExpr:
        return Not(self)

    def __eq__(self, other: object) -> Any:  # type: ignore[override]
        """``a == b`` is the `EQ` node (as in TVM), whose truth value is identity: `i == 0`
        in a compute builds the comparison, while dict and list lookups stay by identity."""
        return _comparison(EQ, self, other)

    def __ne__(self, other: object) -> Any:  # type: ignore[override]
        return _comparison(NE, self, other)

    __hash__ = Node.__hash__

    def __bool__(self) -> bool:
        raise TypeError(
            "a TIR expression has no Python truth value; use tir.Select / T.if_then_else "
            "for a condition"
        )

    def astype(self, dtype: str) -> PrimExpr:
        """Cast to `dtype` (returns self when it already has it).

        Example:
            >>> Var("i", "int32").astype("float32").dtype
            'float32'
        """
        return self if dtype == self.dtype else Cast(dt.check(dtype), self)


# -- leaves -------------------------------------------------------------------------------
@node
class Var(PrimExpr):
    """A variable; identity matters, the name is a hint.  `dtype="handle"` for pointers.

    Example:
        >>> Var("n", "int64").dtype
        'int64'
    """

    name: str = hint()
    dtype: str = "int32"

    structural_kind: ClassVar[str] = "var"
    """Structural equality matches variables by definition (alpha-equivalence)."""

    def __post_init__(self) -> None:
        dt.check(self.dtype)


@node
class SizeVar(Var):
    """A variable known to be non-negative (a shape dimension).

    Example:
        >>> n = SizeVar("n", "int64")
        >>> isinstance(n, Var), n.dtype
        (True, 'int64')
    """


@node
class IntImm(PrimExpr):
    """An integer (or bool) constant of a given dtype.

    Example:
        >>> IntImm("int64", 3).value
        3
    """

    dtype: str
    value: int


@node
class FloatImm(PrimExpr):
    """A floating-point constant of a given dtype.

    Example:
        >>> FloatImm("float32", 0.5).value
        0.5
    """

    dtype: str
    value: float


@node
class StringImm(PrimExpr):
    """A string constant (arguments of asserts and extern calls).

    Example:
        >>> StringImm("out of bounds").dtype
        'handle'
    """

    value: str

    @property
    def dtype(self) -> str:
        return "handle"


@node
class Cast(PrimExpr):
    """Convert `value` to `dtype` (C semantics: float -> int truncates).

    Example:
        >>> Cast("float32", Var("i")).dtype
        'float32'
    """

    dtype: str
    value: PrimExpr


# -- binary operators ---------------------------------------------------------------------
@node
class BinaryOp(PrimExpr):
    """Base of two-operand nodes; the dtype is the operands' (they agree).

    Example:
        >>> e = Var("i") * 4
        >>> isinstance(e, BinaryOp), e.b.value
        (True, 4)
    """

    a: PrimExpr
    b: PrimExpr

    @property
    def dtype(self) -> str:
        return self.a.dtype


@node
class Add(BinaryOp):
    """`a + b`.

    Example:
        >>> type(Var("i") + 1).__name__
        'Add'
    """


@node
class Sub(BinaryOp):
    """`a - b`.

    Example:
        >>> type(Var("i") - 1).__name__
        'Sub'
    """


@node
class Mul(BinaryOp):
    """`a * b`.

    Example:
        >>> type(Var("i") * 2).__name__
        'Mul'
    """


@node
class Div(BinaryOp):
    """`a / b`: true division for floats, truncating division for integers.

    Example:
        >>> type(Var("x", "float32") / 2.0).__name__
        'Div'
    """


@node
class Mod(BinaryOp):
    """Truncating modulo (C's `%`): the sign follows `a`.

    Example:
        >>> Mod(Var("i"), IntImm("int32", 3)).dtype
        'int32'
    """


@node
class FloorDiv(BinaryOp):
    """`a // b`: floor division.

    Example:
        >>> type(Var("i") // 4).__name__
        'FloorDiv'
    """


@node
class FloorMod(BinaryOp):
    """`a % b`: floor modulo (the sign follows `b`).

    Example:
        >>> type(Var("i") % 4).__name__
        'FloorMod'
    """


@node
class Min(BinaryOp):
    """`min(a, b)`.

    Example:
        >>> type(min_value_of(Var("i"), 8)).__name__
        'Min'
    """


@node
class Max(BinaryOp):
    """`max(a, b)`.

    Example:
        >>> type(max_value_of(Var("i"), 0)).__name__
        'Max'
    """


@node
class CmpOp(BinaryOp):
    """Base of comparisons: the dtype is bool with the operands' lanes.

    Example:
        >>> (Var("i") < 4).dtype
        'bool'
    """

    @property
    def dtype(self) -> str:
        return dt.with_lanes("bool", dt.lanes(self.a.dtype))


@node
class EQ(CmpOp):
    """`a == b` (``tir.eq(a, b)`` or ``a == b``).

    Example:
        >>> i = Var("i")
        >>> type(i == 0).__name__, (i == 0).dtype, bool(i == i), i in {i: 1}
        ('EQ', 'bool', True, True)
    """

    def __bool__(self) -> bool:
        return self.a is self.b  # `x == y` in a Python condition: the same node


@node
class NE(CmpOp):
    """`a != b` (build with `tir.ne`).

    Example:
        >>> NE(Var("i"), IntImm("int32", 0)).dtype
        'bool'
    """

    def __bool__(self) -> bool:
        return self.a is not self.b


@node
class LT(CmpOp):
    """`a < b`.

    Example:
        >>> type(Var("i") < 4).__name__
        'LT'
    """


@node
class LE(CmpOp):
    """`a <= b`.

    Example:
        >>> type(Var("i") <= 4).__name__
        'LE'
    """


@node
class GT(CmpOp):
    """`a > b`.

    Example:
        >>> type(Var("i") > 4).__name__
        'GT'
    """


@node
class GE(CmpOp):
    """`a >= b`.

    Example:
        >>> type(Var("i") >= 4).__name__
        'GE'
    """


@node
class And(BinaryOp):
    """Logical and of two bools.

    Example:
        >>> i = Var("i")
        >>> type((i > 0) & (i < 4)).__name__
        'And'
    """


@node
class Or(BinaryOp):
    """Logical or of two bools.

    Example:
        >>> i = Var("i")
        >>> type((i < 0) | (i > 4)).__name__
        'Or'
    """


@node
class Not(PrimExpr):
    """Logical not of a bool.

    Example:
        >>> type(~(Var("i") < 4)).__name__
        'Not'
    """

    a: PrimExpr

    @property
    def dtype(self) -> str:
        return self.a.dtype


# -- other expressions --------------------------------------------------------------------
@node
class Select(PrimExpr):
    """`condition ? true_value : false_value` (both sides may be evaluated).

    Example:
        >>> i = Var("i")
        >>> Select(i < 0, IntImm("int32", 0), i).dtype
        'int32'
    """

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr

    def __post_init__(self) -> None:
        """Python numbers become immediates and the two sides get one dtype (as in
        `tir.if_then_else`): ``Select(j < 2, 3, j)`` with an int64 `j` is an int64 select."""
        t, f = self.true_value, self.false_value
        if not (isinstance(t, PrimExpr) and isinstance(f, PrimExpr) and t.dtype == f.dtype):
            t, f = _promote(t, f)
            object.__setattr__(self, "true_value", t)
            object.__setattr__(self, "false_value", f)
        if not isinstance(self.condition, PrimExpr):
            object.__setattr__(self, "condition", const(self.condition))

    @property
    def dtype(self) -> str:
        return self.true_value.dtype


@node
class Ramp(PrimExpr):
    """The vector `[base, base + stride, ..., base + (lanes - 1) * stride]`.

    Example:
        >>> Ramp(Var("i"), IntImm("int32", 1), 8).dtype
        'int32x8'
    """

    base: PrimExpr
    stride: PrimExpr
    lanes: int

    @property
    def dtype(self) -> str:
        return dt.with_lanes(self.base.dtype, self.lanes)


@node
class Broadcast(PrimExpr):
    """The vector of `lanes` copies of the scalar `value`.

    Example:
        >>> Broadcast(FloatImm("float32", 0.0), 4).dtype
        'float32x4'
    """

    value: PrimExpr
    lanes: int

    @property
    def dtype(self) -> str:
        return dt.with_lanes(self.value.dtype, self.lanes)


@node
class Let(PrimExpr):
    """`let var = value in body`.

    Example:
        >>> x = Var("x")
        >>> Let(x, IntImm("int32", 2), x * x).dtype
        'int32'
    """

    var: Var = binds()
    value: PrimExpr
    body: PrimExpr

    @property
    def dtype(self) -> str:
        return self.body.dtype


@node
class Call(PrimExpr):
    """A call of an intrinsic `Op` (e.g. `tir.exp`) returning `dtype`.

    Example:
        >>> from unity.tir import op
        >>> Call("float32", op.exp_op, (FloatImm("float32", 1.0),)).op.name
        'tir.exp'
    """

    dtype: str
    op: Op
    args: tuple[PrimExpr, ...]


@node
class BufferLoad(PrimExpr):
    """`buffer[indices]`; a `Ramp` index loads a vector.

    Example:
        >>> from unity.tir.buffer import decl_buffer
        >>> A = decl_buffer((16,), "float32", "A")
        >>> lanes4 = Ramp(IntImm("int32", 0), IntImm("int32", 1), 4)
        >>> A[Var("i")].dtype, BufferLoad(A, (lanes4,)).dtype
        ('float32', 'float32x4')
    """

    buffer: Buffer
    indices: tuple[PrimExpr, ...]

    @property
    def dtype(self) -> str:
        lanes = 1
        for index in self.indices:
            lanes *= dt.lanes(index.dtype)
        return dt.with_lanes(self.buffer.dtype, lanes)


# -- ranges and iteration variables -------------------------------------------------------
@node
class Range(Node):
    """The half-open interval `[min, min + extent)`.

    Example:
        >>> Range.from_min_extent(0, 8).extent.value
        8
    """

    min: PrimExpr
    extent: PrimExpr

    @staticmethod
    def from_min_extent(min_value: ExprLike, extent: ExprLike) -> Range:
        """Build from Python ints or expressions (ints become int32, or the other's dtype).

        Example:
            >>> r = Range.from_min_extent(Var("n", "int64"), 4)
            >>> r.min.dtype, r.extent.dtype
            ('int64', 'int64')
        """
        lo, ext = _promote(min_value, extent)
        return Range(lo, ext)


class IterType(Enum):
    """Role of a block iteration variable.

    Example:
        >>> IterType.REDUCE.value
        'reduce'
    """

    SPATIAL = "spatial"
    REDUCE = "reduce"
    OPAQUE = "opaque"


@node
class IterVar(Node):
    """A block iteration variable: its `var`, domain `dom`, and `iter_type`.

    Example:
        >>> iv = IterVar(Var("k"), Range.from_min_extent(0, 16), IterType.REDUCE)
        >>> iv.iter_type is IterType.REDUCE, iv.dom.extent.value
        (True, 16)
    """

    var: Var = binds()
    dom: Range
    iter_type: IterType = IterType.SPATIAL


# -- construction helpers -----------------------------------------------------------------
def const(value: ExprLike, dtype: str | None = None) -> PrimExpr:
    """Turn a Python number into an immediate (int -> int32, float -> float32, bool -> bool).

    Example:
        >>> const(3).dtype, const(1.5).dtype, const(2, "int64").dtype
        ('int32', 'float32', 'int64')
    """
    if isinstance(value, IterVar):  # as in TVM, an IterVar stands for its variable
        value = value.var
    if isinstance(value, PrimExpr):
        return value if dtype is None else value.astype(dtype)
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, int):
            dtype = "int32" if -(2**31) <= value < 2**31 else "int64"
        elif isinstance(value, float):
            dtype = "float32"
        else:
            raise TypeError(f"cannot make a TIR constant from a {type(value).__name__}")
    dt.check(dtype)
    if dt.lanes(dtype) > 1:
        return Broadcast(const(value, dt.element(dtype)), dt.lanes(dtype))
    if dt.is_float(dtype):
        return FloatImm(dtype, float(value))
    if isinstance(value, float) and not value.is_integer():
        raise TypeError(f"cannot make a {dtype} constant from {value}")
    return IntImm(dtype, int(value))


def _promote(a: ExprLike, b: ExprLike) -> tuple[PrimExpr, PrimExpr]:
    """Give two operands one dtype: Python numbers take the other side's dtype,
    integers widen, and an integer meeting a float becomes that float."""
    if not isinstance(a, PrimExpr):
        a = const(a) if not isinstance(b, PrimExpr) else _const_like(a, b)
    if not isinstance(b, PrimExpr):
        b = _const_like(b, a)
    if a.dtype == b.dtype:
        return a, b
    return _unify(a, b)


def _const_like(value: int | float | bool, other: PrimExpr) -> PrimExpr:
    if isinstance(value, float) and not dt.is_float(other.dtype):
        return const(value)
    return const(value, dt.element(other.dtype))


def _unify(a: PrimExpr, b: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
    ta, tb = a.dtype, b.dtype
    if dt.lanes(ta) != dt.lanes(tb):
        raise TypeError(f"operands have different lane counts: {ta} vs {tb}")
    if dt.is_float(ta) != dt.is_float(tb):
        return (a, b.astype(ta)) if dt.is_float(ta) else (a.astype(tb), b)
    if dt.is_bool(ta) != dt.is_bool(tb):
        return (a.astype(tb), b) if dt.is_bool(ta) else (a, b.astype(ta))
    if dt.bits(ta) >= dt.bits(tb):
        return a, b.astype(ta)
    return a.astype(tb), b


def _binary(cls: type[BinaryOp], a: ExprLike, b: ExprLike) -> PrimExpr:
    x, y = _promote(a, b)
    if cls in (And, Or):
        x, y = x.astype(dt.with_lanes("bool", dt.lanes(x.dtype))), y.astype(
            dt.with_lanes("bool", dt.lanes(y.dtype))
        )
    return cls(x, y)


def _comparison(cls: type[BinaryOp], a: PrimExpr, b: object) -> Any:
    """``a == b`` / ``a != b`` of an expression and an expression or a number, else
    NotImplemented (Python then compares by identity)."""
    if not isinstance(b, PrimExpr | int | float) or "handle" in (a.dtype, getattr(b, "dtype", None)):
        return NotImplemented  # a handle (a buffer's data) compares by identity only
    try:
        return _binary(cls, a, b)
    except (TypeError, ValueError):  # dtypes that do not compare (a vector with another width)
        return NotImplemented


def _binary_fn(cls: type[BinaryOp]):  # noqa: ANN202 - returns a typed builder
    def build(a: ExprLike, b: ExprLike) -> PrimExpr:
        return _binary(cls, a, b)

    build.__name__ = cls.__name__.lower()
    build.__doc__ = f"Build `{cls.__name__}(a, b)`, promoting dtypes.\n\nExample:\n    >>> type(_binary({cls.__name__}, Var('i'), 3)).__name__\n    '{cls.__name__}'\n"
    return build


add, sub, mul, div, truncmod = (_binary_fn(c) for c in (Add, Sub, Mul, Div, Mod))
floordiv, floormod = _binary_fn(FloorDiv), _binary_fn(FloorMod)
eq, ne, lt, le, gt, ge = (_binary_fn(c) for c in (EQ, NE, LT, LE, GT, GE))
logical_and, logical_or = _binary_fn(And), _binary_fn(Or)


def conjuncts(pred: PrimExpr) -> list[PrimExpr]:
    """Split `a && b && ...` into its parts (dropping a literal true).

    Example:
        >>> i = Var("i")
        >>> len(conjuncts(logical_and(i < 4, logical_and(i > 0, const(True)))))
        2
    """
    if isinstance(pred, And):
        return conjuncts(pred.a) + conjuncts(pred.b)
    if isinstance(pred, IntImm) and pred.value == 1:
        return []
    return [pred]


def conjoin(parts: Sequence[PrimExpr]) -> PrimExpr:
    """`parts[0] && parts[1] && ...` (true when empty).

    Example:
        >>> i = Var("i")
        >>> conjoin([]).value, type(conjoin([i < 4, i > 0])).__name__
        (1, 'And')
    """
    if not parts:
        return const(True)
    out = parts[0]
    for p in parts[1:]:
        out = logical_and(out, p)
    return out


def min_value_of(a: ExprLike, b: ExprLike) -> PrimExpr:
    """`Min(a, b)` with dtype promotion (exported as `tir.min`).

    Example:
        >>> min_value_of(Var("i"), 4).dtype
        'int32'
    """
    return _binary(Min, a, b)


def max_value_of(a: ExprLike, b: ExprLike) -> PrimExpr:
    """`Max(a, b)` with dtype promotion (exported as `tir.max`).

    Example:
        >>> max_value_of(Var("i", "int64"), 0).dtype
        'int64'
    """
    return _binary(Max, a, b)


def truncdiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Integer division rounding toward zero (`Div` on integers).

    Example:
        >>> type(truncdiv(Var("i"), 2)).__name__
        'Div'
    """
    return _binary(Div, a, b)


def select(condition: ExprLike, true_value: ExprLike, false_value: ExprLike) -> PrimExpr:
    """`Select(condition, t, f)` with the branches promoted to one dtype.

    Example:
        >>> i = Var("i")
        >>> select(i < 3, i, 3).dtype
        'int32'
    """
    t, f = _promote(true_value, false_value)
    return Select(const(condition), t, f)


def cast(dtype: str, value: ExprLike) -> PrimExpr:
    """Cast `value` to `dtype`.

    Example:
        >>> cast("float32", Var("i")).dtype
        'float32'
    """
    return const(value).astype(dtype)


def as_exprs(values: Sequence[ExprLike]) -> tuple[PrimExpr, ...]:
    """Turn a sequence of numbers/expressions into a tuple of expressions.

    Example:
        >>> [e.dtype for e in as_exprs([1, 2.0, Var("n", "int64")])]
        ['int32', 'float32', 'int64']
    """
    return tuple(const(v) for v in values)
