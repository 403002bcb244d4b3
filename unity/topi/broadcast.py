"""Binary elementwise operators with numpy broadcasting (symbolic dims allowed), and `where`.

Either operand may be a Python number (a scalar of the other operand's dtype).

Example:
    >>> from unity import te
    >>> n = te.var("n")
    >>> a = te.placeholder((n, 1), name="a")
    >>> b = te.placeholder((4,), name="b")
    >>> out = add(a, b)
    >>> out.shape[0] is n, out.shape[1].value
    (True, 4)
"""

from __future__ import annotations

from collections.abc import Callable

from unity import te, tir
from unity.ir import dtype as dt
from unity.te import Tensor
from unity.tir.expr import ExprLike, PrimExpr, const
from unity.topi.utils import broadcast_shape, scalar_or_load

Operand = Tensor | float | int | bool
"""A tensor or a Python scalar."""

BinaryFn = Callable[[PrimExpr, PrimExpr], PrimExpr]
"""The per-element function of a binary op."""


def _shape_of(x: Operand) -> tuple[ExprLike, ...]:
    return tuple(x.shape) if isinstance(x, Tensor) else ()


def _dtype_of(x: Operand) -> str | None:
    return x.dtype if isinstance(x, Tensor) else None


def _scalar(x: Operand, dtype: str | None) -> PrimExpr:
    return const(x, dtype) if dtype is not None and not isinstance(x, bool) else const(x)


def broadcast_binary(a: Operand, b: Operand, fn: BinaryFn, name: str) -> Tensor:
    """`out = fn(a, b)` elementwise over the broadcast shape of `a` and `b`.

    Raises:
        TypeError: both operands are scalars.
        ValueError: two constant dims cannot broadcast.

    Example:
        >>> from unity import te
        >>> a = te.placeholder((2, 3), name="a")
        >>> broadcast_binary(a, 1.0, lambda x, y: x + y, "T_add").shape[1].value
        3
    """
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{name}: at least one operand must be a tensor")
    out_shape = broadcast_shape([_shape_of(a), _shape_of(b)], name)

    def body(*i: PrimExpr) -> PrimExpr:
        x = scalar_or_load(a, i, out_shape) if isinstance(a, Tensor) else _scalar(a, _dtype_of(b))
        y = scalar_or_load(b, i, out_shape) if isinstance(b, Tensor) else _scalar(b, _dtype_of(a))
        return fn(x, y)

    return te.compute(out_shape, body, name=name)


def _binary(short: str, fn: BinaryFn, doc: str) -> Callable[[Operand, Operand], Tensor]:
    def op(lhs: Operand, rhs: Operand) -> Tensor:
        return broadcast_binary(lhs, rhs, fn, f"T_{short}")

    op.__name__ = short
    op.__doc__ = (
        f"Elementwise {doc}, with numpy broadcasting.\n\nExample:\n"
        f"    >>> from unity import te\n    >>> x = te.placeholder((2, 1), name='x')\n"
        f"    >>> [d.value for d in {short}(x, te.placeholder((3,), name='y')).shape]\n"
        f"    [2, 3]\n"
    )
    return op


def _divide(x: PrimExpr, y: PrimExpr) -> PrimExpr:
    return x / y  # true division for floats, truncating for integers (as TVM)


def _floor_divide(x: PrimExpr, y: PrimExpr) -> PrimExpr:
    return tir.floor(x / y) if dt.is_float(x.dtype) else x // y


def _floor_mod(x: PrimExpr, y: PrimExpr) -> PrimExpr:
    return tir.floormod(x, y)  # numpy's `mod` for floats too: the backends compute it


def _mod(x: PrimExpr, y: PrimExpr) -> PrimExpr:
    return tir.fmod(x, y) if dt.is_float(x.dtype) else tir.truncmod(x, y)


def _power(x: PrimExpr, y: PrimExpr) -> PrimExpr:
    if dt.is_float(x.dtype):
        return tir.power(x, y)
    return tir.power(x.astype("float64"), y.astype("float64")).astype(x.dtype)


def _bool(v: PrimExpr) -> PrimExpr:
    return v if dt.is_bool(v.dtype) else tir.ne(v, const(0, v.dtype))


add = _binary("add", lambda x, y: x + y, "sum `a + b`")
subtract = _binary("subtract", lambda x, y: x - y, "difference `a - b`")
multiply = _binary("multiply", lambda x, y: x * y, "product `a * b`")
divide = _binary("divide", _divide, "division (truncating for integers)")
floor_divide = _binary("floor_divide", _floor_divide, "floor division")
mod = _binary("mod", _mod, "remainder with the sign of `a` (C `fmod`)")
floor_mod = _binary("floor_mod", _floor_mod, "remainder with the sign of `b` (numpy `mod`)")
power = _binary("power", _power, "power `a ** b`")
maximum = _binary("maximum", tir.max, "maximum")
minimum = _binary("minimum", tir.min, "minimum")
equal = _binary("equal", tir.eq, "`a == b` (bool result)")
not_equal = _binary("not_equal", tir.ne, "`a != b` (bool result)")
less = _binary("less", tir.lt, "`a < b` (bool result)")
less_equal = _binary("less_equal", tir.le, "`a <= b` (bool result)")
greater = _binary("greater", tir.gt, "`a > b` (bool result)")
greater_equal = _binary("greater_equal", tir.ge, "`a >= b` (bool result)")
logical_and = _binary(
    "logical_and", lambda x, y: tir.logical_and(_bool(x), _bool(y)), "logical and"
)
logical_or = _binary("logical_or", lambda x, y: tir.logical_or(_bool(x), _bool(y)), "logical or")


def where(condition: Tensor, x: Operand, y: Operand) -> Tensor:
    """`x` where `condition` holds, else `y`; all three broadcast together.

    Example:
        >>> from unity import te
        >>> c = te.placeholder((2, 1), "bool", name="c")
        >>> [d.value for d in where(c, te.placeholder((3,), name="x"), 0.0).shape]
        [2, 3]
    """
    out_shape = broadcast_shape([_shape_of(condition), _shape_of(x), _shape_of(y)], "where")
    dtype = _dtype_of(x) or _dtype_of(y)

    def body(*i: PrimExpr) -> PrimExpr:
        cond = _bool(scalar_or_load(condition, i, out_shape))
        a = scalar_or_load(x, i, out_shape) if isinstance(x, Tensor) else _scalar(x, dtype)
        b = scalar_or_load(y, i, out_shape) if isinstance(y, Tensor) else _scalar(y, dtype)
        return tir.select(cond, a, b)

    return te.compute(out_shape, body, name="T_where")
