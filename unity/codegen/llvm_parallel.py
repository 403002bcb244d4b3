"""Parallel loops: outline the body and launch it on libgomp's thread team.

A `For(kind=PARALLEL)` becomes, in the calling function::

    closure = {captured values..., &status, &next_chunk, min, extent}
    GOMP_parallel(name_parN, &closure, @__unity_num_threads, 0)
    if status != 0: return status

and `void name_parN(ptr closure)`, run by every thread of the team, takes chunks of
iterations from the shared counter `next_chunk` (see `ParallelCodegen._outline`).
Why libgomp: see `unity.runtime.thread_pool`.

Example:
    >>> lib = unity.build(func_with_a_parallel_loop)  # doctest: +SKIP
    >>> "@GOMP_parallel" in lib.get_source("ll")      # doctest: +SKIP
    True
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from llvmlite import ir

from unity.codegen.llvm_expr import I32, I64, PTR, ExprCodegen
from unity.ir import dtype as dt
from unity.tir import expr as E
from unity.tir import stmt as S
from unity.tir.buffer import Buffer
from unity.tir.expr import Var
from unity.tir.functor import post_order_nodes, post_order_visit


class ParallelCodegen(ExprCodegen):
    """The parallel-loop half of `CodeGenLLVM` (which provides the hooks declared here).

    Example:
        >>> class CodeGenLLVM(ParallelCodegen): ...  # doctest: +SKIP
    """

    state: Any
    _parallel_count: int
    _num_threads: ir.GlobalVariable
    _enter: Callable[[ir.Function, ir.Value | None], None]
    _loop: Callable[[S.For, ir.Value, ir.Value], None]
    _fail: Callable[[ir.Value], None]
    _slot: Callable[[ir.Type, str], ir.Value]

    def _parallel_for(self, stmt: S.For) -> None:
        captured = [v for v in free_vars(stmt) if v in self.env]
        values = [self.env[v] for v in captured]
        lo, extent = self.emit(stmt.min), self.emit(stmt.extent)
        status = self._slot(I32, "par.status")
        counter = self._slot(I64, "par.next")
        closure_type = ir.LiteralStructType([v.type for v in values] + [PTR, PTR, lo.type, lo.type])
        closure = self._slot(closure_type, "par.closure")
        self.builder.store(ir.Constant(I64, 0), counter)
        for i, value in enumerate([*values, status, counter, lo, extent]):
            self.builder.store(
                value,
                self.builder.gep(
                    closure, [ir.Constant(I32, 0), ir.Constant(I32, i)], source_etype=closure_type
                ),
            )
        self.builder.store(ir.Constant(I32, 0), status)
        work = nest_work(stmt, set(self.env))
        small = None  # a constant size: the schedule chose for it
        if work is not None and not isinstance(work, E.IntImm):  # decided at each call
            limit = ir.Constant(I64, PARALLEL_MIN_WORK)
            small = self.builder.icmp_signed("<", self.emit(work), limit)
        launcher, body = self._outline(stmt, captured, values, closure_type)
        if small is None:
            self._launch(launcher, closure)
        else:  # a small nest runs on this thread: no team wake-up, no barrier
            with self.builder.if_else(small) as (serial, parallel):
                with serial:
                    self.builder.call(body, [lo, self.builder.add(lo, extent), *values, status])
                with parallel:
                    self._launch(launcher, closure)
        code = self.builder.load(status, typ=I32)
        ok, fail = (
            self.builder.append_basic_block("par.ok"),
            self.builder.append_basic_block("par.fail"),
        )
        self.builder.cbranch(self.builder.icmp_unsigned("==", code, ir.Constant(I32, 0)), ok, fail)
        self.builder.position_at_end(fail)
        self._fail(code)
        self.builder.position_at_end(ok)

    def _launch(self, launcher: ir.Function, closure: ir.Value) -> None:
        """Run `launcher(closure)` on the thread team."""
        gomp = self.declare("GOMP_parallel", ir.VoidType(), [PTR, PTR, I32, I32])
        threads = self.builder.load(self._num_threads, typ=I32)
        self.builder.call(gomp, [launcher, closure, threads, ir.Constant(I32, 0)])

    def _outline(
        self,
        stmt: S.For,
        captured: list[Var],
        values: list[ir.Value],
        closure_type: ir.LiteralStructType,
    ) -> tuple[ir.Function, ir.Function]:
        """Emit `void name_parN(ptr closure)`, run by every thread of the team, and return
        it with the loop function it calls on chunks.

        Each thread takes chunks of `grain = max(1, extent / (4 * threads))` iterations
        from a shared counter (an atomic add) until none is left or an assert failed:
        when another job holds a core (machines here are shared), the other threads do
        its chunks instead of waiting for a fixed share.  The loop itself goes in
        `name_parN_body(begin, end, captured..., status)` whose pointer arguments are
        `noalias` (LLVM keeps that as scoped alias metadata when it inlines the body)."""
        saved = (self.builder, self.state, self.env)
        self._parallel_count += 1
        name = f"__unity_{self.state.function.name}_par{self._parallel_count}"
        index_type = closure_type.elements[-1]
        body_type = ir.FunctionType(
            ir.VoidType(), [index_type, index_type, *closure_type.elements[:-3]]
        )
        body = ir.Function(self.module, body_type, f"{name}_body")
        body.linkage = "internal"
        for arg in body.args[2:]:
            if arg.type == PTR:
                arg.add_attribute("noalias")
        self._enter(body, body.args[-1])
        self.env = dict(zip(captured, body.args[2:-1]))
        self._loop(stmt, body.args[0], body.args[1])
        if not self.builder.block.is_terminated:
            self.builder.ret_void()
        launcher = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [PTR]), name)
        launcher.linkage = "internal"
        self.builder = ir.IRBuilder(launcher.append_basic_block("entry"))
        fields = [
            self._closure_field(launcher.args[0], closure_type, i)
            for i in range(len(closure_type.elements))
        ]
        self._take_chunks(body, fields)
        self.builder, self.state, self.env = saved
        return launcher, body

    def _closure_field(
        self, closure: ir.Value, closure_type: ir.LiteralStructType, i: int
    ) -> ir.Value:
        index = [ir.Constant(I32, 0), ir.Constant(I32, i)]
        ptr = self.builder.gep(closure, index, source_etype=closure_type)
        return self.builder.load(ptr, typ=closure_type.elements[i])

    def _take_chunks(self, body: ir.Function, fields: list[ir.Value]) -> None:
        """In the launcher: run chunks of the iteration space until none is left."""
        b = self.builder
        *values, status, counter, lo, extent = fields
        threads = b.sext(b.call(self.declare("omp_get_num_threads", I32, []), []), I64)
        ext64 = b.sext(extent, I64) if extent.type != I64 else extent
        grain = b.sdiv(ext64, b.mul(threads, ir.Constant(I64, 4)))
        one = ir.Constant(I64, 1)
        grain = b.select(b.icmp_signed("<", grain, one), one, grain)
        loop, work, done = (b.append_basic_block(n) for n in ("chunk", "chunk.run", "done"))
        b.branch(loop)
        b.position_at_end(loop)
        start = b.atomic_rmw("add", counter, grain, "monotonic")
        b.cbranch(b.icmp_signed("<", start, ext64), work, done)
        b.position_at_end(work)
        stop = b.add(start, grain)
        stop = b.select(b.icmp_signed("<", stop, ext64), stop, ext64)
        if lo.type != I64:
            start, stop = b.trunc(start, lo.type), b.trunc(stop, lo.type)
        b.call(body, [b.add(lo, start), b.add(lo, stop), *values, status])
        failed = b.icmp_unsigned("!=", b.load(status, typ=I32), ir.Constant(I32, 0))
        b.cbranch(failed, done, loop)
        b.position_at_end(done)
        b.ret_void()


PARALLEL_MIN_WORK = 1 << 13
"""Iterations (stores times vector lanes) below which a parallel nest of symbolic size
runs on the calling thread, decided at each call; the same bound as the default
schedules' `parallel_min_work` for constant sizes.  Waking the team and its barrier
cost about a microsecond each time: a GPT-2 decoding step (one token, ~50 small
kernels) ran 20% faster on one thread."""


def nest_work(stmt: S.Stmt, outer: set[Var]) -> E.PrimExpr | None:
    """The iterations of the loop nest `stmt` (each store counts its vector lanes; both
    arms of a branch count), an int64 expression over the variables `outer`; None when
    an extent depends on a variable bound inside the nest, or the nest has a while loop.

    Example:
        >>> from unity import tir
        >>> n, i = tir.Var("n", "int64"), tir.Var("i", "int64")
        >>> buf = tir.decl_buffer((n,), "float32", "a")
        >>> store = tir.BufferStore(buf, tir.const(1.0, "float32"), [i])
        >>> loop = tir.For(i, 0, n, tir.ForKind.PARALLEL, store)
        >>> str(nest_work(loop, {n}))
        'n'
    """
    if isinstance(stmt, S.For):
        inner = nest_work(stmt.body, outer)
        if inner is None or not _uses_only(stmt.extent, outer):
            return None
        extent = stmt.extent
        if isinstance(extent, E.IntImm):
            return _times(E.IntImm("int64", extent.value), inner)
        return _times(extent if extent.dtype == "int64" else extent.astype("int64"), inner)
    if isinstance(stmt, S.SeqStmt | S.IfThenElse):
        parts = stmt.seq if isinstance(stmt, S.SeqStmt) else [stmt.then_case, stmt.else_case]
        works = [nest_work(p, outer) for p in parts if p is not None]
        if any(w is None for w in works):
            return None
        return functools.reduce(_plus, works)  # type: ignore[arg-type]
    if isinstance(stmt, S.While):
        return None
    if isinstance(stmt, S.BufferStore):
        return E.IntImm("int64", dt.lanes(stmt.value.dtype))
    body = getattr(stmt, "body", None)  # LetStmt, Allocate, AssertStmt, AttrStmt, ...
    return nest_work(body, outer) if isinstance(body, S.Stmt) else E.IntImm("int64", 1)


def _uses_only(expr: E.PrimExpr, outer: set[Var]) -> bool:
    return all(n in outer for n in post_order_nodes(expr) if isinstance(n, Var))


def _plus(a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return E.IntImm("int64", a.value + b.value)
    return a + b


def _times(a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return E.IntImm("int64", a.value * b.value)
    if isinstance(b, E.IntImm) and b.value == 1:
        return a
    return a * b


def free_vars(stmt: S.Stmt) -> list[Var]:
    """Variables and buffer data pointers `stmt` refers to, in first-use order.

    Example:
        >>> from unity import tir
        >>> i = tir.Var("i")
        >>> [v.name for v in free_vars(tir.Evaluate(i + 1))]
        ['i']
    """
    seen: dict[Var, None] = {}

    def add_buffer(buffer: Buffer) -> None:
        seen.setdefault(buffer.data, None)
        for dim in (
            *buffer.shape,
            *buffer.strides,
            *([buffer.elem_offset] if buffer.elem_offset else []),
        ):
            post_order_visit(dim, visit)

    def visit(node: object) -> None:
        if isinstance(node, Var):
            seen.setdefault(node, None)
        elif isinstance(node, (E.BufferLoad, S.BufferStore)):
            add_buffer(node.buffer)
        elif isinstance(node, S.Allocate):
            for dim in node.buffer.shape:
                post_order_visit(dim, visit)

    post_order_visit(stmt, visit)
    return list(seen)
