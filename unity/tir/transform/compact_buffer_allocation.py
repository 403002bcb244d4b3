"""Move each allocation into the loops whose iterations use disjoint parts, and shrink it.

Before::

    with T.allocate_buffer((16, 16), "float32") as A:
        for i in T.serial(4):
            for j in T.serial(4):
                A[i, j + 2] = X[i, j] * T.float32(3)
            for j in T.serial(4):
                Y[i, j] = A[i, 5 - j]

After ``CompactBufferAllocation()``::

    for i in T.serial(4):
        with T.allocate_buffer((1, 4), "float32") as A:
            for j in T.serial(4):
                A[0, j] = X[i, j] * T.float32(3)
            for j in T.serial(4):
                Y[i, j] = A[0, 3 - j]

Works on `Allocate` statements (run it after `ConvertBlocksToLoops`).  The allocation
first moves down to the deepest statement holding every access: through `SeqStmt`s
(when one item holds them all), and into serial or parallel loops whose iterations
provably touch disjoint elements (so no value flows from one iteration to the next;
inside a parallel loop this makes the buffer private to each task).  Then each
dimension shrinks to the constant upper bound of the extent the accesses cover there,
and indices shift by the (possibly symbolic) lower bound, with
`unity.tir.arith.Analyzer.int_set`.  A tile cached per `(io, jo)` iteration ends up
allocated, tile-sized, inside the `jo` loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.tir.arith import Analyzer
from unity.tir.buffer import Buffer
from unity.tir.expr import BufferLoad, IntImm, PrimExpr, Range, Var, const
from unity.tir.expr import max_value_of as tir_max
from unity.tir.expr import min_value_of as tir_min
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, StmtExprVisitor, substitute
from unity.tir.stmt import Allocate, BufferStore, For, ForKind, LetStmt, SeqStmt, Stmt
from unity.tir.transform._base import is_const_int, with_body


@dataclass(frozen=True)
class CompactBufferAllocation(ModulePass):
    """Place each `Allocate` as deep as its accesses allow and shrink it to what they touch."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return mod.map_functions(PrimFunc, self.transform_function)

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes)."""
        return with_body(func, _Compactor().visit_stmt(func.body))


_MOVABLE_INTO = (ForKind.SERIAL, ForKind.PARALLEL)
"""Loop kinds an allocation may move into (vectorized/unrolled loops must stay plain)."""


class _Compactor(StmtExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.analyzer = Analyzer()

    def visit_for_(self, loop: For) -> Stmt:
        self.analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
        return self._mutate_fields(loop)

    def visit_allocate_(self, alloc: Allocate) -> Stmt:
        body = self.visit_stmt(alloc.body)
        buffer = alloc.buffer
        if buffer.strides or not all(isinstance(d, IntImm) for d in buffer.shape):
            return alloc.replace(body=body)
        accesses = _Accesses(buffer)
        accesses.visit_stmt(body)
        if accesses.aliased:
            return alloc.replace(body=body)
        placed = _Placer(buffer, self.analyzer).place(body)
        if isinstance(placed, Allocate) and placed.buffer is buffer and placed.body is body:
            return alloc.replace(body=body)  # stays where it was, as large as it was
        return placed


class _Accesses(StmtExprVisitor):
    """Index tuples of every access to `buffer` (and whether another view aliases it)."""

    def __init__(self, buffer: Buffer) -> None:
        self.buffer = buffer
        self.indices: list[tuple[PrimExpr, ...]] = []
        self.aliased = False

    def visit_buffer_load_(self, load: BufferLoad) -> None:
        self._access(load.buffer, load.indices)
        self.visit_prim_expr_(load)

    def visit_buffer_store_(self, store: BufferStore) -> None:
        self._access(store.buffer, store.indices)
        self.visit_stmt_(store)

    def _access(self, buffer: Buffer, indices: tuple[PrimExpr, ...]) -> None:
        if buffer is self.buffer:
            self.indices.append(indices)
        elif buffer.data is self.buffer.data:
            self.aliased = True


def _inner_domains(stmt: Stmt) -> dict[Var, Range]:
    """Loop variables defined inside `stmt` with their ranges (let vars: unknown)."""
    domains: dict[Var, Range] = {}

    class _Loops(StmtExprVisitor):
        def visit_for_(self, loop: For) -> None:
            domains[loop.loop_var] = Range(loop.min, loop.extent)
            self.visit_stmt_(loop)

    _Loops().visit_stmt(stmt)
    return domains


class _Placer:
    """Rebuild a statement with `Allocate(compacted buffer)` at the deepest valid place."""

    def __init__(
        self, buffer: Buffer, analyzer: Analyzer, relaxed: dict[Var, Range] | None = None
    ) -> None:
        self.buffer = buffer
        self.analyzer = analyzer
        self.relaxed = relaxed or {}
        """Outer variables to relax as well (GPU: thread indices, for a shared buffer)."""

    def accesses(self, stmt: Stmt) -> list[tuple[PrimExpr, ...]]:
        found = _Accesses(self.buffer)
        found.visit_stmt(stmt)
        return found.indices

    def place(self, stmt: Stmt) -> Stmt:
        if isinstance(stmt, For) and stmt.kind in _MOVABLE_INTO and self._disjoint(stmt):
            return stmt.replace(body=self.place(stmt.body))
        if isinstance(stmt, SeqStmt):
            users = [k for k, item in enumerate(stmt.seq) if self.accesses(item)]
            if len(users) == 1:
                items = list(stmt.seq)
                items[users[0]] = self.place(items[users[0]])
                return SeqStmt(tuple(items), span=stmt.span)
        if isinstance(stmt, LetStmt | Allocate):
            return stmt.replace(body=self.place(stmt.body))
        return self._compact(stmt)

    def _box(self, stmt: Stmt) -> list[tuple[PrimExpr, PrimExpr] | None]:
        """Per dimension `(lo, hi)` over the loops inside `stmt` (None: unknown)."""
        domains = {**self.relaxed, **_inner_domains(stmt)}
        box: list[tuple[PrimExpr, PrimExpr] | None] = []
        per_access = [
            [self.analyzer.int_set(i, domains) for i in idx] for idx in self.accesses(stmt)
        ]
        for d in range(len(self.buffer.shape)):
            sets = [sets[d] for sets in per_access]
            if not sets or any(s.min_value is None or s.max_value is None for s in sets):
                box.append(None)
                continue
            lo, hi = sets[0].min_value, sets[0].max_value
            for s in sets[1:]:
                lo = self.analyzer.simplify(tir_min(lo, s.min_value))
                hi = self.analyzer.simplify(tir_max(hi, s.max_value))
            inner = set(domains) | _let_vars(stmt)
            box.append(None if _uses_any(lo, inner) or _uses_any(hi, inner) else (lo, hi))
        return box

    def _disjoint(self, loop: For) -> bool:
        """True when consecutive iterations of `loop` access disjoint elements."""
        var = loop.loop_var
        for bounds in self._box(loop.body):
            if bounds is None:
                continue
            lo, hi = bounds
            if self.analyzer.can_prove(substitute(lo, {var: var + 1}) > hi):
                return True
        return False

    def _compact(self, stmt: Stmt) -> Stmt:
        buffer, shifts, shape = self.buffer, [], []
        for dim, bounds in zip(buffer.shape, self._box(stmt)):
            extent = None if bounds is None else self._extent_bound(bounds)
            if extent is None or extent >= dim.value:  # type: ignore[attr-defined]  # IntImm
                shifts.append(const(0, dim.dtype))
                shape.append(dim)
                continue
            shifts.append(bounds[0])  # type: ignore[index]  # not None here
            shape.append(const(extent, dim.dtype))
        if all(a is b for a, b in zip(shape, buffer.shape)):
            return Allocate(buffer, stmt)
        compact = buffer.replace(shape=tuple(shape))
        body = _Shifter(buffer, compact, tuple(shifts), self.analyzer).visit_stmt(stmt)
        return Allocate(compact, body)

    def _extent_bound(self, bounds: tuple[PrimExpr, PrimExpr]) -> int | None:
        lo, hi = bounds
        extent = self.analyzer.simplify(hi - lo + 1)
        top = self.analyzer.const_int_bound(extent).max_value
        return top if isinstance(top, int) and 0 < top < 2**40 else None


def _let_vars(stmt: Stmt) -> set[Var]:
    found: set[Var] = set()

    class _Lets(StmtExprVisitor):
        def visit_let_stmt_(self, let: LetStmt) -> None:
            found.add(let.var)
            self.visit_stmt_(let)

    _Lets().visit_stmt(stmt)
    return found


def _uses_any(expr: PrimExpr, names: set[Var]) -> bool:
    if not names:
        return False
    hits: list[object] = []

    class _Uses(StmtExprVisitor):
        def visit_var_(self, var: Var) -> None:
            if var in names:
                hits.append(var)

    _Uses().visit_expr(expr)
    return bool(hits)


class _Shifter(StmtExprMutator):
    """Point accesses of `old` at `new`, each index minus its dimension's shift."""

    def __init__(
        self, old: Buffer, new: Buffer, shifts: tuple[PrimExpr, ...], analyzer: Analyzer
    ) -> None:
        super().__init__()
        self.old, self.new, self.shifts, self.analyzer = old, new, shifts, analyzer

    def _indices(self, indices: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
        return tuple(
            i if is_const_int(s, 0) else self.analyzer.simplify(i - s)
            for i, s in zip(indices, self.shifts)
        )

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        load = self._mutate_fields(load)
        if load.buffer is not self.old:
            return load
        return BufferLoad(self.new, self._indices(load.indices), span=load.span)

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        store = self._mutate_fields(store)
        if store.buffer is not self.old:
            return store
        return BufferStore(self.new, store.value, self._indices(store.indices), span=store.span)
