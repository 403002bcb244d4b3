"""The read regions of a block: which part of each buffer its body loads.

Each buffer's region is the per-dimension hull of the indices it is loaded at: one index
gives a point `[e, e + 1)`; indices that differ by integer constants (`h - 1`, `h`,
`h + 1`) give `[h - 1, h + 2)`; anything else widens to the whole dimension.

Example:
    >>> from unity import tir
    >>> A = tir.decl_buffer((16,), "float32", "A")
    >>> i = tir.Var("i")
    >>> (region,) = access_regions([A[i - 1] + A[i + 1]])
    >>> region.region[0].extent.value
    3
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence

from unity.ir.node import STRUCTURAL, Node
from unity.ir.op import Op
from unity.tir.buffer import Buffer, BufferRegion
from unity.tir.expr import Add, BufferLoad, IntImm, PrimExpr, Range, Sub, Var, const
from unity.tir.functor import post_order_visit


def access_regions(exprs: Sequence[PrimExpr]) -> tuple[BufferRegion, ...]:
    """The region of every buffer loaded in `exprs`, in first-load order.

    Example:
        >>> from unity import tir
        >>> B = tir.decl_buffer((4, 4), "float32", "B")
        >>> j = tir.Var("j")
        >>> access_regions([B[j, 0]])[0].region[1].min.value
        0
    """
    loads: dict[int, tuple[Buffer, list[tuple[PrimExpr, ...]]]] = {}

    def visit(node: Node) -> None:
        if isinstance(node, BufferLoad):
            loads.setdefault(id(node.buffer), (node.buffer, []))[1].append(node.indices)

    for expr in exprs:
        post_order_visit(expr, visit)
    return tuple(_region(buf, points) for buf, points in loads.values())


def _region(buffer: Buffer, points: list[tuple[PrimExpr, ...]]) -> BufferRegion:
    ranges = []
    for dim, extent in enumerate(buffer.shape):
        ranges.append(_hull([p[dim] for p in points], extent))
    return BufferRegion(buffer, tuple(ranges))


def _hull(indices: list[PrimExpr], extent: PrimExpr) -> Range:
    first = indices[0]
    if all(_key(i) == _key(first) for i in indices[1:]):
        return Range(first, const(1, first.dtype))
    split = [_base_offset(i) for i in indices]
    base_key = _key(split[0][0]) if split[0][0] is not None else None
    if all((_key(b) if b is not None else None) == base_key for b, _ in split):
        lo = min(off for _, off in split)
        hi = max(off for _, off in split)
        base = split[0][0]
        start = _shift(base, lo, first.dtype)
        return Range(start, const(hi - lo + 1, first.dtype))
    return Range(const(0, extent.dtype), extent)


def _base_offset(expr: PrimExpr) -> tuple[PrimExpr | None, int]:
    """Split `expr` into `base + offset` with an integer `offset` (`base` None: a constant)."""
    if isinstance(expr, IntImm):
        return None, expr.value
    if isinstance(expr, Add) and isinstance(expr.b, IntImm):
        return expr.a, expr.b.value
    if isinstance(expr, Sub) and isinstance(expr.b, IntImm):
        return expr.a, -expr.b.value
    return expr, 0


def _shift(base: PrimExpr | None, offset: int, dtype: str) -> PrimExpr:
    if base is None:
        return const(offset, dtype)
    if offset == 0:
        return base
    return Add(base, const(offset, dtype)) if offset > 0 else Sub(base, const(-offset, dtype))


def _key(value: object) -> Hashable:
    """A structural key: equal for expressions that are the same tree over the same vars."""
    if isinstance(value, (Var, Buffer, Op)):
        return ("ref", id(value))
    if isinstance(value, tuple):
        return tuple(_key(v) for v in value)  # type: ignore[union-attr]  # a tuple of children
    if isinstance(value, Node):
        fields = dataclasses.fields(value)
        kept = (f.name for f in fields if f.metadata.get(STRUCTURAL) != "ignore")
        return (type(value).__name__, *(_key(getattr(value, n)) for n in kept))
    return value if isinstance(value, Hashable) else ("ref", id(value))
