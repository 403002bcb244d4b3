"""Test the bound guards of a tile once, before the tile, instead of once per element.

Splitting a loop of symbolic extent (a sequence length) by a constant leaves a guard
``if i0 * 8 + i1 < seq`` in the innermost loops: a branch per row and step, which also
keeps LLVM from holding a register tile in registers across the reduction.  Every
tile but the last has all its rows in bounds, so the statement holding the tile runs
in two versions:

Before::

    for i0 in T.parallel((seq + 7) // 8):
        for k, i1 in T.grid(64, 8):
            if i0 * 8 + i1 < seq:
                C[i0 * 8 + i1] = C[i0 * 8 + i1] + A[i0 * 8 + i1, k]

After ``HoistGuards()``::

    for i0 in T.parallel((seq + 7) // 8):
        if i0 * 8 + 7 < seq:
            for k, i1 in T.grid(64, 8):
                C[i0 * 8 + i1] = C[i0 * 8 + i1] + A[i0 * 8 + i1, k]
        else:
            for k, i1 in T.grid(64, 8):
                if i0 * 8 + i1 < seq:
                    C[i0 * 8 + i1] = C[i0 * 8 + i1] + A[i0 * 8 + i1, k]

A serial loop over the tiles of a symbolic length whose guards test a tile inside it
(a reduction over a row in vectors of 8: ``k0 * 8 + k1 < seq``) splits instead, since
versioned around it the check would hold only when ``seq % 8 == 0``::

    for k0 in T.serial((seq + 7) // 8):       # before
        for k1 in T.serial(8):
            if k0 * 8 + k1 < seq: ...
    for k0 in T.serial(seq // 8):              # after: whole tiles, no guard
        for k1 in T.serial(8): ...
    for k0 in T.serial(seq // 8, (seq + 7) // 8):   # the last, guarded
        for k1 in T.serial(8):
            if k0 * 8 + k1 < seq: ...

(the bounds are clamped to the loop's range).  Softmax rows of 505 and 121 elements ran
1.6x and 1.4x slower than rows of 512 and 128 before; level with them after.

A loop over the tiles of a symbolic length whose tile may run a position twice (it
stores only to buffers allocated inside it, indexed without the position, and to
buffers it does not read: a register tile and its write-back) moves its last tile back
instead, to end at the last position: every tile whole, no guard, its positions at
constant offsets from its start (a conv over a symbolic image size, ``L`` its pixels).
For one position (``L == 1``: a batch of 1, a decoding step) the tile's loops of
positions run once; for other counts below a tile, each position is clamped to the last
one::

    for p0 in T.serial((L + 12) // 13):       # before
        with T.allocate_buffer((13, 16), "float32", scope="local") as acc:
            for r, p1 in T.grid(64, 13):
                if p0 * 13 + p1 < L:
                    acc[p1, 0:16] += X[p0 * 13 + p1, r] * ...
            for p1 in T.serial(13):
                if p0 * 13 + p1 < L:
                    Y[p0 * 13 + p1, 0:16] = acc[p1, 0:16]
    if L >= 13:                                 # after
        for p0 in T.serial((L + 12) // 13):
            start = T.min(p0 * 13, L - 13)
            with T.allocate_buffer((13, 16), "float32", scope="local") as acc:
                for r, p1 in T.grid(64, 13):
                    acc[p1, 0:16] += X[start + p1, r] * ...
                for p1 in T.serial(13):
                    Y[start + p1, 0:16] = acc[p1, 0:16]
    elif L == 1:                                # the loops over p1 cut to p1 = 0
        for p0 in T.serial((L + 12) // 13):
            ...  X[p1, r] ... Y[p1, 0:16] ...
    else:                                       # its unrolled loops rolled: rarely run
        for p0 in T.serial((L + 12) // 13):
            ...  X[T.min(p0 * 13 + p1, L - 1), r] ... Y[T.min(p0 * 13 + p1, L - 1), 0:16] ...

(A fully connected layer over a symbolic batch, 1024 -> 1000 at batch 1: 0.11 ms with
its 8 rows clamped to the one, rolled; 0.073 with one row, as the static batch's 0.069.)

Inside an `if` that already implies ``L >= 13`` (a conv's version for wide rows,
`width_versions`) only the first version is made.  A constant length that no tile
divides (ViT's 197 tokens in 8-row tiles) moves its last tile back the same way, with
no second version; only its own conjuncts of the guards go, so a tile guarded in rows
and columns loses the rows' at the loop of row tiles and the columns' at the loop of
column tiles::

    for i0 in T.parallel(25):                 # before
        for j0 in T.serial(7):
            ...  if i0 * 8 + i1 < 197 and j0 * 32 + j1 < 197: ...
    for i0 in T.parallel(25):                 # after
        i0_start = T.min(i0 * 8, 189)
        for j0 in T.serial(7):
            j0_start = T.min(j0 * 32, 165)
            ...  (no guard) ...

(ViT's attention scores, 6 x 197 x 64 x 197 over a symbolic batch: 0.27 ms computed in
whole vectors with masked lanes -> 0.11.)

(ResNet-50 over a symbolic image size: the guarded copy of each conv's unrolled tile
had doubled its code, and its last tile ran a branch per FMA; clamping every tile's
positions instead ran 2.5-5% slower than moving the last tile back, the clamped
positions no longer at constant offsets.)

A loop whose body is a guard on its own variable (``for j in range(E): if j < n: S``,
a padded copy computed over whole tiles of a symbolic width) first ends where the guard
does (``for j in range(min(E, n)): S``): one loop, vectorized whatever the width.

A guard qualifies when it is an `if` without `else` whose condition is a comparison
(or a conjunction of comparisons) of index expressions, and one side depends on loops
inside the statement only through a range the analyzer bounds.  The versions are made
at the outermost statement that holds such guards and no `Allocate` (an allocation is
never duplicated: the check goes inside it), and whose guards' bounds use no variable
defined inside it.  Run after `CompactBufferAllocation` (tiles are allocated inside
their loop by then) and before `UnrollLoop`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from unity.tir.arith import Analyzer
from unity.tir.arith.key import expr_key
from unity.ir.structural import structural_equal
from unity.tir.expr import (
    LE, LT, Add, And, BufferLoad, Call, IntImm, Max, Min, Mul, PrimExpr, Range, Var, conjuncts,
)  # fmt: skip
from unity.tir.function import PrimFunc
from unity.tir.functor import (
    StmtExprMutator, StmtExprVisitor, post_order_nodes, substitute, uses_var,
)  # fmt: skip
from unity.tir.op import prefetch_op
from unity.tir.stmt import (
    Allocate, BufferStore, Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt,
)  # fmt: skip
from unity.tir.transform._base import PrimFuncPass, is_const_int, with_body
from unity.tir.transform._tile_range import (
    TileScan, uses_any, whole_range,
)  # fmt: skip
from unity.tir.transform.unroll_loop import copy_with_fresh_vars

__all__ = ["HoistGuards"]


@dataclass(frozen=True)
class HoistGuards(PrimFuncPass):
    """Run a guarded tile in a guard-free version when its bounds hold for the whole tile.

    Example:
        >>> from unity.script import tir as T
        >>> @T.prim_func
        ... def f(a: T.handle, n: T.int32):
        ...     A = T.match_buffer(a, (n,), "float32")
        ...     for i0 in T.parallel((n + 3) // 4):
        ...         for i1 in T.serial(4):
        ...             if i0 * 4 + i1 < n:
        ...                 A[i0 * 4 + i1] = A[i0 * 4 + i1] + T.float32(1)
        >>> "if i0 * 4 + 3 < n" in HoistGuards().transform_function(f).script()
        True
        >>> @T.prim_func
        ... def g(a: T.handle, n: T.int32):
        ...     A = T.match_buffer(a, (n,), "float32")
        ...     for i0 in T.parallel((n + 3) // 4):
        ...         for i1 in T.serial(4):
        ...             if i0 * 4 + i1 < n:
        ...                 A[i0 * 4 + i1] = T.float32(1)
        >>> script = HoistGuards().transform_function(g).script()
        >>> "i0_start: T.int32 = T.min(i0 * 4, n - 4)" in script, "A[i0_start + i1] = T.float32(1.0)" in script
        (True, True)
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> HoistGuards().transform_function(func) is func  # no guards  # doctest: +SKIP
            True
        """
        return with_body(func, _Hoister().visit_stmt(_Shortener().visit_stmt(func.body)))


class _Shortener(StmtExprMutator):
    """Each loop ending where a guard on its own variable ends it (``for j in range(E):
    if j < n and c: S`` -> ``for j in range(min(E, n)): if c: S``)."""

    def __init__(self) -> None:
        super().__init__()
        self.analyzer = Analyzer()

    def visit_for_(self, loop: For) -> Stmt:
        loop = self._mutate_fields(loop)
        body = loop.body
        if loop.kind not in (ForKind.SERIAL, ForKind.VECTORIZED, ForKind.PARALLEL):
            return loop
        if not isinstance(body, IfThenElse) or body.else_case is not None:
            return loop
        ends: list[PrimExpr] = []
        rest: list[PrimExpr] = []
        for cond in conjuncts(body.condition):
            own = isinstance(cond, LT) and cond.a is loop.loop_var
            if own and not uses_var(cond.b, loop.loop_var):
                ends.append(cond.b)  # type: ignore[attr-defined]  # an LT
            else:
                rest.append(cond)
        if not ends:
            return loop
        end = functools.reduce(Min, [loop.min + loop.extent, *ends])
        extent = self.analyzer.simplify(Max(end - loop.min, IntImm(loop.min.dtype, 0)))
        inner = body.then_case if not rest else body.replace(condition=functools.reduce(And, rest))
        return loop.replace(extent=extent, body=inner)


class _Hoister(StmtExprMutator):
    """Version the body of each loop (and allocation) that holds qualifying guards."""

    def __init__(self) -> None:
        super().__init__()
        self.analyzer = Analyzer()

    def visit_for_(self, loop: For) -> Stmt:
        self.analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
        whole = self._whole_tiles(loop)
        if whole is not None:
            return whole
        ragged = _ragged_tiles(loop)
        if ragged is not None:
            return self.visit_stmt(ragged)  # then the tiles of the loops inside
        split = self._split_tiles(loop)
        if split is not None:
            return split
        body = self._version(loop.body)
        return self._mutate_fields(loop) if body is None else loop.replace(body=body)

    def visit_if_then_else_(self, stmt: IfThenElse) -> Stmt:
        with self.analyzer.constraint_scope(stmt.condition):  # a version's own test
            then_case = self.visit_stmt(stmt.then_case)
        else_case = None if stmt.else_case is None else self.visit_stmt(stmt.else_case)
        return stmt.replace(then_case=then_case, else_case=else_case)

    def visit_allocate_(self, alloc: Allocate) -> Stmt:
        body = self._version(alloc.body)
        return self._mutate_fields(alloc) if body is None else alloc.replace(body=body)

    def _version(self, stmt: Stmt) -> Stmt | None:
        """`if all_in_bounds: fast else: stmt`, or None (then the caller goes inside)."""
        scan = _Scan()
        scan.visit_stmt(stmt)
        if scan.allocates or not scan.guards:
            return None
        checks: list[PrimExpr] = []
        for guard, domains in scan.guards:
            if _partial_tile_inside(guard.condition, domains):
                return None  # the loop of tiles inside is split instead (`_split_tiles`)
            check = whole_range(self.analyzer, guard.condition, domains, scan.defined)
            if check is None:
                return None  # a guard that cannot be decided for the whole tile: go inside
            checks.append(check)
        condition = functools.reduce(And, checks)
        return IfThenElse(condition, _guard_free(stmt, scan), stmt, span=stmt.span)

    def _whole_tiles(self, loop: For) -> Stmt | None:
        """A loop over the tiles of a symbolic length `L` (``v * t + k < L`` guards, `k` a
        loop of `t` inside) whose positions may be computed twice, without its guards:
        for ``L >= t`` its tiles start at ``min(v * t, L - t)`` (the last moved back),
        else each position is clamped, ``min(v * t + k, L - 1)``; None when `loop` is not
        such a loop."""
        if loop.kind not in (ForKind.SERIAL, ForKind.PARALLEL) or not is_const_int(loop.min, 0):
            return None
        if isinstance(loop.extent, IntImm):
            return None  # constant lengths: the last tile's bounds are constants too
        scan = _Scan()
        scan.visit_stmt(loop.body)
        tile = self._tile_of_guards(scan, loop.loop_var)
        if tile is None or not _recomputable(loop.body, loop.loop_var):
            return None
        size, limit, inner = tile
        covered = self.analyzer.can_prove_equal(loop.extent, (limit + (size - 1)) // size)
        if not (covered or self.analyzer.can_prove(loop.extent * size >= limit)):
            return None  # fewer tiles than the length: clamping would add positions
        v = loop.loop_var
        free = _DropGuards({id(g) for g, _ in scan.guards}).visit_stmt(loop.body)
        versions = _moved_back(loop, free, size.value, limit, inner)
        if versions is None:
            return None
        whole, clamped = versions
        if self.analyzer.can_prove(limit >= size):  # inside a version for long rows
            return whole
        # one position (a batch of 1, a decoding step): the tile's loops of positions
        # run once, unrolled (all `size` clamped to the one, rolled, ran 1.4x slower)
        first = _TileStart(v, size.value, IntImm(v.dtype, 0)).visit_stmt(free)
        one = copy_with_fresh_vars(_OnePosition(inner).visit_stmt(first), {})
        one = loop.replace(loop_var=Var(v.name, v.dtype), body=one)
        short = IfThenElse(limit == 1, one, _rolled(clamped), span=loop.span)
        return IfThenElse(limit >= size, whole, short, span=loop.span)

    def _split_tiles(self, loop: For) -> Stmt | None:
        """A serial loop over the tiles of a symbolic length, whose guards hold for every
        tile but the last ones, as two loops: the whole tiles without guards, then the
        rest with them; None when `loop` is not such a loop."""
        if loop.kind is not ForKind.SERIAL or isinstance(loop.extent, IntImm):
            return None
        scan = _Scan()
        scan.visit_stmt(loop.body)
        if scan.allocates or not scan.guards:
            return None
        here = Range(loop.min, loop.extent)
        end = loop.min + loop.extent
        lasts: list[PrimExpr] = []
        for guard, domains in scan.guards:
            if not _partial_tile_inside(guard.condition, {**domains, loop.loop_var: here}):
                return None
            check = whole_range(self.analyzer, guard.condition, domains, scan.defined)
            last = None if check is None else self._last_whole_tile(check, loop.loop_var)
            if last is None:
                return None
            lasts.append(last)
        whole = self.analyzer.simplify(Max(Min(functools.reduce(Min, lasts), end), loop.min))
        rest = Var(loop.loop_var.name, loop.loop_var.dtype)
        return SeqStmt((
            loop.replace(extent=self.analyzer.simplify(whole - loop.min),
                         body=_guard_free(loop.body, scan)),
            loop.replace(loop_var=rest, min=whole, extent=self.analyzer.simplify(end - whole),
                         body=substitute(loop.body, {loop.loop_var: rest})),
        ))  # fmt: skip

    def _last_whole_tile(self, check: PrimExpr, k: Var) -> PrimExpr | None:
        """The end of the range of `k` from 0 where `check` (``a * k + b < c`` or ``<=``,
        `a` a positive constant) holds, or None for another form."""
        if not isinstance(check, LT | LE):
            return None
        d = check.a - check.b
        at = [self.analyzer.simplify(substitute(d, {k: IntImm(k.dtype, v)})) for v in (0, 1, 2)]
        step = self.analyzer.simplify(at[1] - at[0])
        if not isinstance(step, IntImm) or step.value <= 0:
            return None
        if not structural_equal(self.analyzer.simplify(at[2] - at[1]), step):
            return None  # not linear in k
        if isinstance(check, LT):  # step * k + d0 < 0  <=>  k < ceil(-d0 / step)
            return self.analyzer.simplify((step - 1 - at[0]) // step)
        return self.analyzer.simplify((0 - at[0]) // step + 1)

    def _tile_of_guards(self, scan: _Scan, v: Var) -> tuple[IntImm, PrimExpr, set[Var]] | None:
        """`(t, L, ks)` when every guard `scan` found is ``v * t + k < L`` (or ``k + v *
        t``), `k` (one of `ks`) a loop inside of range ``[0, t)``, with the same `t` and `L`
        (free of the loops inside), and-ed with conditions that hold over the loops inside
        (``n < batch`` of a write-back's batch loop); else None.  (A pointwise conv over a
        symbolic image, its batch loop inside the pixel tiles, had stayed versioned, its
        last tile guarded: at 7x7, a quarter of the tiles.  Sapphire Rapids, kernels of the
        models over a symbolic size, with prefetches also allowed (`_harmless`): MobileNet
        v3-small 1.01 -> 0.96 ms, v2 2.90 -> 2.75, EfficientNet-B0 5.05 -> 4.64, GoogLeNet
        8.04 -> 7.58, DenseNet-121 20.6 -> 19.8.)"""
        found: set[tuple[int, object]] = set()
        inner: set[Var] = set()
        limit: PrimExpr | None = None
        for guard, domains in scan.guards:
            for cond in conjuncts(guard.condition):
                if not uses_var(cond, v) and self._holds(cond, domains, scan.defined):
                    continue
                tile = _tile_bound(cond, v, domains)
                if tile is None or uses_var(tile[1], v) or uses_any(tile[1], scan.defined):
                    return None
                size, _, k = tile
                # one length however written (a write-back over W // 8, its reads over
                # (W // 4) // 2)
                limit = self.analyzer.simplify(cond.b)
                found.add((size, expr_key(limit)))
                inner.add(k)
        if len(found) != 1 or limit is None:
            return None
        size = next(iter(found))[0]
        return (IntImm(v.dtype, size), limit, inner) if size > 1 else None

    def _holds(self, cond: PrimExpr, domains: dict[Var, Range], defined: set[Var]) -> bool:
        """Whether `cond` holds for every iteration of the loops in `domains`."""
        check = whole_range(self.analyzer, cond, domains, defined)
        return check is not None and self.analyzer.can_prove(check)


def _ragged_tiles(loop: For) -> For | None:
    """A loop over the `E` tiles of a constant length `L` that no tile size `t` divides
    (``v * t + k < L`` conjuncts, `k` a loop of `t` inside), whose positions may be
    computed twice, with its last tile moved back to end at `L`: each tile starts at
    ``min(v * t, L - t)``, and those conjuncts go (the other conjuncts of the guards
    stay, for the loops inside).  None when `loop` is not such a loop."""
    if loop.kind not in (ForKind.SERIAL, ForKind.PARALLEL) or not is_const_int(loop.min, 0):
        return None
    if not isinstance(loop.extent, IntImm) or not _recomputable(loop.body, loop.loop_var):
        return None
    v = loop.loop_var
    scan = _Scan()
    scan.visit_stmt(loop.body)
    own: dict[int, list[PrimExpr]] = {}  # id(guard) -> its conjuncts that bound v's tile
    found: set[tuple[int, int]] = set()
    inner: set[Var] = set()
    for guard, domains in scan.guards:
        for cond in conjuncts(guard.condition):
            tile = _tile_bound(cond, v, domains)
            if tile is None or not isinstance(tile[1], IntImm):
                if uses_var(cond, v):
                    return None
                continue
            own.setdefault(id(guard), []).append(cond)
            found.add((tile[0], tile[1].value))
            inner.add(tile[2])
    if len(found) != 1:
        return None
    size, limit = next(iter(found))
    if limit % size == 0 or limit < size or loop.extent.value != -(-limit // size):
        return None
    free = _DropConjuncts(own).visit_stmt(loop.body)
    versions = _moved_back(loop, free, size, IntImm(v.dtype, limit), inner)
    return None if versions is None else versions[0]


def _moved_back(
    loop: For, free: Stmt, size: int, limit: PrimExpr, inner: set[Var]
) -> tuple[For, For] | None:
    """`loop` over tiles of `size` positions of a length `limit` with `free` (its body
    without the tile's guards) as its body, its last tile moved back to end at `limit`
    (each tile starting at ``min(v * size, limit - size)``), and with each position
    clamped instead (``min(v * size + k, limit - 1)``, `k` in `inner`); None when `v`
    occurs other than in ``v * size + k``."""
    v = loop.loop_var
    clamp = _Clamp(v, size, inner, _minus(limit, 1))
    clamped = loop.replace(body=clamp.visit_stmt(free))
    if not _clamped_only(clamped.body, clamp.made, v, inner):
        return None
    start = Var(f"{v.name}_start", v.dtype)
    # `_clamped_only` found `v` only in ``v * t + k``: with ``v * t`` replaced, it is gone
    shifted = _TileStart(v, size, start).visit_stmt(free)
    shifted = copy_with_fresh_vars(shifted, {})  # the clamped version keeps the originals
    fresh = Var(v.name, v.dtype)
    first = Min(fresh * IntImm(v.dtype, size), _minus(limit, size))
    return loop.replace(loop_var=fresh, body=LetStmt(start, first, shifted)), clamped


def _minus(limit: PrimExpr, n: int) -> PrimExpr:
    """``limit - n``, a constant when `limit` is one."""
    return IntImm(limit.dtype, limit.value - n) if isinstance(limit, IntImm) else limit - n


def _tile_bound(
    cond: PrimExpr, v: Var, domains: dict[Var, Range]
) -> tuple[int, PrimExpr, Var] | None:
    """`(t, L, k)` when `cond` is ``v * t + k < L`` (or ``k + v * t``), `k` a loop of range
    ``[0, t)`` among `domains`; else None."""
    if not (isinstance(cond, LT) and isinstance(cond.a, Add)):
        return None
    for tile, k in ((cond.a.a, cond.a.b), (cond.a.b, cond.a.a)):
        if not (isinstance(tile, Mul) and tile.a is v and isinstance(tile.b, IntImm)):
            continue
        if isinstance(k, Var) and k in domains:
            rng = domains[k]
            if is_const_int(rng.min, 0) and is_const_int(rng.extent, tile.b.value):
                return tile.b.value, cond.b, k
    return None


class _DropConjuncts(StmtExprMutator):
    """Remove the conjuncts `drop[id(guard)]` from each guard's condition (the guard goes
    when none is left)."""

    def __init__(self, drop: dict[int, list[PrimExpr]]) -> None:
        super().__init__()
        self.drop = drop

    def visit_if_then_else_(self, stmt: IfThenElse) -> Stmt:
        gone = self.drop.get(id(stmt))
        if gone is None:
            return self._mutate_fields(stmt)
        then_case = self.visit_stmt(stmt.then_case)
        kept = [c for c in conjuncts(stmt.condition) if not any(c is g for g in gone)]
        if not kept:
            return then_case
        return stmt.replace(condition=functools.reduce(And, kept), then_case=then_case)


def _guard_free(stmt: Stmt, scan: _Scan) -> Stmt:
    """A copy of `stmt` without the guards `scan` found, its loop variables its own."""
    return copy_with_fresh_vars(_DropGuards({id(g) for g, _ in scan.guards}).visit_stmt(stmt), {})


def _recomputable(body: Stmt, v: Var) -> bool:
    """Whether running an iteration of `body` twice, or one of its positions in two
    iterations, leaves what a single run leaves: every store is to a buffer allocated
    inside it, or to one it never reads at an index that depends on `v`; no calls but
    prefetches (hints, with no effect on memory)."""
    nodes = post_order_nodes(body)
    if any(isinstance(n, Evaluate) and not _harmless(n.value) for n in nodes):
        return False
    private = {n.buffer.data for n in nodes if isinstance(n, Allocate)}
    read = {n.buffer.data for n in nodes if isinstance(n, BufferLoad)}
    stores = [n for n in nodes if isinstance(n, BufferStore) and n.buffer.data not in private]
    return all(n.buffer.data not in read and any(uses_var(i, v) for i in n.indices) for n in stores)


def _harmless(value: PrimExpr) -> bool:
    """Whether evaluating `value` twice changes nothing: a constant, or a prefetch."""
    return isinstance(value, IntImm) or (isinstance(value, Call) and value.op is prefetch_op)


class _Clamp(StmtExprMutator):
    """Replace ``v * size + k`` (`k` in `inner`) with ``min(v * size + k, last)``; the ids
    of the `Min` nodes made are in `made`."""

    def __init__(self, v: Var, size: int, inner: set[Var], last: PrimExpr) -> None:
        super().__init__()
        self.v, self.size, self.inner, self.last = v, size, inner, last
        self.made: set[int] = set()

    def visit_add_(self, e: Add) -> PrimExpr:
        for tile, k in ((e.a, e.b), (e.b, e.a)):
            if (isinstance(tile, Mul) and tile.a is self.v and isinstance(tile.b, IntImm)
                    and tile.b.value == self.size and isinstance(k, Var) and k in self.inner):  # fmt: skip
                clamped = Min(e, self.last)
                self.made.add(id(clamped))
                return clamped
        return self._mutate_fields(e)


class _TileStart(StmtExprMutator):
    """Replace ``v * size`` with `start`."""

    def __init__(self, v: Var, size: int, start: PrimExpr) -> None:
        super().__init__()
        self.v, self.size, self.start = v, size, start

    def visit_mul_(self, e: Mul) -> PrimExpr:
        if e.a is self.v and isinstance(e.b, IntImm) and e.b.value == self.size:
            return self.start
        return self._mutate_fields(e)


class _OnePosition(StmtExprMutator):
    """The loops over `inner` (a tile's positions) cut to their first iteration."""

    def __init__(self, inner: set[Var]) -> None:
        super().__init__()
        self.inner = inner

    def visit_for_(self, loop: For) -> Stmt:
        loop = self._mutate_fields(loop)
        if loop.loop_var in self.inner:
            return loop.replace(extent=IntImm(loop.extent.dtype, 1))
        return loop


class _Rolled(StmtExprMutator):
    """Unrolled loops as serial ones."""

    def visit_for_(self, loop: For) -> Stmt:
        loop = self._mutate_fields(loop)
        return loop.replace(kind=ForKind.SERIAL) if loop.kind is ForKind.UNROLLED else loop


def _rolled(stmt: Stmt) -> Stmt:
    """`stmt` with its unrolled loops serial (a version for short lengths, kept small)."""
    return _Rolled().visit_stmt(stmt)


def _clamped_only(body: Stmt, clamps: set[int], v: Var, inner: set[Var]) -> bool:
    """Whether `v` occurs in `body` only inside the `clamps`, buffers allocated inside
    are indexed without them (two positions would share a slot), and the others without
    the inner loops `inner` but inside them (the positions clamped are the ones run)."""
    if v in _unclamped_vars(body, clamps):
        return False
    nodes = post_order_nodes(body)
    private = {n.buffer.data for n in nodes if isinstance(n, Allocate)}
    for node in nodes:
        if not isinstance(node, BufferLoad | BufferStore):
            continue
        if node.buffer.data in private:
            if any(id(n) in clamps for i in node.indices for n in post_order_nodes(i)):
                return False
        elif any(_unclamped_vars(i, clamps) & inner for i in node.indices):
            return False
    return True


def _unclamped_vars(node: Stmt | PrimExpr, clamps: set[int]) -> set[Var]:
    """The variables under `node` outside the `Min` nodes whose ids are in `clamps`."""
    found: set[Var] = set()

    class Walk(StmtExprVisitor):
        def visit_min_(self, e: Min) -> None:
            if id(e) not in clamps:
                self._visit_other(e)

        def visit_var_(self, e: Var) -> None:
            found.add(e)

    if isinstance(node, Stmt):
        Walk().visit_stmt(node)
    else:
        Walk().visit_expr(node)
    return found


def _partial_tile_inside(cond: PrimExpr, domains: dict[Var, Range]) -> bool:
    """Whether `cond` tests a tile of a loop of symbolic extent split among `domains`
    (``k0 * 8 + k1 < s``, `k0` and `k1` both loops inside): versioned around both, the
    check would hold only when every tile is whole (``s % 8 == 0``: a softmax row of 505
    ran every tile guarded, 1.6x slower); the loop over `k0` is split instead."""
    loops = [n for n in post_order_nodes(cond) if isinstance(n, Var) and n in domains]
    symbolic = any(not isinstance(domains[v].extent, IntImm) for v in loops)
    return symbolic and any(isinstance(domains[v].extent, IntImm) for v in loops)


class _Scan(TileScan):
    """The guards under a statement, each with the loop domains between it and the root."""

    def __init__(self) -> None:
        super().__init__()
        self.guards: list[tuple[IfThenElse, dict[Var, Range]]] = []

    def visit_if_then_else_(self, stmt: IfThenElse) -> None:
        if stmt.else_case is None:
            self.guards.append((stmt, dict(self.domains)))
        self.visit_stmt(stmt.then_case)
        if stmt.else_case is not None:
            self.visit_stmt(stmt.else_case)


class _DropGuards(StmtExprMutator):
    """Replace the guards with ids in `ids` by their bodies."""

    def __init__(self, ids: set[int]) -> None:
        super().__init__()
        self.ids = ids

    def visit_if_then_else_(self, stmt: IfThenElse) -> Stmt:
        if id(stmt) in self.ids:
            return self.visit_stmt(stmt.then_case)
        return self._mutate_fields(stmt)
