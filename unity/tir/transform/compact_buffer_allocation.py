"""Shrink each intermediate buffer to the box of elements its accesses can touch.

Before::

    with T.allocate_buffer((16, 16), "float32") as A:
        for j in T.serial(4):
            A[0, j + 2] = X[j] * T.float32(3)
            Y[j] = A[0, j + 2]

After ``CompactBufferAllocation()``::

    with T.allocate_buffer((1, 4), "float32") as A:
        for j in T.serial(4):
            A[0, j] = X[j] * T.float32(3)
            Y[j] = A[0, j]

Works on `Allocate` statements (run it after `ConvertBlocksToLoops`): for each
dimension, the bounds of every index over the loops inside the allocation are computed
with `unity.tir.arith.Analyzer.const_int_bound`; when they are constants that cover
less than the dimension, the dimension shrinks and the indices shift by the lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.tir.arith import Analyzer
from unity.tir.buffer import Buffer
from unity.tir.expr import BufferLoad, IntImm, PrimExpr, Range, const
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, StmtExprVisitor
from unity.tir.stmt import Allocate, BufferStore, For, Stmt
from unity.tir.transform._base import with_body


@dataclass(frozen=True)
class CompactBufferAllocation(ModulePass):
    """Shrink `Allocate`d buffers with constant shapes to the constant box accessed."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return mod.map_functions(PrimFunc, self.transform_function)

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes)."""
        return with_body(func, _Compactor().visit_stmt(func.body))


class _Accesses(StmtExprVisitor):
    """Bounds of every index of `buffer` over the loops inside the allocation."""

    def __init__(self, buffer: Buffer, analyzer: Analyzer) -> None:
        self.buffer = buffer
        self.analyzer = analyzer
        self.lo = [None] * len(buffer.shape)
        self.hi = [None] * len(buffer.shape)
        self.ok = True

    def visit_for_(self, loop: For) -> None:
        self.analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
        self.visit_stmt_(loop)

    def visit_buffer_load_(self, load: BufferLoad) -> None:
        self._access(load.buffer, load.indices)
        self.visit_prim_expr_(load)

    def visit_buffer_store_(self, store: BufferStore) -> None:
        self._access(store.buffer, store.indices)
        self.visit_stmt_(store)

    def _access(self, buffer: Buffer, indices: tuple[PrimExpr, ...]) -> None:
        if buffer is not self.buffer:
            if buffer.data is self.buffer.data:
                self.ok = False  # an alias we do not rewrite
            return
        for d, index in enumerate(indices):
            bound = self.analyzer.const_int_bound(index)
            lo, hi = bound.min_value, bound.max_value
            if not _finite(lo) or not _finite(hi):
                self.ok = False
                return
            self.lo[d] = lo if self.lo[d] is None else min(self.lo[d], lo)
            self.hi[d] = hi if self.hi[d] is None else max(self.hi[d], hi)


def _finite(value: object) -> bool:
    return isinstance(value, int) and abs(value) < 2**40  # the analyzer's infinities are larger


class _Compactor(StmtExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.analyzer = Analyzer()
        self.shift: dict[Buffer, tuple[Buffer, tuple[int, ...]]] = {}

    def visit_allocate_(self, alloc: Allocate) -> Stmt:
        buffer = alloc.buffer
        if buffer.strides or not all(isinstance(d, IntImm) for d in buffer.shape):
            return self._mutate_fields(alloc)
        accesses = _Accesses(buffer, Analyzer())
        accesses.visit_stmt(alloc.body)
        box = _box(buffer, accesses)
        if box is None:
            return self._mutate_fields(alloc)
        lows, extents = box
        shape = tuple(const(e, d.dtype) for e, d in zip(extents, buffer.shape))
        new = buffer.replace(shape=shape)
        self.shift[buffer] = (new, lows)
        return Allocate(new, self.visit_stmt(alloc.body), span=alloc.span)

    def _shifted(
        self, buffer: Buffer, indices: tuple[PrimExpr, ...]
    ) -> tuple[Buffer, tuple[PrimExpr, ...]] | None:
        entry = self.shift.get(buffer)
        if entry is None:
            return None
        new, lows = entry
        simplify = self.analyzer.simplify
        return new, tuple(i if lo == 0 else simplify(i - lo) for i, lo in zip(indices, lows))

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        load = self._mutate_fields(load)
        shifted = self._shifted(load.buffer, load.indices)
        return load if shifted is None else BufferLoad(*shifted, span=load.span)

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        store = self._mutate_fields(store)
        shifted = self._shifted(store.buffer, store.indices)
        if shifted is None:
            return store
        return BufferStore(shifted[0], store.value, shifted[1], span=store.span)


def _box(buffer: Buffer, accesses: _Accesses) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(lower bounds, extents) when the accessed box is constant and smaller, else None."""
    if not accesses.ok or any(lo is None for lo in accesses.lo):
        return None
    dims = [d.value for d in buffer.shape]  # type: ignore[attr-defined]  # all IntImm
    lows = tuple(max(lo, 0) for lo in accesses.lo)  # type: ignore[arg-type]
    highs = tuple(min(hi, d - 1) for hi, d in zip(accesses.hi, dims))  # type: ignore[arg-type]
    extents = tuple(hi - lo + 1 for lo, hi in zip(lows, highs))
    if any(e <= 0 for e in extents) or list(extents) == dims:
        return None
    if any(lo != alo for lo, alo in zip(lows, accesses.lo)):
        return None  # accesses below 0: out of bounds already, leave it alone
    return lows, extents
