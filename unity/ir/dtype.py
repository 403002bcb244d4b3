"""Data types as strings: ``"float32"``, ``"int8"``, ``"bool"``, ``"float32x8"`` (8 lanes).

Both relax and tir spell dtypes as numpy does, plus ``"bfloat16"``, ``"handle"``
(a pointer) and a ``xN`` suffix for vectors of N lanes.

Example:
    >>> from unity.ir import dtype
    >>> dtype.lanes("float32x8"), dtype.element("float32x8"), dtype.bits("int16")
    (8, 'float32', 16)
"""

from __future__ import annotations

import re
from functools import lru_cache

SCALARS = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "handle", "void",
)  # fmt: skip
"""Every scalar dtype the IR knows."""

_VECTOR = re.compile(r"^([a-z]+[0-9]*)x([0-9]+)$")


@lru_cache(maxsize=None)
def _split(dtype: str) -> tuple[str, int]:
    match = _VECTOR.match(dtype)
    elem, lanes = (match.group(1), int(match.group(2))) if match else (dtype, 1)
    if elem not in SCALARS:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {', '.join(SCALARS)}")
    return elem, lanes


def check(dtype: str) -> str:
    """Return `dtype` if it names a known dtype, else raise ValueError.

    Example:
        >>> check("float16")
        'float16'
    """
    _split(dtype)
    return dtype


def element(dtype: str) -> str:
    """Scalar element type of a (possibly vector) dtype: `element("int32x4") == "int32"`.

    Example:
        >>> element("int32x4")
        'int32'
    """
    return _split(dtype)[0]


def lanes(dtype: str) -> int:
    """Number of vector lanes (1 for scalars): `lanes("float32x8") == 8`.

    Example:
        >>> lanes("float32x8"), lanes("float32")
        (8, 1)
    """
    return _split(dtype)[1]


def with_lanes(dtype: str, n: int) -> str:
    """The dtype with `n` lanes: `with_lanes("float32", 4) == "float32x4"`.

    Example:
        >>> with_lanes("float32", 4), with_lanes("float32x4", 1)
        ('float32x4', 'float32')
    """
    elem = element(dtype)
    return elem if n == 1 else f"{elem}x{n}"


def bits(dtype: str) -> int:
    """Bits of one element: `bits("float16") == 16`, `bits("bool") == 1`.

    Example:
        >>> bits("float16"), bits("bool"), bits("int8x4")
        (16, 1, 8)
    """
    elem = element(dtype)
    if elem == "bool":
        return 1
    if elem == "handle":
        return 64
    if elem == "void":
        return 0
    return int(re.sub(r"^[a-z]+", "", elem))


def is_float(dtype: str) -> bool:
    """True for float16/bfloat16/float32/float64 (and their vectors).

    Example:
        >>> is_float("bfloat16"), is_float("float32x4"), is_float("int32")
        (True, True, False)
    """
    return element(dtype).startswith(("float", "bfloat"))


def is_int(dtype: str) -> bool:
    """True for signed integers (not bool): `is_int("int64")`.

    Example:
        >>> is_int("int64"), is_int("uint8"), is_int("bool")
        (True, False, False)
    """
    return element(dtype).startswith("int")


def is_uint(dtype: str) -> bool:
    """True for unsigned integers: `is_uint("uint8")`.

    Example:
        >>> is_uint("uint8"), is_uint("int8")
        (True, False)
    """
    return element(dtype).startswith("uint")


def is_integer(dtype: str) -> bool:
    """True for signed or unsigned integers (not bool).

    Example:
        >>> is_integer("uint16"), is_integer("int8"), is_integer("bool")
        (True, True, False)
    """
    return is_int(dtype) or is_uint(dtype)


def is_bool(dtype: str) -> bool:
    """True for bool (and bool vectors).

    Example:
        >>> is_bool("bool"), is_bool("boolx4"), is_bool("int8")
        (True, True, False)
    """
    return element(dtype) == "bool"


def numpy_name(dtype: str) -> str:
    """The name numpy knows the scalar dtype by (bfloat16 comes from ml_dtypes).

    Example:
        >>> numpy_name("float32")
        'float32'
    """
    elem = element(dtype)
    if elem in ("handle", "void"):
        raise ValueError(f"dtype {dtype!r} has no numpy equivalent")
    return elem
