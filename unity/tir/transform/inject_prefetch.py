"""Software prefetches for the loops annotated ``software_prefetch``.

A loop annotated ``{"software_prefetch": (buffer_name, ahead)}`` prefetches, at the top
of each iteration, what its body reads of that buffer `ahead` iterations later: the
first load of the buffer in the body, with the loop variable advanced by `ahead` and the
loops inside at their first iteration, one prefetch per cache line of the row the inner
loops read contiguously.  The default matmul rule annotates its reduction loop for the
packed weights: the first row tile of each panel streams them from L3, and the hardware
prefetchers, which stop at 4 KiB boundaries, leave it waiting.

Before (a matmul's tile, `B` packed in panels of 32 columns)::

    for k in T.serial(384, annotations={"software_prefetch": ("B_packed", 16)}):
        for i1 in T.unroll(8):
            for j1 in T.vectorized(32):
                C_local[i1, j1] = C_local[i1, j1] + A[i0 * 8 + i1, k] * B_packed[j0, k, j1]

After ``InjectPrefetch()``::

    for k in T.serial(384):
        T.evaluate(T.call_intrin("int32", "tir.prefetch", B_packed[j0, k + 16, 0]))
        T.evaluate(T.call_intrin("int32", "tir.prefetch", B_packed[j0, k + 16, 16]))
        for i1 in T.unroll(8):
            for j1 in T.vectorized(32):
                C_local[i1, j1] = C_local[i1, j1] + A[i0 * 8 + i1, k] * B_packed[j0, k, j1]

The addresses may lie past the buffer (the last iterations of the last panel): a
prefetch does not fault.  A loop whose body does not load the named buffer loses the
annotation and gains nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir import dtype as dt
from unity.tir.arith import Analyzer
from unity.tir.expr import BufferLoad, Call, IntImm, PrimExpr, Var
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, post_order_nodes, substitute, uses_var
from unity.tir.op import prefetch_op
from unity.tir.stmt import Evaluate, For, SeqStmt, Stmt
from unity.tir.transform._base import PrimFuncPass, fold_add, with_body

PREFETCH = "software_prefetch"
"""The loop annotation: ``(buffer name, iterations ahead)``."""

LINE_BYTES = 64
"""Bytes of a cache line."""


@dataclass(frozen=True)
class InjectPrefetch(PrimFuncPass):
    """Turn ``software_prefetch`` loop annotations into `tir.prefetch` calls.

    Example:
        >>> from unity import tir
        >>> B = tir.decl_buffer((64, 32), "float32", "B")
        >>> C = tir.decl_buffer((32,), "float32", "C")
        >>> k, j = tir.Var("k", "int64"), tir.Var("j", "int64")
        >>> zero, n = tir.const(0, "int64"), tir.const(32, "int64")
        >>> store = tir.BufferStore(C, C[j] + B[k, j], (j,))
        >>> inner = tir.For(j, zero, n, tir.ForKind.VECTORIZED, store)
        >>> loop = tir.For(k, zero, n * 2, tir.ForKind.SERIAL, inner,
        ...                annotations={PREFETCH: ("B", 8)})
        >>> out = InjectPrefetch().transform_function(tir.PrimFunc((B, C), loop))
        >>> out.body.body.seq[0].value.args[0].indices[0].script()
        'k + T.int64(8)'
        >>> len(out.body.body.seq) - 1  # 128 bytes: two lines
        2
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when no loop is annotated).

        Example:
            >>> InjectPrefetch().transform_function(func) is func  # doctest: +SKIP
            True
        """
        return with_body(func, _Injector().visit_stmt(func.body))


class _Injector(StmtExprMutator):
    def visit_for_(self, loop: For) -> Stmt:
        loop = self._mutate_fields(loop)
        spec = loop.annotations.get(PREFETCH)
        if spec is None:
            return loop
        annotations = {k: v for k, v in loop.annotations.items() if k != PREFETCH}
        name, ahead = spec
        prefetches = _prefetches(loop, str(name), int(ahead))
        body = SeqStmt((*prefetches, loop.body)) if prefetches else loop.body
        return loop.replace(body=body, annotations=annotations)


def _prefetches(loop: For, name: str, ahead: int) -> list[Stmt]:
    """Prefetches of the lines of `name` that `loop`'s body reads `ahead` iterations on."""
    nodes = post_order_nodes(loop.body)
    load = next((n for n in nodes if isinstance(n, BufferLoad) and n.buffer.name == name), None)
    if load is None:
        return []
    inner = {n.loop_var: n for n in nodes if isinstance(n, For)}
    v = loop.loop_var
    at = {v: v + IntImm(v.dtype, ahead), **{u: f.min for u, f in inner.items()}}
    first = tuple(substitute(i, at) for i in load.indices)
    elem = max(1, dt.bits(load.buffer.dtype) // 8)
    lines = -(-_row_elements(load.indices[-1], inner) * elem // LINE_BYTES)
    step = LINE_BYTES // elem
    out: list[Stmt] = []
    for n in range(max(1, lines)):
        last = fold_add(first[-1], IntImm(first[-1].dtype, n * step))
        call = Call("int32", prefetch_op, (BufferLoad(load.buffer, (*first[:-1], last)),))
        out.append(Evaluate(call))
    return out


def _row_elements(index: PrimExpr, inner: dict[Var, For]) -> int:
    """Elements between the first and the last value of the last `index` over the inner
    loops (each from its first to its last iteration), plus one; 1 when unknown."""
    analyzer = Analyzer()
    used = [u for u in inner if uses_var(index, u)]
    if any(not isinstance(inner[u].extent, IntImm) for u in used):
        return 1
    lo = substitute(index, {u: inner[u].min for u in used})
    hi = substitute(index, {u: inner[u].min + inner[u].extent - 1 for u in used})
    span = analyzer.simplify(hi - lo)
    return span.value + 1 if isinstance(span, IntImm) and span.value >= 0 else 1


__all__ = ["LINE_BYTES", "PREFETCH", "InjectPrefetch"]
