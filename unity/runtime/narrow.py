"""Narrow types (ml_dtypes' float8 / float4 / 4- and 2-bit integers) and the dtype
that holds their values here.

unity computes in no type narrower than 8 bits: a tensor of a narrow type is held
in a wider one that represents each of its values exactly (float8 and float4 in
float32, int4 / int2 in int8, uint4 / uint2 in uint8).  Compiled functions take
a narrow array where they take its holding dtype (the VM widens it), and return
the holding dtype.

Example:
    >>> import ml_dtypes, numpy as np
    >>> widened(np.array([7, -8], ml_dtypes.int4)).dtype
    dtype('int8')
"""

from __future__ import annotations

import numpy as np

WIDE = {
    "int4": "int8", "int2": "int8", "uint4": "uint8", "uint2": "uint8", "float8_e4m3fn": "float32",
    "float8_e4m3fnuz": "float32", "float8_e5m2": "float32", "float8_e5m2fnuz": "float32",
    "float8_e8m0fnu": "float32", "float4_e2m1fn": "float32",
}  # fmt: skip
"""Each narrow type (by its ml_dtypes name) and the dtype holding its values exactly."""


def widened_dtype(dtype: str) -> str:
    """The dtype holding the values of `dtype`: itself, or a narrow type's (`WIDE`).

    Example:
        >>> widened_dtype("float8_e4m3fn"), widened_dtype("int4"), widened_dtype("int8")
        ('float32', 'int8', 'int8')
    """
    return WIDE.get(dtype, dtype)


def widened(array: np.ndarray) -> np.ndarray:
    """`array` in the dtype holding its narrow type's values (`WIDE`), else itself.

    Example:
        >>> import ml_dtypes
        >>> widened(np.array([1.5], ml_dtypes.float8_e4m3fn)).tolist()
        [1.5]
    """
    wide = widened_dtype(array.dtype.name)
    return array if wide == array.dtype.name else array.astype(wide)


def held_as(array: np.ndarray, dtype: str) -> np.ndarray | None:
    """`array` widened to `dtype` when its narrow type is held in `dtype` (an ml_dtypes
    int4 array given for an int8 parameter), else None.

    Example:
        >>> import ml_dtypes
        >>> held_as(np.array([1, -2], ml_dtypes.int4), "int8").dtype, held_as(np.zeros(1), "int8")
        (dtype('int8'), None)
    """
    name = array.dtype.name
    return array.astype(dtype) if name != dtype and widened_dtype(name) == dtype else None
