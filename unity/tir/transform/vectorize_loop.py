"""Turn `VECTORIZED` loops of constant extent into vector code (`Ramp`, `Broadcast`).

Before::

    for i in T.vectorized(8):
        B[i] = A[i] * T.float32(2)

After ``VectorizeLoop()``::

    B[T.Ramp(0, 1, 8)] = A[T.Ramp(0, 1, 8)] * T.Broadcast(T.float32(2), 8)

The loop variable becomes `Ramp(min, 1, W)`; loop-invariant values stay scalar and are
broadcast where they meet a vector.  `W` is the extent when it fits in `vector_bits`
(for the widest element type the body loads or stores), else the widest power of two
that fits: the loop then becomes a serial loop over chunks of `W` lanes plus the
remainder: one narrower vector when the extent is constant (28 float32 lanes: 16, then
12, which LLVM splits into 8 + 4), else a scalar tail loop.  A symbolic extent `n` gets
`n // W` chunks and a tail of `n % W`.  A loop that cannot be vectorized (a nested
loop, an `if` on a vector condition other than below, a store of a vector to a scalar
index, ...) becomes a `SERIAL` loop.

The guarded last tile of a symbolic extent (``if i0 * 16 + j < n``, only the first lanes
taken) runs on every lane when its statement is one store to lane `j`'s own element of a
`local` tile allocated inside the tile's loop (the accumulators, whose extra lanes are
never written back), and reads other buffers at ``min(j, last)`` (a masked load)::

    for j in T.vectorized(16):                              # before
        if i0 * 16 + j < n:
            acc[j] = acc[j] + A[i0 * 16 + j]
    if 0 <= n - i0 * 16 - 1:                                # after
        acc[T.Ramp(0, 1, 16)] = acc[T.Ramp(0, 1, 16)] + A[T.Broadcast(i0 * 16, 16)
            + T.min(T.Ramp(0, 1, 16), T.Broadcast(n - i0 * 16 - 1, 16))]

Attention scores over a cache (``Q K^T`` with ``past + seq`` columns, 133 at a 128-token
prompt) ran their last column tile lane by lane: 0.65 -> 0.14 ms (0.10 at 128 columns).

A load under a vector select must stay inside its buffer on every lane.  Over symbolic
sizes a padded copy reads ``x[max(min(y - 1, H - 1), 0) * W + ...]``, inside only when `H`
and `W` are at least 1 (`prove_in_bounds`): the vector loop then runs behind that test,
the serial one (which reads nothing of an empty tensor) otherwise::

    if H >= 1 and W >= 1:
        <the vector chunks and tail>
    else:
        for j in T.serial(W + 2): ...
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from unity.ir import dtype as dt
from unity.ir.node import dispatch_table
from unity.tir.arith import Analyzer
from unity.tir.arith.poly_bound import prove_in_bounds
from unity.tir.expr import (
    GE, GT, LE, LT, Add, And, BinaryOp, Broadcast, BufferLoad, Call, Cast, Div, FloorDiv, FloorMod,
    IntImm, Let, Min, Mod, Mul, Not, PrimExpr, Ramp, Range, Select, Sub, Var, conjuncts, const,
)  # fmt: skip
from unity.tir.buffer import Buffer
from unity.tir.function import PrimFunc
from unity.tir.functor import (
    StmtExprMutator, StmtExprVisitor, post_order_nodes, post_order_visit, substitute, uses_var,
)  # fmt: skip
from unity.tir.stmt import Allocate, BufferStore, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt
from unity.tir.transform._base import PrimFuncPass, fold_add, fold_mul, is_const_int, with_body
from unity.tir.transform.unroll_loop import copy_with_fresh_vars


@dataclass(frozen=True)
class VectorizeLoop(PrimFuncPass):
    """Rewrite `for i in T.vectorized(n)` into vector expressions over `Ramp(min, 1, W)`.

    Example:
        >>> from unity import te
        >>> from unity.schedule.schedule import Schedule
        >>> from unity.tir.transform import ConvertBlocksToLoops
        >>> A = te.placeholder((64,), name="A")
        >>> B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
        >>> sch = Schedule(te.create_prim_func([A, B]))
        >>> i_0, i_1 = sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[None, 8])
        >>> sch.vectorize(i_1)
        >>> func = ConvertBlocksToLoops().transform_function(sch.mod["main"])
        >>> "T.Ramp" in VectorizeLoop()(IRModule({"main": func}))["main"].script()
        True
    """

    vector_bits: int = 512
    """Width of one vector in bits; with float32 elements `W` is at most 16."""
    max_lanes: int = 64
    """Upper bound on `W` whatever the element type (bool/int8 bodies)."""

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> from unity import te
            >>> from unity.schedule.schedule import Schedule
            >>> from unity.tir.transform import ConvertBlocksToLoops
            >>> A = te.placeholder((64,), name="A")
            >>> B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i_0, i_1 = sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[None, 8])
            >>> sch.vectorize(i_1)
            >>> func = ConvertBlocksToLoops().transform_function(sch.mod["main"])
            >>> print(VectorizeLoop().transform_function(func).body.script())
            for i_0 in T.serial(8):
                B[T.Ramp(i_0 * 8, 1, 8)] = A[T.Ramp(i_0 * 8, 1, 8)] * T.Broadcast(T.float32(2.0), 8)
        """
        vectorizer = _LoopVectorizer(self, frozenset(func.shape_vars()))
        return with_body(func, vectorizer.visit_stmt(func.body))


class CannotVectorize(Exception):
    """Raised inside the vectorizer when a body has no vector form (caught: loop -> serial).

    Example:
        >>> try:
        ...     raise CannotVectorize("a loop-carried dependence")
        ... except CannotVectorize as err:
        ...     str(err)
        'a loop-carried dependence'
    """


BoundSince = Callable[[Buffer], "set[Var] | None"]
"""The variables bound (loops, lets) between a buffer's allocation and the loop being
vectorized; None when the allocation was not seen."""


@dataclass
class Assumptions:
    """Shape variables a bounds proof may take to be at least 1 (`sizes`), and those it
    took (`taken`): the caller tests them at run time.

    Example:
        >>> Assumptions(frozenset()).taken
        set()
    """

    sizes: frozenset[Var]
    taken: set[Var] = field(default_factory=set)


def vectorize_body(
    body: Stmt, var: Var, base: PrimExpr, lanes: int, analyzer: Analyzer | None = None,
    bound_since: BoundSince | None = None, assume: Assumptions | None = None,
) -> Stmt:  # fmt: skip
    """`body` for the `lanes` iterations `var = base, ..., base + lanes - 1` at once.

    Raises:
        CannotVectorize: the body has no vector form.

    `analyzer` (with the loop variables bound) proves loads under a vector `Select`
    in bounds; without it such loads keep the loop serial.  `bound_since` lets a guarded
    tile run on every lane (see the module docstring); without it such a tile is serial.
    With `assume`, a load the analyzer cannot place may still be proved in bounds for
    shape variables of at least 1 (`prove_in_bounds`); those taken are added to it.

    Example:
        >>> vectorize_body(store, i, tir.const(0), 8)  # doctest: +SKIP
    """
    ramp = Ramp(base, const(1, base.dtype), lanes)
    return _Vectorizer(var, ramp, lanes, analyzer, bound_since, assume).stmt(body)


class _LoopVectorizer(StmtExprMutator):
    def __init__(self, options: VectorizeLoop, sizes: frozenset[Var] = frozenset()) -> None:
        super().__init__()
        self.options = options
        self.sizes = sizes
        self.analyzer = Analyzer()
        self.bound: list[Var] = []  # loop and let variables of the enclosing statements
        self.allocated_at: dict[Var, int] = {}  # a buffer's data -> len(bound) at its Allocate

    def bound_since(self, buffer: Buffer) -> set[Var] | None:
        depth = self.allocated_at.get(buffer.data)
        return None if depth is None else set(self.bound[depth:])

    def visit_allocate_(self, stmt: Allocate) -> Stmt:
        self.allocated_at[stmt.buffer.data] = len(self.bound)
        return self._mutate_fields(stmt)

    def visit_let_stmt_(self, stmt: LetStmt) -> Stmt:
        self.bound.append(stmt.var)
        if dt.is_integer(stmt.var.dtype) and not uses_var(stmt.value, stmt.var):
            self.analyzer.bind(stmt.var, stmt.value)  # the shape arithmetic named at the top
        try:
            return self._mutate_fields(stmt)
        finally:
            self.bound.pop()

    def visit_for_(self, loop: For) -> Stmt:
        self.analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
        self.bound.append(loop.loop_var)
        try:
            loop = self._mutate_fields(loop)  # inner loops first
        finally:
            self.bound.pop()
        if loop.kind is not ForKind.VECTORIZED:
            return loop
        serial = loop.replace(kind=ForKind.SERIAL)
        cap = self._max_width(loop.body)
        extent = loop.extent.value if isinstance(loop.extent, IntImm) else None
        if (extent is not None and extent <= 1) or cap <= 1:
            return serial
        assume = Assumptions(self.sizes)
        try:
            vector = self._split(loop, min(extent, cap) if extent is not None else cap, assume)
        except CannotVectorize:
            return serial
        if not assume.taken:
            return vector
        # a load proved in bounds only for sizes of at least 1 (a padded copy's clamped
        # read of an empty tensor would read outside it): the serial loop otherwise
        nonempty = [v >= const(1, v.dtype) for v in sorted(assume.taken, key=lambda v: v.name)]
        return IfThenElse(functools.reduce(And, nonempty), vector, copy_with_fresh_vars(serial, {}))

    def _max_width(self, body: Stmt) -> int:
        bits = max(_element_bits(body), 8)
        width = 1
        while width * 2 * bits <= self.options.vector_bits and width * 2 <= self.options.max_lanes:
            width *= 2
        return width

    def _split(self, loop: For, width: int, assume: Assumptions) -> Stmt:
        """Chunks of `width` lanes, then a vector or scalar tail for what is left (if anything)."""
        var, lo, extent = loop.loop_var, loop.min, loop.extent
        w = const(width, var.dtype)
        chunks, done = _div(extent, width), fold_mul(_div(extent, width), w)
        if is_const_int(chunks, 1):
            main = vectorize_body(
                loop.body, var, lo, width, self.analyzer, self.bound_since, assume
            )
        else:
            outer = Var(f"{var.name}_outer", var.dtype)
            self.analyzer.bind(outer, Range(const(0, var.dtype), chunks))
            base = fold_add(lo, fold_mul(outer, w))
            body = vectorize_body(
                loop.body, var, base, width, self.analyzer, self.bound_since, assume
            )
            main = For(outer, const(0, var.dtype), chunks, ForKind.SERIAL, body)
        tail = _sub(extent, done)
        if is_const_int(tail, 0):
            return main
        tail_var = Var(var.name, var.dtype)
        tail_body = copy_with_fresh_vars(loop.body, {var: tail_var})
        if isinstance(tail, IntImm) and tail.value > 1:  # a constant tail: one narrower vector
            start = fold_add(lo, done)
            # its loads under a vector select are proved in bounds over the tail's range
            self.analyzer.bind(tail_var, Range(start, tail))
            try:
                narrow = vectorize_body(tail_body, tail_var, start, tail.value, self.analyzer,
                                        self.bound_since, assume)  # fmt: skip
                return SeqStmt((main, narrow))
            except CannotVectorize:
                pass
        tail_loop = For(tail_var, fold_add(lo, done), tail, ForKind.SERIAL, tail_body)
        return SeqStmt((main, tail_loop))


def _div(extent: PrimExpr, width: int) -> PrimExpr:
    if isinstance(extent, IntImm):
        return const(extent.value // width, extent.dtype)
    return extent // const(width, extent.dtype)


def _sub(extent: PrimExpr, done: PrimExpr) -> PrimExpr:
    if isinstance(extent, IntImm) and isinstance(done, IntImm):
        return const(extent.value - done.value, extent.dtype)
    return extent - done


def _element_bits(body: Stmt) -> int:
    class _Bits(StmtExprVisitor):
        bits = 0

        def visit_buffer(self, buffer: object) -> None:
            self.bits = max(self.bits, dt.bits(buffer.dtype))  # type: ignore[attr-defined]

    visitor = _Bits()
    visitor.visit_stmt(body)
    return visitor.bits


def _loads(expr: PrimExpr) -> list[BufferLoad]:
    found: list[BufferLoad] = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, BufferLoad) else None)
    return found


def _lanes(expr: PrimExpr) -> int:
    return dt.lanes(expr.dtype)


class _Vectorizer:
    """Rewrite a loop body with the loop variable replaced by a `Ramp` of `lanes` lanes."""

    def __init__(
        self, var: Var, ramp: Ramp, lanes: int, analyzer: Analyzer | None,
        bound_since: BoundSince | None = None, assume: Assumptions | None = None,
    ) -> None:  # fmt: skip
        self.vmap: dict[Var, PrimExpr] = {var: ramp}
        self.var, self.ramp = var, ramp
        self.lanes = lanes
        self.analyzer = analyzer
        self.bound_since = bound_since
        self.assume = assume

    def _in_bounds(self, expr: PrimExpr) -> bool:
        """True when every load in `expr` provably stays inside its buffer on every lane."""
        for load in _loads(expr):
            if self.analyzer is None:
                return False
            for index, dim in zip(load.indices, load.buffer.shape):
                prove = self.analyzer.can_prove
                if prove(index >= 0) and prove(index < dim):
                    continue
                taken = None
                if self.assume is not None and self.assume.sizes:
                    taken = prove_in_bounds(self.analyzer, index, dim, self.assume.sizes)
                if taken is None:
                    return False
                self.assume.taken |= taken  # type: ignore[union-attr]  # set when taken
        return True

    def _dispatch(self, node: object) -> object:
        hook = dispatch_table(type(self), type(node))
        if hook is None:
            raise CannotVectorize(f"cannot vectorize a {type(node).__name__}")
        return hook(self, node)

    def expr(self, expr: PrimExpr) -> PrimExpr:
        return self._dispatch(expr)  # type: ignore[return-value]

    def stmt(self, stmt: Stmt) -> Stmt:
        return self._dispatch(stmt)  # type: ignore[return-value]

    def bcast(self, expr: PrimExpr) -> PrimExpr:
        if _lanes(expr) == self.lanes:
            return expr
        if _lanes(expr) != 1:
            raise CannotVectorize(f"mixed vector widths {expr.dtype} and {self.lanes} lanes")
        return Broadcast(expr, self.lanes)

    # -- expressions ----------------------------------------------------------------------
    def visit_var_(self, var: Var) -> PrimExpr:
        return self.vmap.get(var, var)

    def visit_int_imm_(self, expr: PrimExpr) -> PrimExpr:
        return expr

    visit_float_imm_ = visit_string_imm_ = visit_int_imm_

    def visit_cast_(self, expr: Cast) -> PrimExpr:
        value = self.expr(expr.value)
        if _lanes(value) == 1:
            return expr.replace(value=value)
        if (
            isinstance(value, Ramp)
            and dt.is_integer(expr.dtype)
            and dt.is_int(value.dtype)
            and dt.bits(expr.dtype) >= dt.bits(value.dtype)
        ):  # a widened signed ramp is a ramp: int64 indices stay contiguous vector accesses
            scalar = dt.element(expr.dtype)
            return Ramp(value.base.astype(scalar), value.stride.astype(scalar), value.lanes)
        return Cast(dt.with_lanes(expr.dtype, self.lanes), value)

    def visit_not_(self, expr: Not) -> PrimExpr:
        return expr.replace(a=self.expr(expr.a))

    def visit_binary_op_(self, expr: BinaryOp) -> PrimExpr:
        a, b = self.expr(expr.a), self.expr(expr.b)
        if _lanes(a) == 1 and _lanes(b) == 1:
            return expr.replace(a=a, b=b)
        ramp = _ramp_arith(type(expr), a, b)
        if ramp is not None:
            return ramp
        return type(expr)(self.bcast(a), self.bcast(b))

    def visit_select_(self, expr: Select) -> PrimExpr:
        parts = [self.expr(e) for e in (expr.condition, expr.true_value, expr.false_value)]
        if all(_lanes(p) == 1 for p in parts):
            return expr.replace(condition=parts[0], true_value=parts[1], false_value=parts[2])
        guarded = (expr.true_value, expr.false_value)
        if _lanes(parts[0]) > 1 and not all(self._in_bounds(e) for e in guarded):
            # A lane whose condition is false may hold an out-of-bounds index (padding):
            # a vector load would read it, the scalar loop never does.
            raise CannotVectorize("a select on a vector condition guards a vector load")
        return Select(*(self.bcast(p) for p in parts))

    def visit_call_(self, expr: Call) -> PrimExpr:
        args = tuple(self.expr(a) for a in expr.args)
        if all(_lanes(a) == 1 for a in args):
            changed = any(a is not b for a, b in zip(args, expr.args))
            return expr.replace(args=args) if changed else expr
        dtype = dt.with_lanes(expr.dtype, self.lanes)
        return Call(dtype, expr.op, tuple(self.bcast(a) for a in args))

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        indices = self._indices(load.indices)
        if all(a is b for a, b in zip(indices, load.indices)):
            return load
        return BufferLoad(load.buffer, indices, span=load.span)

    def _indices(self, indices: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
        new = tuple(self.expr(i) for i in indices)
        if sum(_lanes(i) > 1 for i in new) > 1:
            raise CannotVectorize("more than one vector index into one buffer")
        return new

    def visit_let_(self, expr: Let) -> PrimExpr:
        value = self.expr(expr.value)
        var = self._rebind(expr.var, value)
        return Let(var, value, self.expr(expr.body))

    def _rebind(self, var: Var, value: PrimExpr) -> Var:
        if _lanes(value) == 1:
            return var
        new = Var(var.name, value.dtype)
        self.vmap[var] = new
        return new

    # -- statements -----------------------------------------------------------------------
    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        value = self.expr(store.value)
        indices = self._indices(store.indices)
        if all(_lanes(i) == 1 for i in indices):
            raise CannotVectorize("a store to a loop-invariant location")
        return BufferStore(store.buffer, self.bcast(value), indices, span=store.span)

    def visit_seq_stmt_(self, stmt: SeqStmt) -> Stmt:
        return SeqStmt(tuple(self.stmt(s) for s in stmt.seq))

    def visit_if_then_else_(self, stmt: IfThenElse) -> Stmt:
        cond = self.expr(stmt.condition)
        if _lanes(cond) != 1:
            if stmt.else_case is not None:
                raise CannotVectorize("an if-else on a vector condition")
            return self._first_lanes(stmt)
        else_case = None if stmt.else_case is None else self.stmt(stmt.else_case)
        return IfThenElse(cond, self.stmt(stmt.then_case), else_case)

    def _first_lanes(self, stmt: IfThenElse) -> Stmt:
        """`if c: body` where `c` holds on the loop's first lanes only (``i0 * 32 + i1 < n``:
        the guarded last tile of a symbolic extent), as vector code on every lane: `body`
        one store to lane `j`'s own element of a `local` tile allocated inside the loops
        `c` names (the tile's accumulators: their extra lanes no other tile shares and
        nothing reads unguarded), in bounds on every lane; each other buffer's load reads
        lane `j` at ``min(j, last)`` (a masked load: no address a taken lane would not
        read).  Guarded by the lane-uniform terms of `c` and by the first lane's being
        taken."""
        uniform, last, tile_vars = self._lane_limit(stmt.condition)
        body = stmt.then_case
        if self.analyzer is None or not _maskable(body, self.var, self.analyzer):
            raise CannotVectorize("an if on a vector condition")
        assert isinstance(body, BufferStore)  # `_maskable` checked
        since = None if self.bound_since is None else self.bound_since(body.buffer)
        if since is None or since & tile_vars:  # a tile of its own: no other tile's lanes
            raise CannotVectorize(f"an if on a vector condition over {body.buffer.name}, shared by tiles")
        clamp = Min(self.var, last)
        body = _ClampLoads(self.var, clamp).visit_stmt(body)
        first = self.ramp.base
        guard = LE(first, self.expr(last))
        for term in uniform:
            guard = And(self.expr(term), guard)
        return IfThenElse(guard, self.stmt(body), None)

    def _lane_limit(self, cond: PrimExpr) -> tuple[list[PrimExpr], PrimExpr, set[Var]]:
        """The lane-uniform terms of the conjunction `cond`, the largest value of the loop
        variable the others allow (each ``var + u < b``, `u` and `b` uniform), and the
        other variables those use (the tile's: ``i0`` of ``i0 * 16 + j < n``)."""
        uniform: list[PrimExpr] = []
        last: PrimExpr | None = None
        tile_vars: set[Var] = set()
        for term in conjuncts(cond):
            if _lanes(self.expr(term)) == 1:
                uniform.append(term)
                continue
            bound = _upper_bound(term, self.var, self.analyzer)
            if bound is None or _lanes(self.expr(bound)) != 1:
                raise CannotVectorize(f"an if on the vector condition {term}")
            last = bound if last is None else Min(last, bound)
            tile_vars.update(n for n in post_order_nodes(term) if isinstance(n, Var))
        assert last is not None, "a vector condition has a lane-dependent term"
        return uniform, last, tile_vars - {self.var}

    def visit_let_stmt_(self, stmt: LetStmt) -> Stmt:
        value = self.expr(stmt.value)
        var = self._rebind(stmt.var, value)
        return LetStmt(var, value, self.stmt(stmt.body))


def _upper_bound(term: PrimExpr, var: Var, analyzer: Analyzer | None) -> PrimExpr | None:
    """`b - u - 1` for a term ``var + u < b`` (or ``<=``, ``>``, ``>=`` written either
    way) with coefficient 1 on `var`; None for other terms."""
    if analyzer is None:
        return None
    if isinstance(term, GT | GE):
        term = (LT if isinstance(term, GT) else LE)(term.b, term.a)
    if not isinstance(term, LT | LE) or uses_var(term.b, var):
        return None
    rest = analyzer.simplify(term.a - var)
    if uses_var(rest, var):
        return None
    slack = 1 if isinstance(term, LT) else 0
    return analyzer.simplify(term.b - rest - const(slack, term.b.dtype))


def _maskable(body: Stmt, var: Var, analyzer: Analyzer) -> bool:
    """Whether `body` may run on lanes its guard skips: one store to a `local` buffer at
    ``u + var`` (each lane its own element), every access of a local buffer in bounds on
    the whole loop range, no `Let` (a clamped load's index must be the loop variable's
    own) and no integer division by a non-constant (a skipped lane's divisor may be 0)."""
    if not isinstance(body, BufferStore) or body.buffer.scope != "local" or len(body.indices) != 1:
        return False
    if uses_var(analyzer.simplify(body.indices[0] - var), var):
        return False
    ok = [True]

    def in_bounds(indices: tuple[PrimExpr, ...], shape: tuple[PrimExpr, ...]) -> bool:
        return all(
            analyzer.can_prove(i >= 0) and analyzer.can_prove(i < d) for i, d in zip(indices, shape)
        )

    def check(node: object) -> None:
        if isinstance(node, BufferStore | BufferLoad) and node.buffer.scope == "local":
            ok[0] = ok[0] and in_bounds(node.indices, node.buffer.shape)
        elif isinstance(node, Let):
            ok[0] = False
        elif isinstance(node, Div | Mod | FloorDiv | FloorMod) and not isinstance(node.b, IntImm):
            ok[0] = ok[0] and not dt.is_integer(node.dtype)

    post_order_visit(body, check)
    return ok[0]


class _ClampLoads(StmtExprMutator):
    """Replace `var` by `clamp` in the indices of every load of a non-`local` buffer."""

    def __init__(self, var: Var, clamp: PrimExpr) -> None:
        super().__init__()
        self.var, self.clamp = var, clamp

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        if load.buffer.scope == "local":
            return self._mutate_fields(load)
        indices = tuple(substitute(i, {self.var: self.clamp}) for i in load.indices)
        return load.replace(indices=indices)


def _ramp_arith(cls: type, a: PrimExpr, b: PrimExpr) -> PrimExpr | None:
    """Keep `ramp + s`, `ramp - s`, `ramp * s`, `ramp + ramp` as ramps (contiguity shows)."""
    ra, rb = isinstance(a, Ramp), isinstance(b, Ramp)
    if not dt.is_integer(a.dtype) or not (ra or rb):
        return None
    if not (ra or _lanes(a) == 1) or not (rb or _lanes(b) == 1):
        return None
    if cls is Add and ra and rb:
        return _ramp(fold_add(a.base, b.base), fold_add(a.stride, b.stride), a.lanes)
    if cls is Add:
        ramp, s = (a, b) if ra else (b, a)
        return _ramp(fold_add(ramp.base, s), ramp.stride, ramp.lanes)
    if cls is Sub and ra and rb:
        return _ramp(a.base - b.base, a.stride - b.stride, a.lanes)
    if cls is Sub and ra:
        return _ramp(a.base - b, a.stride, a.lanes)
    if cls is Sub:
        return _ramp(a - b.base, -b.stride, b.lanes)
    if cls is Mul and not (ra and rb):
        ramp, s = (a, b) if ra else (b, a)
        return _ramp(fold_mul(ramp.base, s), fold_mul(ramp.stride, s), ramp.lanes)
    return None


def _ramp(base: PrimExpr, stride: PrimExpr, lanes: int) -> Ramp:
    if stride.dtype != base.dtype:  # int32/int64 mixes: the wider wins
        wide = base.dtype if dt.bits(base.dtype) >= dt.bits(stride.dtype) else stride.dtype
        base, stride = base.astype(wide), stride.astype(wide)
    return Ramp(base, stride, lanes)
