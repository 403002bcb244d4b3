"""Constant folding with the target's semantics: C/TVM integer division, dtype wrap-around.

Integers fold with Python integers and wrap to the dtype's width (`make_int`); division by
a constant zero is left for the runtime.  Floats fold in their own numpy dtype, so the
result is the one the hardware computes (float16/32/64; bfloat16 is left alone).

Example:
    >>> from unity import tir
    >>> fold(tir.FloorDiv, tir.const(-7), tir.const(2)).value, fold(tir.Div, tir.const(-7), tir.const(2)).value
    (-4, -3)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from unity.ir import dtype as dt
from unity.tir import expr as E
from unity.tir.arith.const_int_bound import dtype_range
from unity.tir.arith.linear import make_int


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


_INT_FOLD: dict[type, Callable[[int, int], int]] = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
    E.Div: _tdiv, E.Mod: lambda a, b: a - b * _tdiv(a, b), E.FloorDiv: lambda a, b: a // b,
    E.FloorMod: lambda a, b: a % b, E.Min: min, E.Max: max,
    E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b, E.LT: lambda a, b: a < b,
    E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b, E.GE: lambda a, b: a >= b,
    E.And: lambda a, b: bool(a and b), E.Or: lambda a, b: bool(a or b),
}  # fmt: skip

_FLOAT_FOLD: dict[type, Callable[[Any, Any], Any]] = {
    E.Add: np.add, E.Sub: np.subtract, E.Mul: np.multiply, E.Div: np.divide,
    E.FloorDiv: np.floor_divide, E.FloorMod: np.mod, E.Mod: np.fmod, E.Min: np.minimum,
    E.Max: np.maximum, E.EQ: np.equal, E.NE: np.not_equal, E.LT: np.less, E.LE: np.less_equal,
    E.GT: np.greater, E.GE: np.greater_equal,
}  # fmt: skip

_DIVISIONS = (E.Div, E.Mod, E.FloorDiv, E.FloorMod)


def fold(cls: type, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr | None:
    """Evaluate `cls(a, b)` on two immediates as the target would; None if not foldable.

    Example:
        >>> from unity import tir
        >>> fold(tir.Add, tir.const(2**31 - 1), tir.const(1)).value
        -2147483648
    """
    is_cmp = issubclass(cls, E.CmpOp)
    if type(a) is E.IntImm and type(b) is E.IntImm:
        if cls in _DIVISIONS and b.value == 0:
            return None  # division by zero stays for the runtime to report
        value = _INT_FOLD[cls](a.value, b.value)
        return make_int("bool" if is_cmp else a.dtype, int(value))
    if (
        type(a) is E.FloatImm
        and type(b) is E.FloatImm
        and a.dtype in ("float16", "float32", "float64")
    ):
        np_type = np.dtype(a.dtype).type
        with np.errstate(all="ignore"):
            value = _FLOAT_FOLD[cls](np_type(a.value), np_type(b.value))
        return make_int("bool", int(value)) if is_cmp else E.FloatImm(a.dtype, float(value))
    return None


def fold_cast(dtype: str, value: E.PrimExpr) -> E.PrimExpr | None:
    """Cast an immediate to `dtype` as C does (float -> int truncates); None if not foldable.

    Example:
        >>> from unity import tir
        >>> fold_cast("int32", tir.const(-3.7)).value
        -3
    """
    if type(value) not in (E.IntImm, E.FloatImm) or dt.lanes(dtype) != 1:
        return None
    v = value.value  # type: ignore[attr-defined]
    if dt.is_bool(dtype):
        return make_int(dtype, int(v != 0))
    if dt.is_integer(dtype):
        if isinstance(v, float) and not np.isfinite(v):
            return None
        lo, hi = dtype_range(dtype)
        iv = int(v)  # C casts truncate toward zero
        return make_int(dtype, iv) if isinstance(v, int) or lo <= iv <= hi else None
    if dtype in ("float16", "float32", "float64"):
        return E.FloatImm(dtype, float(np.dtype(dtype).type(v)))
    return None
