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
(when one item holds them all), into the branch of an `if` that holds them all (a
version of a kernel, `width_versions`), and into serial or parallel loops whose
iterations provably touch disjoint elements (so no value flows from one iteration to
the next; inside a parallel loop this makes the buffer private to each task).  Then each
dimension shrinks to the constant upper bound of the extent the accesses cover there,
and indices shift by the (possibly symbolic) lower bound, with
`unity.tir.arith.Analyzer.int_set`.  A symbolic dimension (a batch or sequence
length) shrinks the same way when the accesses cover a constant extent of it.  A tile
cached per `(io, jo)` iteration ends up allocated, tile-sized, inside the `jo` loop; so
does one cached per iteration of a fused loop `f` whose rows follow `f // c` and whose
columns follow `f % c` (each part steps past its previous box), and one cached per
iteration of a loop fused from three or more whose divisors divide one another
(``f // 1182``, ``f // 197 % 6``, ``f % 197``: a softmax's row over a batch, 6 heads and
197 rows; each digit of `f` in that mixed radix steps past its previous box).

Cost: one walk of the allocation's body indexes every access with the statements
around it; each level of the descent then evaluates only the loops between that level
and the access, restricted to the variables the index uses, and identical
(index, domains) pairs are evaluated once.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from unity.tir.arith import Analyzer
from unity.tir.arith.int_set import IntervalSet
from unity.tir.arith.key import expr_key
from unity.tir.buffer import Buffer
from unity.tir.expr import BufferLoad, Call, FloorDiv, FloorMod, IntImm, PrimExpr, Range, Var, const
from unity.tir.expr import max_value_of as tir_max
from unity.tir.expr import min_value_of as tir_min
from unity.tir.function import PrimFunc
from unity.tir.functor import (
    ExprVisitor,
    StmtExprMutator,
    StmtExprVisitor,
    post_order_visit,
    substitute,
)
from unity.tir.stmt import Allocate, BufferStore, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt
from unity.tir.transform._base import LoopBoundsMutator, PrimFuncPass, is_const_int, with_body
from unity.tir.transform.convert_blocks_to_loops import DIM_ALIGN


@dataclass(frozen=True)
class CompactBufferAllocation(PrimFuncPass):
    """Place each `Allocate` as deep as its accesses allow and shrink it to what they touch.

    Example:
        >>> from unity import te
        >>> from unity.schedule.schedule import Schedule
        >>> from unity.tir.transform import ConvertBlocksToLoops
        >>> A = te.placeholder((64,), name="A")
        >>> D = te.compute((64,), lambda i: A[i] + 1.0, name="D")
        >>> E = te.compute((64,), lambda i: D[i] * 2.0, name="E")
        >>> sch = Schedule(te.create_prim_func([A, E]))
        >>> sch.compute_at(sch.get_block("D"), sch.get_loops(sch.get_block("E"))[0])
        >>> func = ConvertBlocksToLoops().transform_function(sch.mod["main"])
        >>> out = CompactBufferAllocation()(IRModule({"main": func}))
        >>> 'T.allocate_buffer((1,), "float32")' in out.script()
        True
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> from unity import te
            >>> from unity.schedule.schedule import Schedule
            >>> from unity.tir.transform import ConvertBlocksToLoops
            >>> A = te.placeholder((64,), name="A")
            >>> D = te.compute((64,), lambda i: A[i] + 1.0, name="D")
            >>> E = te.compute((64,), lambda i: D[i] * 2.0, name="E")
            >>> sch = Schedule(te.create_prim_func([A, E]))
            >>> sch.compute_at(sch.get_block("D"), sch.get_loops(sch.get_block("E"))[0])
            >>> func = ConvertBlocksToLoops().transform_function(sch.mod["main"])
            >>> print(CompactBufferAllocation().transform_function(func).body.script())
            for i in T.serial(64):
                with T.allocate_buffer((1,), "float32") as D:
                    D[0] = A[i] + T.float32(1.0)
                    E[i] = D[0] * T.float32(2.0)
        """
        return with_body(func, _Compactor(dim_aligns(func)).visit_stmt(func.body)).without_attr(DIM_ALIGN)


_MOVABLE_INTO = (ForKind.SERIAL, ForKind.PARALLEL)
"""Loop kinds an allocation may move into (vectorized/unrolled loops must stay plain)."""


class _Compactor(LoopBoundsMutator):
    def __init__(self, aligns: dict[Var, Align]) -> None:
        super().__init__()
        self.aligns = aligns

    def visit_allocate_(self, alloc: Allocate) -> Stmt:
        body = self.visit_stmt(alloc.body)
        buffer = alloc.buffer
        if buffer.strides:
            return alloc.replace(body=body)
        placer = _Placer(buffer, self.analyzer, align=self.aligns.get(buffer.data, ()))
        if placer.index(body).aliased:
            return alloc.replace(body=body)
        placed = placer.place(body)
        if isinstance(placed, Allocate) and placed.buffer is buffer and placed.body is body:
            return alloc.replace(body=body)  # stays where it was, as large as it was
        return placed


@dataclass(frozen=True, slots=True, eq=False)
class _Access:
    """One load or store of the buffer, with the statements around it (outermost first)."""

    indices: tuple[PrimExpr, ...]
    path: tuple[Stmt, ...]


class _AccessIndex(StmtExprVisitor):
    """Every access to `buffer` under a root, and which statements hold which accesses."""

    def __init__(self, buffer: Buffer) -> None:
        self.buffer = buffer
        self.accesses: list[_Access] = []
        self.under: dict[int, list[_Access]] = {}
        """`id(stmt)` -> the accesses inside `stmt`, in walk order."""
        self.aliased = False
        """Whether another buffer view shares the buffer's data."""
        self._stack: list[Stmt] = []

    def visit_stmt(self, stmt: Stmt) -> None:
        self._stack.append(stmt)
        try:
            super().visit_stmt(stmt)
        finally:
            self._stack.pop()

    def visit_buffer_load_(self, load: BufferLoad) -> None:
        self._access(load.buffer, load.indices)
        self.visit_prim_expr_(load)

    def visit_buffer_store_(self, store: BufferStore) -> None:
        self._access(store.buffer, store.indices)
        self.visit_stmt_(store)

    def visit_call_(self, call: Call) -> None:
        tile = call.op.get_attr("tile")
        if tile is not None:  # a tile from each `BufferLoad` argument on: its far corner too
            for arg in call.args:
                if isinstance(arg, BufferLoad) and len(arg.indices) >= len(tile):
                    lead = len(arg.indices) - len(tile)
                    corner = [i + (t - 1) for i, t in zip(arg.indices[lead:], tile)]
                    self._access(arg.buffer, (*arg.indices[:lead], *corner))
        self.visit_prim_expr_(call)

    def _access(self, buffer: Buffer, indices: tuple[PrimExpr, ...]) -> None:
        if buffer is not self.buffer:
            if buffer.data is self.buffer.data:
                self.aliased = True
            return
        access = _Access(indices, tuple(self._stack))
        self.accesses.append(access)
        for stmt in self._stack:
            self.under.setdefault(id(stmt), []).append(access)


Align = tuple[tuple[int, int, int], ...]
"""`storage_align` requests of one buffer: `(axis, factor, offset)` each."""


def dim_aligns(func: PrimFunc) -> dict[Var, Align]:
    """The `storage_align` requests `ConvertBlocksToLoops` left on `func`, by data var.

    Example:
        >>> from unity import tir
        >>> dim_aligns(tir.PrimFunc([], tir.Evaluate(tir.const(0))))
        {}
    """
    return dict(func.attrs.get(DIM_ALIGN, ()))


def aligned_strides(shape: tuple[PrimExpr, ...], align: Align) -> tuple[PrimExpr, ...]:
    """Row-major strides of `shape` with the stride of each aligned axis raised to the
    next `k * factor + offset` (rows padded: shared-memory tiles read column-wise
    without bank conflicts).  Constant shapes only (others keep compact strides: `()`).

    Example:
        >>> [s.value for s in aligned_strides((const(128), const(32)), ((0, 32, 8),))]
        [40, 1]
    """
    if not align or not all(isinstance(d, IntImm) for d in shape):
        return ()
    wanted = {axis: (factor, offset) for axis, factor, offset in align}
    strides: list[int] = []
    stride = 1
    for axis in range(len(shape) - 1, -1, -1):
        if axis in wanted:
            factor, offset = wanted[axis]
            stride += (offset - stride) % factor
        strides.append(stride)
        stride *= shape[axis].value  # type: ignore[attr-defined]  # IntImm, checked above
    return tuple(const(v, shape[0].dtype) for v in reversed(strides))


class _Placer:
    """Rebuild a statement with `Allocate(compacted buffer)` at the deepest valid place."""

    def __init__(
        self, buffer: Buffer, analyzer: Analyzer, relaxed: dict[Var, Range] | None = None,
        align: Align = (),
    ) -> None:
        self.buffer = buffer
        self.analyzer = analyzer
        self.relaxed = relaxed or {}
        """Outer variables to relax as well (GPU: thread indices, for a shared buffer)."""
        self.align = align
        """`storage_align` requests: the compacted buffer gets padded strides."""
        self._index: _AccessIndex | None = None
        self._root: Stmt | None = None
        self._sets: dict[Hashable, IntervalSet] = {}
        self._keys: dict[object, Hashable] = {}
        self._vars = _VarsOf()

    def index(self, root: Stmt) -> _AccessIndex:
        """The accesses under `root` (walked once per root)."""
        if self._root is not root or self._index is None:
            self._index = _AccessIndex(self.buffer)
            self._index.visit_stmt(root)
            self._root = root
            self._sets.clear()
        return self._index

    def place(self, stmt: Stmt) -> Stmt:
        self.index(stmt)
        return self._place(stmt)

    def _accesses(self, stmt: Stmt) -> list[_Access]:
        return self._index.under.get(id(stmt), [])  # type: ignore[union-attr]  # set by index

    def _place(self, stmt: Stmt) -> Stmt:
        one = isinstance(stmt, For) and isinstance(stmt.extent, IntImm) and stmt.extent.value == 1
        if isinstance(stmt, For) and stmt.kind in _MOVABLE_INTO and (one or self._disjoint(stmt)):
            return stmt.replace(body=self._place(stmt.body))
        if isinstance(stmt, SeqStmt):
            users = [k for k, item in enumerate(stmt.seq) if self._accesses(item)]
            if len(users) == 1:
                items = list(stmt.seq)
                items[users[0]] = self._place(items[users[0]])
                return SeqStmt(tuple(items), span=stmt.span)
        if isinstance(stmt, LetStmt | Allocate):
            return stmt.replace(body=self._place(stmt.body))
        if isinstance(stmt, IfThenElse):  # into the branch holding every access
            every = len(self._accesses(stmt))
            if len(self._accesses(stmt.then_case)) == every:
                return stmt.replace(then_case=self._place(stmt.then_case))
            if stmt.else_case is not None and len(self._accesses(stmt.else_case)) == every:
                return stmt.replace(else_case=self._place(stmt.else_case))
        return self._compact(stmt)

    def _box(self, stmt: Stmt) -> list[tuple[PrimExpr, PrimExpr] | None]:
        """Per dimension `(lo, hi)` over the loops inside `stmt` (None: unknown)."""
        per_access: list[list[IntervalSet]] = []
        inner: set[Var] = set(self.relaxed)
        for access in self._accesses(stmt):
            domains, lets = self._inner(access, stmt)
            inner.update(domains)
            inner.update(lets)
            per_access.append([self._int_set(i, domains) for i in access.indices])
        box: list[tuple[PrimExpr, PrimExpr] | None] = []
        for d in range(len(self.buffer.shape)):
            sets = _distinct(sets[d] for sets in per_access)
            if not sets or any(s.min_value is None or s.max_value is None for s in sets):
                box.append(None)
                continue
            lo, hi = sets[0].min_value, sets[0].max_value
            for s in sets[1:]:
                lo = self.analyzer.simplify(tir_min(lo, s.min_value))
                hi = self.analyzer.simplify(tir_max(hi, s.max_value))
            used = self._vars.of(lo) | self._vars.of(hi)
            box.append(None if not used.isdisjoint(inner) else (lo, hi))
        return box

    def _inner(self, access: _Access, stmt: Stmt) -> tuple[dict[Var, Range], list[Var]]:
        """Loops (with ranges) and let variables around `access` from `stmt` inwards."""
        domains: dict[Var, Range] = dict(self.relaxed)
        lets: list[Var] = []
        path = access.path
        start = next(k for k, s in enumerate(path) if s is stmt)
        for s in path[start:]:
            if isinstance(s, For):
                domains[s.loop_var] = Range(s.min, s.extent)
            elif isinstance(s, LetStmt):
                lets.append(s.var)
        return domains, lets

    def _int_set(self, index: PrimExpr, domains: dict[Var, Range]) -> IntervalSet:
        """`analyzer.int_set` over the domains `index` depends on (memoized)."""
        relevant = _relevant(index, domains, self._vars)
        key = (
            self._key(index),
            tuple((v, self._key(r.min), self._key(r.extent)) for v, r in relevant.items()),
        )
        found = self._sets.get(key)
        if found is None:
            found = self._sets[key] = self.analyzer.int_set(index, relevant)
        return found

    def _key(self, expr: PrimExpr) -> Hashable:
        return expr_key(expr, self._keys)  # type: ignore[arg-type]  # identity-keyed memo

    def _disjoint(self, loop: For) -> bool:
        """True when distinct iterations of `loop` access disjoint elements: one dimension
        moves past its last box at each step, or (a fused loop `f`, indexed through
        `f // c` and `f % c`) one dimension does so at each step of `f // c` and one at
        each step of `f % c`, or (fused from three or more: ``f // 1182``, ``f // 197 %
        6``, ``f % 197``, a batch, heads and rows) at each step of each digit of `f` in
        the mixed radix of its divisors."""
        var = loop.loop_var
        box = [b for b in self._box(loop.body) if b is not None]
        if any(self._advances(lo, hi, var, {}) for lo, hi in box):
            return True
        divisors = sorted(_divisors_of(var, [e for b in box for e in b]))
        if any(self._digits_advance(loop, box, [c]) for c in divisors):
            return True
        chained = len(divisors) > 1 and all(b % a == 0 for a, b in zip(divisors, divisors[1:]))
        return chained and self._digits_advance(loop, box, divisors)

    def _digits_advance(
        self, loop: For, box: list[tuple[PrimExpr, PrimExpr]], radices: list[int]
    ) -> bool:
        """With `f` (the loop's variable) written in mixed radix (`radices` ascending, each
        dividing the next: ``f = (t * 6 + d1) * 197 + d0`` for 197 and 1182; ``f = q * c +
        r`` for one), whether each digit moves one dimension past its previous box
        whatever the lower digits are (so iterations differing first in that digit touch
        disjoint elements).  The analyzer turns ``f // 197 % 6`` into `d1`, and so on."""
        var = loop.loop_var
        digits: list[tuple[Var, Range]] = []
        unfused: PrimExpr | None = None
        below = 1
        for k, radix in enumerate([*radices, None]):  # lowest digit first, `t` last
            digit = Var(f"{var.name}_d{k}", var.dtype)
            extent = loop.extent // below + 1 if radix is None else const(radix // below, var.dtype)
            digits.append((digit, Range(const(0, var.dtype), extent)))
            self.analyzer.bind(digit, digits[-1][1])
            unfused = digit if unfused is None else unfused + digit * below
            below = radix or below
        unfuse = {var: unfused}
        split = [tuple(self.analyzer.simplify(substitute(e, unfuse)) for e in b) for b in box]
        for k, (digit, _) in enumerate(digits):
            lower: dict[Var, PrimExpr] = {}
            for d, rng in digits[:k]:
                lower[d] = Var(f"{d.name}_2", d.dtype)
                self.analyzer.bind(lower[d], rng)
            if not any(self._advances(lo, hi, digit, lower) for lo, hi in split):
                return False
        return True

    def _advances(self, lo: PrimExpr, hi: PrimExpr, var: Var, also: dict[Var, PrimExpr]) -> bool:
        """`lo` at `var + 1` (and the other variables of `also` replaced) exceeds `hi`."""
        return self.analyzer.can_prove(substitute(lo, {var: var + 1, **also}) > hi)

    def _compact(self, stmt: Stmt) -> Stmt:
        buffer, shifts, shape = self.buffer, [], []
        for dim, bounds in zip(buffer.shape, self._box(stmt)):
            extent = None if bounds is None else self._extent_bound(bounds, dim)
            if extent is None or (isinstance(dim, IntImm) and extent >= dim.value):
                shifts.append(const(0, dim.dtype))
                shape.append(dim)
                continue
            shifts.append(bounds[0])  # type: ignore[index]  # not None here
            shape.append(const(extent, dim.dtype))
        strides = aligned_strides(tuple(shape), self.align)
        if all(a is b for a, b in zip(shape, buffer.shape)) and not strides:
            return Allocate(buffer, stmt)
        compact = buffer.replace(shape=tuple(shape), strides=strides)
        body = _Shifter(buffer, compact, tuple(shifts), self.analyzer).visit_stmt(stmt)
        return Allocate(compact, body)

    def _extent_bound(self, bounds: tuple[PrimExpr, PrimExpr], dim: PrimExpr) -> int | None:
        """A constant bound of the region's extent, or None.  A symbolic dimension keeps
        its size unless the region's extent is a constant (a tile of it): the bound of a
        region over all of `n` is only `n`'s dtype maximum, and an `(n, 4)` intermediate
        became a 2^31-element allocation."""
        lo, hi = bounds
        extent = self.analyzer.simplify(hi - lo + 1)
        if not isinstance(dim, IntImm) and not isinstance(extent, IntImm):
            return None
        top = self.analyzer.const_int_bound(extent).max_value
        return top if isinstance(top, int) and 0 < top < 2**40 else None


def _divisors_of(var: Var, exprs: list[PrimExpr]) -> set[int]:
    """Constants `c` of the `var // c` and `var % c` in `exprs` (a fused loop's parts)."""
    found: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, FloorDiv | FloorMod) and node.a is var:
            if isinstance(node.b, IntImm) and node.b.value > 1:
                found.add(node.b.value)

    for e in exprs:
        post_order_visit(e, visit)
    return found


def _distinct(sets: Iterable[IntervalSet]) -> list[IntervalSet]:
    """`sets` without repeats (same bounds, by structure), first occurrence kept."""
    seen: set[Hashable] = set()
    out: list[IntervalSet] = []
    for s in sets:
        key = tuple(None if e is None else expr_key(e) for e in (s.min_value, s.max_value))
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def _relevant(index: PrimExpr, domains: dict[Var, Range], vars_of: _VarsOf) -> dict[Var, Range]:
    """The domains `index` depends on, directly or through another domain's bounds."""
    todo = [v for v in vars_of.of(index) if v in domains]
    picked: set[Var] = set(todo)
    while todo:
        rng = domains[todo.pop()]
        for v in vars_of.of(rng.min) | vars_of.of(rng.extent):
            if v in domains and v not in picked:
                picked.add(v)
                todo.append(v)
    return {v: r for v, r in domains.items() if v in picked}


class _VarsOf(ExprVisitor):
    """The free variables of expressions, memoized by identity."""

    def __init__(self) -> None:
        self._memo: dict[PrimExpr, frozenset[Var]] = {}
        self._found: set[Var] = set()

    def of(self, expr: PrimExpr) -> frozenset[Var]:
        done = self._memo.get(expr)
        if done is None:
            self._found = set()
            self.visit_expr(expr)
            done = self._memo[expr] = frozenset(self._found)
        return done

    def visit_var_(self, var: Var) -> None:
        self._found.add(var)


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
