"""Place `shared` and `local` buffers inside the kernel that uses them, sized per block / thread.

Before (after ``LowerThreadBindingGPU``)::

    with T.allocate_buffer((64, 64), "float32", scope="shared") as A_shared:
        for blockIdx_x in T.thread_binding(4, thread="blockIdx.x"):
            for threadIdx_x in T.thread_binding(16, thread="threadIdx.x"):
                for k0 in T.serial(4):
                    A_shared[blockIdx_x * 16 + threadIdx_x, k0 * 16] = A[...]
                    ...

After ``LowerStorageScopes()``::

    for blockIdx_x in T.thread_binding(4, thread="blockIdx.x"):
        for threadIdx_x in T.thread_binding(16, thread="threadIdx.x"):
            for k0 in T.serial(4):
                with T.allocate_buffer((16, 1), "float32", scope="shared") as A_shared:
                    A_shared[threadIdx_x, 0] = A[...]
                    ...

A `shared` buffer is one per thread block: its size covers what every thread of the
block touches (thread indices relaxed, block indices fixed).  A `local` buffer is one
per thread (thread indices fixed).  A tensor-core fragment buffer (`wmma.*`) is one per
warp: `threadIdx.x` (the lanes, 32 of them) relaxed, `threadIdx.y/z` fixed; so is a
`shared.warp` buffer, which then gets a leading dimension of one region per warp,
indexed by the warp (`threadIdx.z * y + threadIdx.y`).  A `warp` buffer (one copy per
warp, its lanes reading each other's elements) becomes such a `shared.warp` buffer:
shared memory rather than TVM's register shuffles, with barriers where lanes exchange.
Each moves as deep into the kernel as `CompactBufferAllocation` would move it (serial
loops whose iterations touch disjoint parts), then shrinks to the box its accesses
cover; a buffer with `storage_align` requests gets padded strides for that shape.
Codegen declares `__shared__` arrays at kernel scope wherever the `Allocate` sits.
Global-scope buffers stay at host level (the host allocates them); one allocated inside
a kernel is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.diagnostics import DiagnosticError
from unity.tir.arith import Analyzer
from unity.tir.buffer import Buffer
from unity.tir.expr import BufferLoad, IntImm, PrimExpr, Range, Var, const
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, StmtExprVisitor
from unity.tir.stmt import Allocate, BufferStore, For, Stmt
from unity.tir.transform._base import PrimFuncPass, with_body
from unity.tir.transform.compact_buffer_allocation import (  # the same placement rules
    Align, _Placer, dim_aligns,
)  # fmt: skip
from unity.tir.transform.convert_blocks_to_loops import DIM_ALIGN
from unity.tir.transform.gpu.lower_thread_binding_gpu import is_launch_loop, launch_nest
from unity.tir.transform.gpu.wmma import FRAGMENT_SCOPES

PER_WARP = "shared.warp"
"""Shared memory, one region per warp (a warp's staging tile)."""

_ONE_PER_WARP = (PER_WARP, "warp")
"""Scopes lowered to one region of shared memory per warp."""

ON_CHIP = ("shared", "shared.dyn", PER_WARP, "local", "warp", *FRAGMENT_SCOPES)
"""Scopes that live inside a kernel."""


@dataclass(frozen=True)
class LowerStorageScopes(PrimFuncPass):
    """Move on-chip buffers into their kernel and shrink them to a block's / thread's part.

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
        >>> n = [type(p) for p in passes].index(LowerStorageScopes)
        >>> before = Sequential(passes[:n])(mod)  # the passes that run first
        >>> local = 'T.allocate_buffer((1,), "float32", scope="local")'  # one per thread
        >>> after = LowerStorageScopes()(before)
        >>> local in before.script(), local in after.script()
        (False, True)
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> from unity import tir
            >>> f = tir.PrimFunc([], tir.Evaluate(tir.const(0)))
            >>> LowerStorageScopes().transform_function(f) is f  # nothing to do
            True
        """
        host = _Host(dim_aligns(func))
        body = host.visit_stmt(func.body)
        if host.pending:
            names = ", ".join(b.name for b in host.pending)
            raise DiagnosticError(f"on-chip buffer(s) {names} are used outside of any kernel", func)
        return with_body(func, body).without_attr(DIM_ALIGN)


class _Host(StmtExprMutator):
    """Lift on-chip allocations off the host level and hand each to the kernel using it."""

    def __init__(self, aligns: dict[Var, Align]) -> None:
        super().__init__()
        self.pending: list[Buffer] = []
        self.aligns = aligns

    def visit_allocate_(self, alloc: Allocate) -> Stmt:
        if alloc.buffer.scope not in ON_CHIP:
            return self._mutate_fields(alloc)
        self.pending.append(alloc.buffer)
        body = self.visit_stmt(alloc.body)
        if alloc.buffer in self.pending:  # no kernel claimed it: it is unused
            self.pending.remove(alloc.buffer)
        return body

    def visit_for_(self, loop: For) -> Stmt:
        if not is_launch_loop(loop):
            return self._mutate_fields(loop)
        used = _data_vars(loop)
        mine = [b for b in self.pending if b.data in used]
        for buf in mine:
            self.pending.remove(buf)
        return _place_in_kernel(loop, mine, self.aligns)


def _data_vars(stmt: Stmt) -> set[Var]:
    found: set[Var] = set()

    class _Uses(StmtExprVisitor):
        def visit_buffer_load_(self, load: BufferLoad) -> None:
            found.add(load.buffer.data)
            self.visit_prim_expr_(load)

        def visit_buffer_store_(self, store: BufferStore) -> None:
            found.add(store.buffer.data)
            self.visit_stmt_(store)

    _Uses().visit_stmt(stmt)
    return found


class _StripAllocs(StmtExprMutator):
    """Remove the on-chip `Allocate`s inside a kernel (they are placed again afterwards)."""

    def __init__(self) -> None:
        super().__init__()
        self.buffers: list[Buffer] = []

    def visit_allocate_(self, alloc: Allocate) -> Stmt:
        if alloc.buffer.scope not in ON_CHIP:
            msg = (f"buffer {alloc.buffer.name} in scope {alloc.buffer.scope!r} is allocated "
                   "inside a kernel; use scope 'shared' or 'local', or allocate it outside "
                   "the thread-bound loops")
            raise DiagnosticError(msg, alloc)
        self.buffers.append(alloc.buffer)
        return self.visit_stmt(alloc.body)


def _place_in_kernel(kernel: For, outer: list[Buffer], aligns: dict[Var, Align]) -> Stmt:
    loops, body = launch_nest(kernel)
    strip = _StripAllocs()
    body = strip.visit_stmt(body)
    analyzer = Analyzer()
    threads: dict[Var, Range] = {}
    lanes: dict[Var, Range] = {}
    for loop in loops:
        analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
        if (loop.thread_binding or "").startswith("threadIdx"):
            threads[loop.loop_var] = Range(loop.min, loop.extent)
        if loop.thread_binding == "threadIdx.x":
            lanes[loop.loop_var] = Range(loop.min, loop.extent)
    used = _data_vars(body)
    for buf in [*outer, *strip.buffers]:
        if buf.data not in used:
            continue
        placer = _Placer(buf, analyzer, _relaxed(buf, threads, lanes), aligns.get(buf.data, ()))
        body = placer.place(body)
        if buf.scope in _ONE_PER_WARP:
            body = _PerWarp(buf.data, *_warp_index(loops, buf)).visit_stmt(body)
    for loop in reversed(loops):
        body = loop.replace(body=body)
    return body


def _relaxed(buf: Buffer, threads: dict[Var, Range],
             lanes: dict[Var, Range]) -> dict[Var, Range] | None:
    """The thread indices `buf`'s size covers: all for a shared buffer (one per block), the
    lanes for a fragment or a `shared.warp` buffer (one per warp), none for a local one
    (one per thread)."""
    if buf.scope in FRAGMENT_SCOPES or buf.scope in _ONE_PER_WARP:
        return lanes
    return threads if buf.scope.startswith("shared") else None


def _warp_index(loops: list[For], buf: Buffer) -> tuple[PrimExpr, int]:
    """The warp's index in its block (`threadIdx.z * y + threadIdx.y`) and the warp count;
    a `shared.warp` buffer needs warps of whole `threadIdx.x` rows of 32 lanes."""
    extents = {lp.thread_binding: lp for lp in loops}
    x = extents.get("threadIdx.x")
    if x is None or not isinstance(x.extent, IntImm) or x.extent.value != 32:
        raise DiagnosticError(f"buffer {buf.name} in scope {buf.scope!r} needs threadIdx.x of extent 32 "
                              "(the lanes of a warp)", buf)
    index: PrimExpr = const(0, x.loop_var.dtype)
    count = 1
    for tag in ("threadIdx.z", "threadIdx.y"):
        loop = extents.get(tag)
        if loop is None:
            continue
        if not isinstance(loop.extent, IntImm):
            raise DiagnosticError(f"buffer {buf.name} in scope {buf.scope!r} needs a constant {tag}", buf)
        index = index * loop.extent.value + loop.loop_var
        count *= loop.extent.value
    return index, count


class _PerWarp(StmtExprMutator):
    """Give the (per-warp compacted) buffer over `data` a leading warp dimension."""

    def __init__(self, data: Var, warp: PrimExpr, count: int) -> None:
        super().__init__()
        self.data, self.warp, self.count = data, warp, count
        self.new: dict[Buffer, Buffer] = {}

    def _buffer(self, buf: Buffer) -> Buffer:
        got = self.new.get(buf)
        if got is None:
            strides = (buf.strides[0] * buf.shape[0], *buf.strides) if buf.strides else ()
            shape = (const(self.count, buf.shape[0].dtype), *buf.shape)
            got = self.new[buf] = buf.replace(shape=shape, strides=strides, scope=PER_WARP)
        return got

    def visit_allocate_(self, alloc: Allocate) -> Stmt:
        if alloc.buffer.data is not self.data:
            return self._mutate_fields(alloc)
        return Allocate(self._buffer(alloc.buffer), self.visit_stmt(alloc.body))

    def _indices(self, indices: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
        dtype = indices[0].dtype
        return (self.warp if self.warp.dtype == dtype else self.warp.astype(dtype), *indices)

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        load = self._mutate_fields(load)
        if load.buffer.data is not self.data:
            return load
        return BufferLoad(self._buffer(load.buffer), self._indices(load.indices))

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        store = self._mutate_fields(store)
        if store.buffer.data is not self.data:
            return store
        return BufferStore(self._buffer(store.buffer), store.value, self._indices(store.indices))
