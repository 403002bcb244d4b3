"""`rfactor`: turn one reduction loop into a spatial axis of an intermediate buffer.

Before::

    for i, k in T.grid(4, 8):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]

After ``sch.rfactor(k, factor_axis=0)`` (with `k` split into `k_0, k_1` first, rfactor of
`k_1` keeps `k_1` parallelizable)::

    S_rf = T.alloc_buffer((8, 4))
    for i, k in T.grid(4, 8):
        with T.block("S_rf"):
            vi, vk_rf = T.axis.remap("SS", [i, k])
            with T.init():
                S_rf[vk_rf, vi] = T.float32(0)
            S_rf[vk_rf, vi] = S_rf[vk_rf, vi] + A[vi, vk_rf]
    for ax0, ax1 in T.grid(4, 8):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [ax0, ax1])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + S_rf[vk, vi]
"""

from __future__ import annotations

import numbers

from unity.ir.structural import structural_equal
from unity.schedule.analysis import child_realizes, reduction_loop_vars, used_vars, with_regions
from unity.schedule.error import ScheduleError
from unity.schedule.primitives.cache import _check_no_reader_inside
from unity.schedule.scope import alloc_in_root, scope_index, top_level, with_root_block
from unity.schedule.state import BlockRV, LoopRV, ScheduleState
from unity.schedule.tree import find_path, replace_stmts
from unity.tir.buffer import decl_buffer
from unity.tir.expr import (
    Add,
    BufferLoad,
    IterType,
    IterVar,
    Max,
    Min,
    Mul,
    PrimExpr,
    Range,
    Var,
    const,
)
from unity.tir.functor import substitute
from unity.tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, Stmt, seq

P = "rfactor"
_COMBINERS = (Add, Mul, Max, Min)


def rfactor(state: ScheduleState, loop: LoopRV, factor_axis: int = 0) -> BlockRV:
    """Factor the reduction over `loop` into a new buffer; return the `<name>_rf` block.

    Raises:
        ScheduleError: the loop holds other than one reduction block, the block's update
            is not `C[idx] = C[idx] op value` with op in `+ * max min`, or the loop feeds
            a spatial iteration variable (or none at all).

    Example:
        >>> rf = sch.rfactor(ki, factor_axis=0)  # doctest: +SKIP
    """
    func_name, func, lpath = state.resolve_loop(loop, P)
    func = with_root_block(func)
    target: For = find_path(
        func.body, lambda s: isinstance(s, For) and s.loop_var is lpath[-1].loop_var
    )[-1]  # type: ignore[index]
    realizes = child_realizes(target)
    if len(realizes) != 1:
        raise ScheduleError(
            P,
            f"loop {target.loop_var.name} must hold exactly one block, found {len(realizes)}",
            func,
            target,
        )
    realize = realizes[0]
    blk = realize.block
    store, combiner, rhs = _reduction_parts(blk, func)
    _check_loop(realize, target, func)
    bpath = find_path(func.body, lambda s: s is realize)
    loops = [s for s in bpath[scope_index(bpath) + 1 : -1] if isinstance(s, For)]  # type: ignore[index]
    # shape variables in the bindings (a fused image's ``k // width``) are no loops at all
    bound = {s.loop_var for s in bpath if isinstance(s, For)}  # type: ignore[union-attr]
    outside = (reduction_loop_vars(realize) & bound) - {lp.loop_var for lp in loops}
    if outside:
        names = ", ".join(sorted(v.name for v in outside))
        msg = f"block {blk.name_hint} reduces over {names}, which are not loops of its scope"
        raise ScheduleError(P, msg, func, blk)
    ndim = store.buffer.ndim
    if isinstance(factor_axis, bool) or not isinstance(factor_axis, numbers.Integral) or not (
        -(ndim + 1) <= factor_axis <= ndim
    ):
        msg = (
            f"factor_axis {factor_axis!r} is out of range for {store.buffer.name} of rank "
            f"{ndim}; use an int in [{-(ndim + 1)}, {ndim}]"
        )
        raise ScheduleError(P, msg, func, blk)
    rf_realize, rf_buf = _rf_block(
        state, func, realize, store, combiner, rhs, target, loops, factor_axis
    )
    writeback = _writeback(realize, store, combiner, rf_buf, target, factor_axis)
    anchor = top_level(bpath)  # type: ignore[arg-type]
    _check_no_reader_inside(anchor, realize, store.buffer, func, P)
    new_anchor = replace_stmts(anchor, {realize: rf_realize})
    body = replace_stmts(func.body, {anchor: seq(new_anchor, writeback)})
    state.commit(func_name, alloc_in_root(func.replace(body=body), [rf_buf]))
    return state.block_rv(func_name, rf_realize.block.name_hint)


def _reduction_parts(blk: Block, func: object) -> tuple[BufferStore, type, PrimExpr]:
    store = blk.body
    ok = (
        blk.init is not None
        and isinstance(store, BufferStore)
        and isinstance(store.value, _COMBINERS)
    )
    if ok:
        for self_load, rhs in ((store.value.a, store.value.b), (store.value.b, store.value.a)):
            if (
                isinstance(self_load, BufferLoad)
                and self_load.buffer is store.buffer
                and all(
                    structural_equal(a, b, map_free_vars=False)
                    for a, b in zip(self_load.indices, store.indices)
                )
            ):
                return store, type(store.value), rhs
    msg = f"block {blk.name_hint} is not a reduction of the form C[idx] = C[idx] op value (op in + * max min)"
    raise ScheduleError(P, msg, func, blk)


def _check_loop(realize: BlockRealize, target: For, func: object) -> None:
    var = target.loop_var
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if iv.iter_type is IterType.SPATIAL and var in used_vars(value):
            msg = f"loop {var.name} feeds spatial iteration variable {iv.var.name}; rfactor needs a reduction loop"
            raise ScheduleError(P, msg, func, target)
    if not any(var in used_vars(v) for v in realize.iter_values):
        raise ScheduleError(
            P,
            f"loop {var.name} feeds no iteration variable of block {realize.block.name_hint}",
            func,
            target,
        )


def _rf_block(state, func, realize, store, combiner, rhs, target, loops, axis):
    blk = realize.block
    rf_var = Var(f"v{target.loop_var.name}_rf", target.loop_var.dtype)
    iters = [IterVar(rf_var, Range(target.min, target.extent), IterType.SPATIAL)]
    values: list[PrimExpr] = [target.loop_var]
    loop_sub: dict[Var, PrimExpr] = {target.loop_var: rf_var}
    vmap: dict[Var, PrimExpr] = {}
    reduce_loops = set()
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        if iv.iter_type is IterType.SPATIAL:
            nv = Var(iv.var.name, iv.var.dtype)
            iters.append(IterVar(nv, iv.dom, IterType.SPATIAL))
            values.append(value)
            vmap[iv.var] = nv
        else:
            reduce_loops |= used_vars(value)
    for lp in loops:
        if lp.loop_var in reduce_loops and lp is not target:
            rv = Var(f"v{lp.loop_var.name}", lp.loop_var.dtype)
            iters.append(IterVar(rv, Range(lp.min, lp.extent), IterType.REDUCE))
            values.append(lp.loop_var)
            loop_sub[lp.loop_var] = rv
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        if iv.iter_type is not IterType.SPATIAL:
            vmap[iv.var] = substitute(value, loop_sub)
    buf = store.buffer
    axis = axis % (buf.ndim + 1)
    rf_buf = decl_buffer(
        (*buf.shape[:axis], target.extent, *buf.shape[axis:]), buf.dtype, f"{buf.name}_rf"
    )
    idx = [substitute(i, vmap) for i in store.indices]
    rf_idx = (*idx[:axis], rf_var, *idx[axis:])
    body = BufferStore(rf_buf, combiner(rf_buf[rf_idx], substitute(rhs, vmap)), rf_idx)
    init = BufferStore(rf_buf, substitute(blk.init.value, vmap), rf_idx)
    name = state.unique_block_name(func, f"{blk.name_hint}_rf")
    new_blk = with_regions(Block(tuple(iters), (), (), name, body, init))
    return BlockRealize(tuple(values), realize.predicate, new_blk), rf_buf


def _writeback(realize, store, combiner, rf_buf, target, axis) -> Stmt:
    blk = realize.block
    spatial = [iv for iv in blk.iter_vars if iv.iter_type is IterType.SPATIAL]
    axes = [Var(f"ax{d}", iv.var.dtype) for d, iv in enumerate(spatial)] + [
        Var(f"ax{len(spatial)}", target.loop_var.dtype)
    ]
    vmap = {iv.var: Var(iv.var.name, iv.var.dtype) for iv in spatial}
    red = Var(f"v{target.loop_var.name}", target.loop_var.dtype)
    iters = [IterVar(vmap[iv.var], iv.dom, IterType.SPATIAL) for iv in spatial]
    iters.append(IterVar(red, Range(target.min, target.extent), IterType.REDUCE))
    values = [_offset(iv.dom.min, ax) for iv, ax in zip(spatial, axes)] + [
        _offset(target.min, axes[-1])
    ]
    idx = [substitute(i, vmap) for i in store.indices]
    axis = axis % (len(idx) + 1)
    rf_idx = (*idx[:axis], red, *idx[axis:])
    body = BufferStore(store.buffer, combiner(store.buffer[tuple(idx)], rf_buf[rf_idx]), tuple(idx))
    init = BufferStore(store.buffer, substitute(blk.init.value, vmap), tuple(idx))
    nest: Stmt = BlockRealize(
        tuple(values),
        const(True),
        with_regions(Block(tuple(iters), (), (), blk.name_hint, body, init)),
    )
    extents = [iv.dom.extent for iv in spatial] + [target.extent]
    for ax, ext in zip(reversed(axes), reversed(extents)):
        nest = For(ax, const(0, ax.dtype), ext, ForKind.SERIAL, nest)
    return nest


def _offset(lo: PrimExpr, ax: Var) -> PrimExpr:
    from unity.schedule.analysis import as_int

    return ax if as_int(lo) == 0 else lo + ax
