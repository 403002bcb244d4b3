"""`compute_inline` / `reverse_compute_inline`: fold an elementwise block into its neighbour.

Before::

    for i in T.serial(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in T.serial(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)

After ``sch.compute_inline(sch.get_block("B"))``::

    for i in T.serial(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi] * T.float32(2) + T.float32(1)

(``reverse_compute_inline(C)`` instead keeps block ``B`` writing ``C[vi] = A[vi] * 2 + 1``.)
"""

from __future__ import annotations

from unity.schedule.analysis import as_int, buffers_read, buffers_written, with_regions
from unity.schedule.error import ScheduleError
from unity.schedule.scope import alloc_in_root, is_param, scope_realizes
from unity.schedule.state import BlockRV, ScheduleState
from unity.schedule.tree import replace_stmts
from unity.tir.buffer import Buffer
from unity.tir.expr import BufferLoad, IntImm, PrimExpr, Var
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, substitute
from unity.tir.stmt import Block, BlockRealize, BufferStore, Stmt


def _elementwise_store(func: PrimFunc, blk: Block, primitive: str) -> BufferStore:
    if blk.init is not None:
        raise ScheduleError(
            primitive, f"block {blk.name_hint} is a reduction (it has an init)", func, blk
        )
    if not isinstance(blk.body, BufferStore):
        msg = f"the body of block {blk.name_hint} is not a single buffer store"
        raise ScheduleError(primitive, msg, func, blk)
    return blk.body


def _index_vars(store_or_load: BufferStore | BufferLoad, blk: Block) -> list[Var] | None:
    iter_vars = {iv.var for iv in blk.iter_vars}
    idx = list(store_or_load.indices)
    if not all(isinstance(i, Var) and i in iter_vars for i in idx) or len(set(idx)) != len(idx):
        return None
    if set(idx) != iter_vars:
        return None
    return idx  # type: ignore[return-value]


class _ReplaceLoads(StmtExprMutator):
    """Replace each load of `buffer` by `value` with `params` bound to the load's indices."""

    def __init__(self, buffer: Buffer, params: list[Var], value: PrimExpr) -> None:
        super().__init__()
        self.buffer, self.params, self.value = buffer, params, value
        self.changed = {buffer} | {ld.buffer for ld in _loads_of(value, None)}  # whose regions change

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        load = self._mutate_fields(load)
        if load.buffer is not self.buffer:
            return load
        return substitute(self.value, dict(zip(self.params, load.indices)))

    def visit_block_(self, block: Block) -> Stmt:
        new = self._mutate_fields(block)
        if new is block or self.buffer not in {r.buffer for r in block.reads}:
            return new
        return with_regions(new, self.changed)


def compute_inline(state: ScheduleState, block: BlockRV) -> None:
    """Inline an elementwise producer into every block that reads its output.

    Raises:
        ScheduleError: the block is a reduction, its body is not one store of a point
            indexed by its iteration vars, or it writes a function output.

    Example:
        >>> sch.compute_inline(sch.get_block("B"))  # doctest: +SKIP
    """
    p = "compute_inline"
    func_name, func, path = state.resolve_block(block, p)
    realize: BlockRealize = path[-1]
    blk = realize.block
    store = _elementwise_store(func, blk, p)
    params = _index_vars(store, blk)
    if params is None:
        msg = f"block {blk.name_hint} does not store to a point indexed by all its iteration variables"
        raise ScheduleError(p, msg, func, blk)
    if is_param(func, store.buffer):
        msg = f"block {blk.name_hint} writes {store.buffer.name}, an output of the function"
        raise ScheduleError(p, msg, func, blk)
    others = [r for r in scope_realizes(func, path) if r is not realize]
    if store.buffer in buffers_written(others):
        raise ScheduleError(p, f"{store.buffer.name} has more than one writer", func, blk)
    body = replace_stmts(func.body, {realize: None})
    body = _ReplaceLoads(store.buffer, params, store.value).visit_stmt(body)
    new = alloc_in_root(func.replace(body=body), [], remove=store.buffer)
    state.commit(func_name, new)


def reverse_compute_inline(state: ScheduleState, block: BlockRV) -> None:
    """Inline an elementwise consumer into the single block that produces its input.

    Raises:
        ScheduleError: the consumer is a reduction, has a predicate, reads its input at
            anything but a point indexed by all its iteration vars, or the producer is not
            a single-store block.

    Example:
        >>> sch.reverse_compute_inline(sch.get_block("C"))  # doctest: +SKIP
    """
    p = "reverse_compute_inline"
    func_name, func, path = state.resolve_block(block, p)
    realize: BlockRealize = path[-1]
    blk = realize.block
    store = _elementwise_store(func, blk, p)
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        raise ScheduleError(p, f"block {blk.name_hint} has a predicate", func, blk)
    siblings = scope_realizes(func, path)
    index = siblings.index(realize)
    producers = [r for r in siblings[:index] if buffers_written([r]) & buffers_read([realize])]
    if len(producers) != 1:
        msg = f"block {blk.name_hint} must have exactly one producer, found {len(producers)}"
        raise ScheduleError(p, msg, func, blk)
    producer = producers[0]
    pstore = _elementwise_store(func, producer.block, p)
    loads = _loads_of(store.value, pstore.buffer)
    params = _index_vars(loads[0], blk) if loads else None
    if params is None or any(tuple(ld.indices) != tuple(loads[0].indices) for ld in loads):
        msg = f"block {blk.name_hint} does not read {pstore.buffer.name} at one point indexed by all its iteration vars"
        raise ScheduleError(p, msg, func, blk)
    if is_param(func, pstore.buffer) or len(_readers(siblings, pstore.buffer)) != 1:
        msg = (
            f"{pstore.buffer.name} is read outside block {blk.name_hint} (or is a function output)"
        )
        raise ScheduleError(p, msg, func, blk)
    doms = {iv.var: iv.dom for iv in blk.iter_vars}
    for var, dim in zip(params, pstore.buffer.shape):
        if as_int(doms[var].min) != 0 or not _same_extent(doms[var].extent, dim):
            msg = f"block {blk.name_hint} does not read all of {pstore.buffer.name} (its domain differs from the buffer's shape)"
            raise ScheduleError(p, msg, func, blk)
    vmap = dict(zip(params, pstore.indices))
    inlined = substitute(_subst_load(store.value, pstore.buffer, pstore.value), vmap)
    new_store = BufferStore(
        store.buffer, inlined, tuple(substitute(i, vmap) for i in store.indices)
    )
    new_block = with_regions(producer.block.replace(body=new_store))
    body = replace_stmts(func.body, {realize: None, producer.block: new_block})
    state.commit(func_name, alloc_in_root(func.replace(body=body), [], remove=pstore.buffer))


def _loads_of(expr: PrimExpr, buf: Buffer | None) -> list[BufferLoad]:
    """The loads of `buf` in `expr` (of any buffer for None)."""
    from unity.tir.functor import post_order_visit

    out: list[BufferLoad] = []
    post_order_visit(
        expr, lambda n: out.append(n) if isinstance(n, BufferLoad) and (buf is None or n.buffer is buf) else None
    )  # type: ignore[arg-type]
    return out


def _subst_load(expr: PrimExpr, buf: Buffer, value: PrimExpr) -> PrimExpr:
    class _Sub(StmtExprMutator):
        def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
            return value if load.buffer is buf else self._mutate_fields(load)

    return _Sub().visit_expr(expr)


def _readers(realizes: list[BlockRealize], buf: Buffer) -> list[BlockRealize]:
    return [r for r in realizes if buf in buffers_read([r])]


def _same_extent(a: PrimExpr, b: PrimExpr) -> bool:
    ka, kb = as_int(a), as_int(b)
    if ka is not None and kb is not None:
        return ka == kb
    from unity.ir.structural import structural_equal

    return a is b or structural_equal(a, b, map_free_vars=False)
