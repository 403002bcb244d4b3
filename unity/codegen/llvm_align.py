"""Provable alignment of buffer accesses, for the `align` of LLVM loads and stores.

Buffers the generated code allocates itself (stack slots and heap blocks) start on a
64-byte boundary; a contiguous vector access `buf[Ramp(base, 1, n)]` into one of them
is aligned to `elem_bytes * m` (its largest power of two, at most 64) where `m` is a
number `base` is provably a multiple of.  Function parameters come from the caller
(numpy only promises element alignment), so their accesses keep element alignment.

Example:
    >>> from unity import tir
    >>> i = tir.Var("i")
    >>> known_multiple(i * 32 + 16)
    16
    >>> access_alignment(4, i * 32 + 16, allocated=True)
    64
"""

from __future__ import annotations

import math

from unity.ir import dtype as dt
from unity.tir import expr as E
from unity.tir.expr import PrimExpr

ALLOCATION_ALIGN = 64
"""Bytes every buffer allocated by generated code is aligned to (a cache line, a zmm)."""

_ZERO_MULTIPLE = 1 << 30
"""What `known_multiple` answers for 0 (a multiple of everything)."""


def known_multiple(expr: PrimExpr) -> int:
    """A positive integer `expr` is always a multiple of (1 when nothing is known).

    Example:
        >>> from unity import tir
        >>> j, k = tir.Var("j"), tir.Var("k")
        >>> known_multiple(j * 8 + k * 12 + 4)
        4
    """
    if isinstance(expr, E.IntImm):
        return abs(expr.value) or _ZERO_MULTIPLE
    if isinstance(expr, (E.Add, E.Sub, E.Min, E.Max)):
        return math.gcd(known_multiple(expr.a), known_multiple(expr.b))
    if isinstance(expr, E.Mul):
        return min(known_multiple(expr.a) * known_multiple(expr.b), _ZERO_MULTIPLE)
    if isinstance(expr, E.FloorMod) and isinstance(expr.b, E.IntImm) and expr.b.value > 0:
        return math.gcd(known_multiple(expr.a), expr.b.value)  # x - c * floor(x / c)
    if isinstance(expr, E.Select):
        return math.gcd(known_multiple(expr.true_value), known_multiple(expr.false_value))
    if (
        isinstance(expr, E.Cast)
        and dt.is_integer(expr.dtype)
        and dt.is_integer(expr.value.dtype)
        and dt.bits(expr.dtype) >= dt.bits(expr.value.dtype)
    ):
        return known_multiple(expr.value)  # a widening cast keeps the value
    return 1


def access_alignment(elem_bytes: int, base: PrimExpr, allocated: bool) -> int:
    """The `align` of an access starting at element `base` of a buffer.

    Args:
        elem_bytes: bytes of one element in memory.
        base: the flat index of the first element accessed.
        allocated: the buffer was allocated by the generated code (64-byte aligned).

    Example:
        >>> access_alignment(4, tir.const(3), allocated=True)  # doctest: +SKIP
        4
    """
    if not allocated:
        return elem_bytes
    offset = known_multiple(base) * elem_bytes
    return min(offset & -offset, ALLOCATION_ALIGN)
