"""Insert `__syncthreads()` where shared memory written by some threads is then read by others.

Before (a kernel after ``LowerStorageScopes``)::

    for k0 in T.serial(4):
        A_shared[threadIdx_x] = A[k0 * 16 + threadIdx_x]
        C_local[0] = C_local[0] + A_shared[15 - threadIdx_x]

After ``InsertSyncthreads()``::

    for k0 in T.serial(4):
        T.cuda_syncthreads()          # the previous iteration's reads come first
        A_shared[threadIdx_x] = A[k0 * 16 + threadIdx_x]
        T.cuda_syncthreads()          # every write lands before anyone reads
        C_local[0] = C_local[0] + A_shared[15 - threadIdx_x]

The planner walks the SIMT body of each kernel tracking which shared buffers were read
and written since the last barrier.  A statement that reads a buffer written since then
(read after write), or writes one read since then (write after read), gets a barrier in
front of it.  Two writes need none: threads filling a tile cooperatively write disjoint
elements (two threads writing one element is a race no barrier placement can fix in
general; the GPU emulator reports it).  Loops are walked until the state at the top of the body
(entry merged with the end of the previous iteration) stops growing, so a loop-carried
dependence puts the barrier at the top of the body.  A barrier is only ever placed where
every thread of the block gets to it: never inside a loop whose bounds or an `if` whose
condition depend on the thread index (such statements count as one access each).
Buffers are compared as a whole (conservative: a thread that only rereads what it wrote
itself still gets a barrier).
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.node import Node
from unity.tir.expr import BufferLoad, Call, PrimExpr, Var
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, StmtExprVisitor, post_order_visit
from unity.tir.stmt import Allocate, BufferStore, For, IfThenElse, LetStmt, SeqStmt, Stmt, seq
from unity.tir.transform._base import PrimFuncPass, with_body
from unity.tir.transform.gpu.intrinsics import is_syncthreads, syncthreads
from unity.tir.transform.gpu.lower_thread_binding_gpu import is_launch_loop, launch_nest

_State = tuple[frozenset[Var], frozenset[Var]]
"""Shared buffers (their data vars) read and written since the last barrier."""

_EMPTY: _State = (frozenset(), frozenset())


@dataclass(frozen=True)
class InsertSyncthreads(PrimFuncPass):
    """Put a block-wide barrier between cross-thread shared-memory writes and reads.

    Example:
        >>> from unity import te
        >>> from unity.ir.transform import Sequential
        >>> from unity.schedule.default_gpu import apply_default_gpu_schedules
        >>> from unity.tir.transform.gpu.gpu_pipeline import gpu_lowering_passes
        >>> A = te.placeholder((4, 256), name="A")
        >>> k = te.reduce_axis((0, 256), name="k")
        >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
        >>> mod = IRModule({"main": te.create_prim_func([A, B])})
        >>> mod = apply_default_gpu_schedules(mod)
        >>> passes = gpu_lowering_passes()
        >>> n = [type(p) for p in passes].index(InsertSyncthreads)
        >>> before = Sequential(passes[:n])(mod)  # the passes that run first
        >>> after = InsertSyncthreads()(before)
        >>> "syncthreads" in before.script(), "syncthreads" in after.script()
        (False, True)
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when it needs no barrier).

        Example:
            >>> from unity import tir
            >>> f = tir.PrimFunc([], tir.Evaluate(tir.const(0)))
            >>> InsertSyncthreads().transform_function(f) is f  # nothing to do
            True
        """
        return with_body(func, _Kernels().visit_stmt(func.body))


class _Kernels(StmtExprMutator):
    def visit_for_(self, loop: For) -> Stmt:
        if not is_launch_loop(loop):
            return self._mutate_fields(loop)
        loops, body = launch_nest(loop)
        varying = {lp.loop_var for lp in loops if (lp.thread_binding or "").startswith("thread")}
        planner = _Planner(varying)
        new_body, _ = planner.visit(body, _EMPTY)
        if new_body is body:
            return loop
        for lp in reversed(loops):
            new_body = lp.replace(body=new_body)
        return new_body


def _merge(a: _State, b: _State) -> _State:
    return (a[0] | b[0], a[1] | b[1])


class _Planner:
    """Walk the SIMT body with the barrier state; return the new statement and exit state."""

    def __init__(self, varying: set[Var]) -> None:
        self.varying = varying

    def visit(self, stmt: Stmt, state: _State) -> tuple[Stmt, _State]:
        if is_syncthreads(stmt):
            return stmt, _EMPTY
        if isinstance(stmt, SeqStmt):
            return self._seq(stmt, state)
        if isinstance(stmt, For) and self._uniform(stmt.min, stmt.extent):
            return self._loop(stmt, state)
        if isinstance(stmt, IfThenElse) and self._uniform(stmt.condition):
            return self._branch(stmt, state)
        if isinstance(stmt, Allocate):
            body, state = self.visit(stmt.body, state)
            return stmt.replace(body=body), state
        if isinstance(stmt, LetStmt):
            if not self._uniform(stmt.value):
                self.varying.add(stmt.var)
            body, state = self.visit(stmt.body, state)
            return stmt.replace(body=body), state
        return self._leaf(stmt, state)

    def _leaf(self, stmt: Stmt, state: _State) -> tuple[Stmt, _State]:
        reads, writes = _shared_accesses(stmt)
        if not reads and not writes:
            return stmt, state
        before_r, before_w = state
        if (reads & before_w) or (writes & before_r):
            return seq(syncthreads(), stmt), (reads, writes)
        return stmt, (before_r | reads, before_w | writes)

    def _seq(self, stmt: SeqStmt, state: _State) -> tuple[Stmt, _State]:
        items: list[Stmt] = []
        for item in stmt.seq:
            new, state = self.visit(item, state)
            items.append(new)
        if all(a is b for a, b in zip(items, stmt.seq)):
            return stmt, state
        return seq(*items), state

    def _loop(self, loop: For, state: _State) -> tuple[Stmt, _State]:
        reads, writes = _shared_accesses(loop.body)
        if (reads & state[1]) or (writes & state[0]):  # barrier once, before the loop
            new, end = self._loop(loop, _EMPTY)
            return seq(syncthreads(), new), end
        entry = state
        while True:  # sets only grow, so this ends
            body, end = self.visit(loop.body, entry)
            grown = _merge(entry, end)
            if grown == entry:
                break
            entry = grown
        return loop.replace(body=body), _merge(state, end)

    def _branch(self, node: IfThenElse, state: _State) -> tuple[Stmt, _State]:
        then, s1 = self.visit(node.then_case, state)
        if node.else_case is None:
            return node.replace(then_case=then), _merge(state, s1)
        other, s2 = self.visit(node.else_case, state)
        return node.replace(then_case=then, else_case=other), _merge(s1, s2)

    def _uniform(self, *exprs: PrimExpr) -> bool:
        hits: list[Node] = []
        for e in exprs:
            post_order_visit(e, lambda n: hits.append(n) if n in self.varying else None)
        return not hits


def _shared_accesses(stmt: Stmt) -> tuple[frozenset[Var], frozenset[Var]]:
    reads: set[Var] = set()
    writes: set[Var] = set()

    class _Access(StmtExprVisitor):
        def visit_buffer_load_(self, load: BufferLoad) -> None:
            if load.buffer.scope.startswith("shared"):
                reads.add(load.buffer.data)
            self.visit_prim_expr_(load)

        def visit_buffer_store_(self, store: BufferStore) -> None:
            if store.buffer.scope.startswith("shared"):
                writes.add(store.buffer.data)
            self.visit_stmt_(store)

        def visit_call_(self, call: Call) -> None:
            written = call.op.get_attr("writes", ())  # a tensor-core store's tile
            for k, arg in enumerate(call.args):
                if k in written and isinstance(arg, BufferLoad):
                    if arg.buffer.scope.startswith("shared"):
                        writes.add(arg.buffer.data)
                    for index in arg.indices:
                        self.visit_expr(index)
                else:
                    self.visit_expr(arg)

    _Access().visit_stmt(stmt)
    return frozenset(reads), frozenset(writes)
