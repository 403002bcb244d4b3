"""`reindex`: stage one buffer a block accesses through a buffer indexed by the block's
own iteration variables, so that the block accesses it at a plain point.

Before (a conv whose iteration space was fused to ``m, n, k`` by
`transform_block_layout`)::

    with T.block("C"):
        v_m, v_n, v_k = T.axis.remap("SSR", [ax0, ax1, ax2])
        C[v_m // 4, v_n] = C[v_m // 4, v_n] + X[v_k // 9, v_m // 2 + v_k % 9 // 3, ...] * W[...]

After ``sch.reindex(c, ("read", 0))``::

    X_reindex = T.alloc_buffer((16, 18))
    for ax0, ax1 in T.grid(16, 18):
        with T.block("X_reindex"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            X_reindex[v0, v1] = X[v1 // 9, v0 // 2 + v1 % 9 // 3, ...]
    ...
        with T.block("C"):
            ...  C[...] = C[...] + X_reindex[v_m, v_k] * W[...]

The new buffer has one dimension per iteration variable the access uses, in the block's
order.  A read guarded as ``T.if_then_else(cond, X[..], 0)`` (a padded input) is staged
with its guard: the copy holds the padded values.  ``("write", 0)`` makes the block
write ``C_reindex[v_m, v_n]`` and adds a block after it that stores each element where
the block stored it.  A matmul tile of the block is then a box of the new buffer, which
is what `cache_read` into shared memory needs (the copy blocks are inlined again
afterwards with `compute_inline` / `reverse_compute_inline`).
"""

from __future__ import annotations

from unity.schedule.analysis import as_int, buffers_written, child_realizes, used_vars, with_regions
from unity.schedule.error import ScheduleError
from unity.schedule.primitives.cache import _check_no_reader_inside, _resolve
from unity.schedule.scope import alloc_in_root, top_level
from unity.schedule.state import BlockRV, ScheduleState
from unity.schedule.tree import replace_stmts
from unity.tir.buffer import Buffer, decl_buffer
from unity.tir.expr import (
    BufferLoad, FloatImm, IntImm, IterType, IterVar, PrimExpr, Select, Var, const,
)  # fmt: skip
from unity.tir.functor import StmtExprMutator, StmtExprVisitor, substitute
from unity.tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, Stmt, seq

P = "reindex"


def reindex(state: ScheduleState, block: BlockRV, buffer: tuple[str, int]) -> BlockRV:
    """Stage `buffer` (``("read", i)`` or ``("write", i)`` of `block`) through a buffer
    indexed by the block's iteration variables that its access uses.

    Returns:
        The new copy block (before `block` for a read, after it for a write).

    Raises:
        ScheduleError: a bad buffer spec, a buffer accessed at more than one point, or
            one written (for a read) or read (for a write) elsewhere in the block's loop
            nest.

    Example:
        >>> sch.reindex(sch.get_block("C"), ("read", 0))  # doctest: +SKIP
    """
    func_name, func, path = _resolve(state, block, P)
    realize: BlockRealize = path[-1]
    blk = realize.block
    buf = _buffer_of(blk, buffer, func)
    access = _the_access(blk, buf, func)
    used = used_vars(access)
    ivars = [iv for iv in blk.iter_vars if iv.var in used]
    for iv in ivars:
        if as_int(iv.dom.min) != 0:
            raise ScheduleError(P, f"iteration variable {iv.var.name} does not start at 0", func, blk)
    new_buf = decl_buffer(tuple(iv.dom.extent for iv in ivars) or (const(1),), buf.dtype,
                          f"{buf.name}_reindex")
    point = tuple(iv.var for iv in ivars) or (const(0),)
    new_blk = with_regions(_Rewrite(buf, new_buf, point).visit_stmt(blk))
    name = state.unique_block_name(func, new_buf.name)
    copy = _copy_nest(ivars, buf, access, new_buf, name)
    anchor = top_level(path)
    if buffer[0] == "write":
        _check_no_reader_inside(anchor, realize, buf, func, P)
    else:
        _check_no_writer_inside(anchor, realize, buf, func)
    new_anchor = replace_stmts(anchor, {realize: realize.replace(block=new_blk)})
    staged = seq(copy, new_anchor) if buffer[0] == "read" else seq(new_anchor, copy)
    body = replace_stmts(func.body, {anchor: staged})
    state.commit(func_name, alloc_in_root(func.replace(body=body), [new_buf]))
    return state.block_rv(func_name, name)


def _check_no_writer_inside(anchor: Stmt, reader: BlockRealize, buf: Buffer, func: object) -> None:
    """The copy goes before the reader's whole loop nest: nothing in that nest may write `buf`."""
    nest = [anchor] if isinstance(anchor, BlockRealize) else child_realizes(anchor)
    for r in nest:
        if r is not reader and buf in buffers_written([r]):
            msg = (f"block {r.block.name_hint} writes {buf.name} inside the loop nest of its "
                   f"reader {reader.block.name_hint}")
            raise ScheduleError(P, msg, func, r.block)


def _buffer_of(blk: Block, spec: tuple[str, int], func: object) -> Buffer:
    if not (isinstance(spec, tuple) and len(spec) == 2 and spec[0] in ("read", "write")
            and isinstance(spec[1], int)):
        raise ScheduleError(P, f"buffer must be ('read', i) or ('write', i), not {spec!r}", func, blk)
    regions = blk.reads if spec[0] == "read" else blk.writes
    if not 0 <= spec[1] < len(regions):
        msg = f"block {blk.name_hint} {spec[0]}s {len(regions)} buffers; index {spec[1]} is out of range"
        raise ScheduleError(P, msg, func, blk)
    return regions[spec[1]].buffer


def _padded(expr: PrimExpr, buf: Buffer) -> bool:
    """`expr` is ``if_then_else(cond, buf[..], constant)``: a read of a padded input."""
    return (isinstance(expr, Select) and isinstance(expr.true_value, BufferLoad)
            and expr.true_value.buffer is buf and isinstance(expr.false_value, IntImm | FloatImm))


class _Points(StmtExprVisitor):
    """Every access to `buf`: the load, or its padding `Select`, or the store's indices."""

    def __init__(self, buf: Buffer) -> None:
        self.buf = buf
        self.points: list[PrimExpr | tuple[PrimExpr, ...]] = []

    def visit_select_(self, sel: Select) -> None:
        if _padded(sel, self.buf):
            self.points.append(sel)
            self.visit_expr(sel.condition)
            self.visit_prim_expr_(sel.true_value)
        else:
            self.visit_prim_expr_(sel)

    def visit_buffer_load_(self, load: BufferLoad) -> None:
        if load.buffer is self.buf:
            self.points.append(load)
        self.visit_prim_expr_(load)

    def visit_buffer_store_(self, store: BufferStore) -> None:
        if store.buffer is self.buf:
            self.points.append(store.indices)
        self.visit_stmt_(store)


def _the_access(blk: Block, buf: Buffer, func: object) -> PrimExpr | tuple[PrimExpr, ...]:
    """The one load of `buf` in `blk` (with its padding guard), or the one store's indices."""
    finder = _Points(buf)
    finder.visit_stmt(blk.body)
    if blk.init is not None:
        finder.visit_stmt(blk.init)
    loads = [p for p in finder.points if not isinstance(p, tuple)]
    stores = [p for p in finder.points if isinstance(p, tuple)]
    points = stores if stores else loads
    scripts = {tuple(i.script() for i in p) if isinstance(p, tuple) else p.script() for p in points}
    if len(scripts) != 1 or (stores and loads and {i.script() for i in stores[0]}
                             != {i.script() for i in _load_indices(loads[0])}):
        msg = f"block {blk.name_hint} accesses {buf.name} at {len(scripts)} different points"
        raise ScheduleError(P, msg, func, blk)
    return points[0]


def _load_indices(load: PrimExpr) -> tuple[PrimExpr, ...]:
    return load.true_value.indices if isinstance(load, Select) else load.indices


class _Rewrite(StmtExprMutator):
    """The access to `buf` (a load, its padding guard, a store) -> `new[point]`."""

    def __init__(self, buf: Buffer, new: Buffer, point: tuple) -> None:
        super().__init__()
        self.buf, self.new, self.point = buf, new, point

    def visit_select_(self, sel: Select) -> PrimExpr:
        if _padded(sel, self.buf):
            return BufferLoad(self.new, self.point)
        return self.visit_prim_expr_(sel)

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        if load.buffer is self.buf:
            return BufferLoad(self.new, self.point)
        return self.visit_prim_expr_(load)

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        if store.buffer is self.buf:
            return BufferStore(self.new, self.visit_expr(store.value), self.point)
        return self.visit_stmt_(store)


def _copy_nest(ivars: list[IterVar], buf: Buffer, access, new: Buffer, name: str) -> Stmt:
    """Loops over `new`'s shape and a block copying between `access` of `buf` and `new`."""
    fresh = [IterVar(Var(f"v{d}", iv.var.dtype), iv.dom, IterType.SPATIAL)
             for d, iv in enumerate(ivars)]
    rename = {old.var: new_iv.var for old, new_iv in zip(ivars, fresh)}
    point = tuple(iv.var for iv in fresh) or (const(0),)
    if isinstance(access, tuple):  # a write
        store = BufferStore(buf, BufferLoad(new, point), tuple(substitute(i, rename) for i in access))
    else:
        store = BufferStore(new, substitute(access, rename), point)
    blk = with_regions(Block(tuple(fresh), (), (), name, store))
    axes = [Var(f"ax{d}", iv.var.dtype) for d, iv in enumerate(fresh)]
    nest: Stmt = BlockRealize(tuple(axes), const(True), blk)
    for ax, iv in zip(reversed(axes), reversed(fresh)):
        nest = For(ax, const(0, ax.dtype), iv.dom.extent, ForKind.SERIAL, nest)
    return nest
