"""Bitwise and / or / xor / not.  TIR has no bit operators yet, so integer operands are
taken apart bit by bit (`(x // 2**b) % 2` on the unsigned view) and put back together
with a sum of powers of two; bool operands use the logical operators.

Example:
    >>> from unity import te
    >>> a = te.placeholder((4,), "uint8", name="a")
    >>> bitwise_xor(a, a).dtype
    'uint8'
"""

from __future__ import annotations

from collections.abc import Callable

from unity import te, tir
from unity.ir import dtype as dt
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.broadcast import broadcast_binary
from unity.topi.elemwise import elemwise
from unity.topi.utils import broadcast_shape, broadcast_load

BitFn = Callable[[PrimExpr, PrimExpr], PrimExpr]
"""Combines two bits (int32 0/1 values) into a bool."""

_LOGICAL: dict[str, BitFn] = {
    "and": tir.logical_and,
    "or": tir.logical_or,
    "xor": tir.ne,
}


def _unsigned(dtype: str) -> str:
    return f"uint{dt.bits(dtype)}"


def _bitwise(a: Tensor, b: Tensor, kind: str) -> Tensor:
    if a.dtype != b.dtype:
        raise TypeError(f"bitwise_{kind}: operands have dtypes {a.dtype} and {b.dtype}")
    if dt.is_bool(a.dtype):
        return broadcast_binary(a, b, _LOGICAL[kind], f"T_bitwise_{kind}")
    if dt.is_float(a.dtype):
        raise TypeError(f"bitwise_{kind}: needs integer or bool operands, got {a.dtype}")
    u = _unsigned(a.dtype)
    shape = broadcast_shape([a.shape, b.shape], f"bitwise_{kind}")
    bits = te.reduce_axis((0, dt.bits(a.dtype)), name="bit")

    def body(*i: PrimExpr) -> PrimExpr:
        weight = tir.power(const(2.0, "float64"), bits.var.astype("float64")).astype(u)
        x = broadcast_load(a, i, shape).astype(u)
        y = broadcast_load(b, i, shape).astype(u)
        one = const(1, u)
        set_bit = _LOGICAL[kind](tir.eq((x // weight) % 2, one), tir.eq((y // weight) % 2, one))
        return te.sum(tir.select(set_bit, weight, const(0, u)), axis=bits)

    packed = te.compute(shape, body, name=f"T_bitwise_{kind}_bits")
    return te.compute(shape, lambda *i: packed[i].astype(a.dtype), name=f"T_bitwise_{kind}")


def bitwise_and(a: Tensor, b: Tensor) -> Tensor:
    """`a & b` with numpy broadcasting (two's complement for signed integers).

    Example:
        >>> from unity import te
        >>> bitwise_and(te.placeholder((2,), "int8", name="a"), te.placeholder((2,), "int8", name="b")).dtype
        'int8'
    """
    return _bitwise(a, b, "and")


def bitwise_or(a: Tensor, b: Tensor) -> Tensor:
    """`a | b` with numpy broadcasting.

    Example:
        >>> from unity import te
        >>> bitwise_or(te.placeholder((2,), "bool", name="a"), te.placeholder((2,), "bool", name="b")).dtype
        'bool'
    """
    return _bitwise(a, b, "or")


def bitwise_xor(a: Tensor, b: Tensor) -> Tensor:
    """`a ^ b` with numpy broadcasting.

    Example:
        >>> from unity import te
        >>> bitwise_xor(te.placeholder((2,), "uint16", name="a"), te.placeholder((1,), "uint16", name="b")).dtype
        'uint16'
    """
    return _bitwise(a, b, "xor")


def bitwise_not(a: Tensor) -> Tensor:
    """`~a`: for integers `-1 - a` (all bits flipped, two's complement), for bools `not a`.

    Example:
        >>> from unity import te
        >>> bitwise_not(te.placeholder((2,), "uint8", name="a")).dtype
        'uint8'
    """
    if dt.is_bool(a.dtype):
        return elemwise(a, tir.Not, "T_bitwise_not")
    if dt.is_float(a.dtype):
        raise TypeError(f"bitwise_not: needs integer or bool operands, got {a.dtype}")
    u = _unsigned(a.dtype)
    top = tir.max_value(u)
    return elemwise(a, lambda v: (top - v.astype(u)).astype(a.dtype), "T_bitwise_not")
