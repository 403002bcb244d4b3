"""Merge consecutive parallel loops over the same rows into one loop (softmax, norms).

The reduction and injective rules give each block of a multi-stage row operation its own
parallel loop over the rows.  When every stage touches, at row iteration `r`, only row
`r` of the buffers the stages write, the loops can run as one: a row's intermediates
stay in L1 between the stages, and the thread team wakes once.

Before (softmax over ``(b, 6, s, s)``, after the per-block rules; abridged)::

    for r in T.parallel(s * 6 * b):
        for k0, k1 in ...:  T_softmax_max_rf[row(r), k1] = max(..., x[row(r), k0 * 8 + k1])
    for r in T.parallel(s * 6 * b):
        for k in T.serial(8): T_softmax_max[row(r)] = max(..., T_softmax_max_rf[row(r), k])
    for r in T.parallel(s * 6 * b):
        for i in T.vectorized(s): T_softmax_exp[row(r), i] = exp(x[row(r), i] - ...)
    ...

After ``merge_row_loops``::

    for r in T.parallel(s * 6 * b):
        for k0, k1 in ...:  T_softmax_max_rf[row(r), k1] = ...
        for k in T.serial(8): T_softmax_max[row(r)] = ...
        for i in T.vectorized(s): T_softmax_exp[row(r), i] = ...
        ...

`row(r)` is ``(r // (s * 6), r // s % 6, r % s)``: each access of a buffer that a loop of
the run writes must index its leading dims with the same functions of `r` (after the
blocks' bindings are substituted) and its other dims without `r`.  Iterations of a legal
parallel loop write disjoint rows, so what a stage reads at row `r` was written at
iteration `r` of an earlier stage, which the merged loop runs first.
"""

from __future__ import annotations

from unity.ir.structural import structural_equal
from unity.tir.arith.analyzer import Analyzer
from unity.tir.expr import IntImm, PrimExpr, Var
from unity.tir.function import PrimFunc
from unity.tir.functor import post_order_nodes, substitute, uses_var
from unity.tir.stmt import BlockRealize, For, ForKind, SeqStmt, Stmt

__all__ = ["merge_row_loops"]


def merge_row_loops(func: PrimFunc) -> PrimFunc:
    """`func` with each run of row-local parallel loops at its top level merged (see the
    module docstring); `func` itself when nothing merges.

    Example:
        >>> merged = merge_row_loops(schedule_primfunc(softmax_func))  # doctest: +SKIP
    """
    root = func.body
    if not isinstance(root, BlockRealize) or not isinstance(root.block.body, SeqStmt):
        return func
    stmts = list(root.block.body.seq)
    out: list[Stmt] = []
    changed = False
    i = 0
    while i < len(stmts):
        run = [stmts[i]]
        while i + len(run) < len(stmts) and _same_loop(run[0], stmts[i + len(run)]):
            run.append(stmts[i + len(run)])
        merged = _merge(run) if len(run) > 1 else None
        out.append(merged if merged is not None else run[0])
        if merged is None and len(run) > 1:
            out.extend(run[1:])
        changed |= merged is not None
        i += len(run)
    if not changed:
        return func
    block = root.block.replace(body=SeqStmt(tuple(out)) if len(out) > 1 else out[0])
    return func.replace(body=root.replace(block=block))


def _same_loop(first: Stmt, other: Stmt) -> bool:
    """Both parallel loops from 0 over structurally equal extents."""
    return (
        _parallel(first) and _parallel(other)
        and structural_equal(first.extent, other.extent, map_free_vars=False)  # type: ignore[attr-defined]
    )  # fmt: skip


def _parallel(stmt: Stmt) -> bool:
    return (
        isinstance(stmt, For) and stmt.kind is ForKind.PARALLEL
        and isinstance(stmt.min, IntImm) and stmt.min.value == 0
    )  # fmt: skip


def _merge(run: list[Stmt]) -> For | None:
    """One loop running the bodies of `run` in order, or None when a body is not
    row-local."""
    loops: list[For] = run  # type: ignore[assignment]  # `_same_loop` checked each
    r = Var("r", loops[0].loop_var.dtype)
    bodies = [substitute(loop.body, {loop.loop_var: r}) for loop in loops]
    written = {rg.buffer for body in bodies for realize in _realizes(body) for rg in realize.block.writes}
    rows: list[PrimExpr] | None = None
    analyzer = Analyzer()
    for body in bodies:
        for realize in _realizes(body):
            bindings = dict(zip((iv.var for iv in realize.block.iter_vars), realize.iter_values))
            for region in (*realize.block.reads, *realize.block.writes):
                if region.buffer not in written:
                    continue
                dims = [
                    (analyzer.simplify(substitute(rg.min, bindings)), substitute(rg.extent, bindings))
                    for rg in region.region
                ]
                lead = _row_dims(dims, r)
                if lead is None:
                    return None
                if rows is None:
                    rows = lead
                elif len(lead) != len(rows) or not all(
                    structural_equal(a, b, map_free_vars=False) for a, b in zip(lead, rows)
                ):
                    return None
    if not rows:
        return None
    return For(r, loops[0].min, loops[0].extent, ForKind.PARALLEL, SeqStmt(tuple(bodies)),
               annotations=loops[0].annotations)  # fmt: skip


def _row_dims(dims: list[tuple[PrimExpr, PrimExpr]], r: Var) -> list[PrimExpr] | None:
    """The leading dims' indices that use `r` (each a single point), when no later dim
    uses it; None otherwise."""
    lead: list[PrimExpr] = []
    for start, extent in dims:
        if uses_var(start, r) or uses_var(extent, r):
            if not (isinstance(extent, IntImm) and extent.value == 1):
                return None
            lead.append(start)
        else:
            break
    rest = dims[len(lead) :]
    if any(uses_var(s, r) or uses_var(e, r) for s, e in rest):
        return None
    return lead


def _realizes(stmt: Stmt) -> list[BlockRealize]:
    return [n for n in post_order_nodes(stmt) if isinstance(n, BlockRealize)]
