"""`bitcast`: the bits of each element read as another dtype of the same width (ONNX BitCast).

Integers and bool of one width share their bits through a plain cast (two's complement
wraps); a float and an integer of 32 or 64 bits go through `tir.reinterpret`.

Example:
    >>> from unity import te
    >>> bitcast(te.placeholder((2,), "float32", name="x"), "uint32").dtype
    'uint32'
"""

from __future__ import annotations

from unity import te, tir
from unity.ir import dtype as dt
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const

_SIGNED = {32: "int32", 64: "int64"}
"""The signed integer `tir.reinterpret` pairs with the float of each width it takes."""


def storage_bits(dtype: str) -> int:
    """Bits one element takes in memory (a bool is a byte, as in ONNX and numpy).

    Example:
        >>> storage_bits("bool"), storage_bits("float16")
        (8, 16)
    """
    return 8 if dt.is_bool(dtype) else dt.bits(dtype)


def can_bitcast(src: str, dst: str) -> str | None:
    """None when `bitcast` supports `src` -> `dst`, else why not (for error messages).

    Example:
        >>> can_bitcast("float32", "int32") is None
        True
        >>> can_bitcast("float32", "int16")
        'float32 has 32 bits but int16 has 16'
    """
    if storage_bits(src) != storage_bits(dst):
        return f"{src} has {storage_bits(src)} bits but {dst} has {storage_bits(dst)}"
    for kind in (src, dst):
        if dt.is_float(kind) and storage_bits(kind) not in _SIGNED:
            return f"{kind} is not supported (floats of 32 and 64 bits are)"
    return None


def _bits_of(v: PrimExpr, dst: str) -> PrimExpr:
    """`v` (one scalar) with its bits read as `dst`."""
    src = v.dtype
    if src == dst:
        return v
    if dt.is_bool(dst):
        return tir.ne(v, const(0, src))
    if not dt.is_float(src) and not dt.is_float(dst):
        return v.astype(dst)  # same width: an integer cast keeps the bits
    signed = _SIGNED[storage_bits(src)]
    if dt.is_float(src):
        return tir.reinterpret(v).astype(dst)  # float -> int of its width -> dst
    return tir.reinterpret(v.astype(signed))


def bitcast(x: Tensor, dtype: str) -> Tensor:
    """The bits of every element of `x` read as `dtype`, which must have the same width.

    Raises:
        ValueError: the widths differ, or a float other than float32/float64 is involved.

    Example:
        >>> from unity import te
        >>> bitcast(te.placeholder((3,), "int8", name="x"), "uint8").op.name
        'T_bitcast'
    """
    dt.check(dtype)
    why = can_bitcast(x.dtype, dtype)
    if why is not None:
        raise ValueError(f"bitcast: cannot read {x.dtype} as {dtype}: {why}")
    return te.compute(x.shape, lambda *i: _bits_of(x[i], dtype), name="T_bitcast")
