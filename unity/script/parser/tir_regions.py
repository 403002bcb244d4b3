"""Infer a block's `T.reads` / `T.writes` when the script leaves them out (as TVM does).

Each buffer accessed in the block body (and `init`) gets one region per dimension:
the point `idx` when every access agrees on it and it uses no variable bound inside
the block; `[lo, lo + extent)` for a bare inner loop variable (plus a constant);
otherwise the whole dimension.  Buffers the block allocates are left out.

Example:
    >>> from unity import tir
    >>> A = tir.decl_buffer((8,), "float32", "A")
    >>> i = tir.Var("i")
    >>> reads, writes = infer_regions(tir.BufferStore(A, A[i] + 1.0, (i,)), None, [])
    >>> reads[0].region[0].min is i, writes[0].buffer is A
    (True, True)
"""

from __future__ import annotations

from collections.abc import Sequence

from unity import tir
from unity.script.parser.tir_expr import same_expr
from unity.tir import expr as E
from unity.tir import stmt as S
from unity.tir.buffer import Buffer, BufferRegion
from unity.tir.functor import post_order_visit


def infer_regions(
    body: S.Stmt,
    init: S.Stmt | None,
    alloc: Sequence[Buffer],
    match: Sequence[S.MatchBufferRegion] = (),
) -> tuple[tuple[BufferRegion, ...], tuple[BufferRegion, ...]]:
    """The (reads, writes) of a block with `body`, `init`, buffers `alloc` and views `match`.

    An access through a matched view counts as an access to the view's source region.

    Example:
        >>> A = tir.decl_buffer((8,), "float32", "A")
        >>> B = tir.decl_buffer((8,), "float32", "B")
        >>> i = E.Var("i")
        >>> reads, writes = infer_regions(S.BufferStore(B, A[i] + A[i + 1], (i,)), None, ())
        >>> [r.buffer.name for r in reads], [r.buffer.name for r in writes]
        (['A'], ['B'])
        >>> reads[0].region[0].extent.value  # two loads of A: the region covers all of A
        8
    """
    loads: dict[Buffer, list[tuple[E.PrimExpr, ...]]] = {}
    stores: dict[Buffer, list[tuple[E.PrimExpr, ...]]] = {}
    inner: dict[E.Var, E.Range | None] = {}

    def collect(node: object) -> None:
        if isinstance(node, E.BufferLoad):
            loads.setdefault(node.buffer, []).append(node.indices)
        elif isinstance(node, S.BufferStore):
            stores.setdefault(node.buffer, []).append(node.indices)
        elif isinstance(node, S.For):
            inner[node.loop_var] = E.Range(node.min, node.extent)
        elif isinstance(node, S.LetStmt | E.Let):
            inner[node.var] = None
        elif isinstance(node, S.Block):
            inner.update({iv.var: None for iv in node.iter_vars})

    for stmt in (body, init):
        if stmt is not None:
            post_order_visit(stmt, collect)
    skip = set(alloc) | {m.buffer for m in match}
    reads = [_region(b, acc, inner) for b, acc in loads.items() if b not in skip]
    writes = [_region(b, acc, inner) for b, acc in stores.items() if b not in skip]
    reads += [m.source for m in match if m.buffer in loads]
    writes += [m.source for m in match if m.buffer in stores]
    return tuple(reads), tuple(writes)


def _region(
    buf: Buffer, accesses: list[tuple[E.PrimExpr, ...]], inner: dict[E.Var, E.Range | None]
) -> BufferRegion:
    ranges = []
    for dim, extent in enumerate(buf.shape):
        indices = [acc[dim] for acc in accesses]
        ranges.append(_dim_range(indices, extent, inner))
    return BufferRegion(buf, tuple(ranges))


def _dim_range(
    indices: list[E.PrimExpr], extent: E.PrimExpr, inner: dict[E.Var, E.Range | None]
) -> E.Range:
    first = indices[0]
    if not all(same_expr(first, i) for i in indices[1:]):
        return E.Range(tir.const(0, extent.dtype), extent)
    if not _uses_any(first, inner):
        return E.Range(first, tir.const(1, first.dtype))
    base, offset = (first.a, first.b) if isinstance(first, E.Add) else (first, None)
    dom = inner.get(base) if isinstance(base, E.Var) else None
    if dom is None or (offset is not None and not isinstance(offset, E.IntImm)):
        return E.Range(tir.const(0, extent.dtype), extent)
    lo = dom.min if offset is None else dom.min + offset
    return E.Range(lo, dom.extent)


def _uses_any(expr: E.PrimExpr, names: dict[E.Var, E.Range | None]) -> bool:
    found = []
    post_order_visit(
        expr, lambda n: found.append(n) if isinstance(n, E.Var) and n in names else None
    )
    return bool(found)
