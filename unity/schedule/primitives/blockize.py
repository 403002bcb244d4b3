"""`blockize`: wrap the subtree of a loop in a new outer block.

Before::

    for i_0, i_1 in T.grid(2, 4):
        with T.block("B"):
            vi = T.axis.spatial(8, i_0 * 4 + i_1)
            B[vi] = A[vi]

After ``sch.blockize(i_1)``::

    for i_0 in T.serial(2):
        with T.block("B_o"):
            vi_0 = T.axis.spatial(2, i_0)
            T.reads(A[vi_0 * 4:vi_0 * 4 + 4])
            T.writes(B[vi_0 * 4:vi_0 * 4 + 4])
            for i_1 in T.serial(4):
                with T.block("B"):
                    vi = T.axis.spatial(8, vi_0 * 4 + i_1)
                    B[vi] = A[vi]
"""

from __future__ import annotations

from unity.schedule.analysis import (
    _add,
    binding_map,
    bound,
    child_realizes,
    reduction_loop_vars,
    used_vars,
)
from unity.schedule.error import ScheduleError
from unity.schedule.scope import scope_index
from unity.schedule.state import BlockRV, LoopRV, ScheduleState
from unity.schedule.tree import find_path, replace_stmts, walk
from unity.tir.buffer import BufferRegion
from unity.tir.expr import IterType, IterVar, PrimExpr, Range, Var, const
from unity.tir.functor import substitute
from unity.tir.stmt import Block, BlockRealize, For

P = "blockize"


def blockize(state: ScheduleState, loop: LoopRV) -> BlockRV:
    """Make the subtree of `loop` the body of a new block `<name>_o`; return its handle.

    The new block's iteration variables stand for the loops outside `loop` that the
    inner block's bindings use; its regions cover what one instance touches.

    Raises:
        ScheduleError: the loop holds other than one block, or an outer loop feeds both
            spatial and reduction iteration variables.

    Example:
        >>> outer = sch.blockize(ii)  # doctest: +SKIP
    """
    func_name, func, lpath = state.resolve_loop(loop, P)
    target: For = lpath[-1]
    realizes = child_realizes(target)
    if len(realizes) != 1:
        msg = f"loop {target.loop_var.name} must hold exactly one block, found {len(realizes)}"
        raise ScheduleError(P, msg, func, target)
    new_target, outer = blockize_loop(state, func, lpath, realizes[0], P)
    state.commit(func_name, func.replace(body=replace_stmts(func.body, {target: new_target})))
    return state.block_rv(func_name, outer.name_hint)


def blockize_loop(state: ScheduleState, func, lpath: list, realize: BlockRealize, p: str):
    """`(outer_realize, outer_block)` for the loop `lpath[-1]` holding block `realize`.

    Example:
        >>> from unity import te
        >>> from unity.schedule.schedule import Schedule
        >>> A = te.placeholder((8, 4), name="A")
        >>> B = te.compute((8, 4), lambda i, j: A[i, j], name="B")
        >>> sch = Schedule(te.create_prim_func([A, B]))
        >>> i, j = sch.get_loops(sch.get_block("B"))
        >>> name, func, lpath = sch.state.resolve_loop(j, "blockize")
        >>> realize = child_realizes(lpath[-1])[0]
        >>> blockize_loop(sch.state, func, lpath, realize, "blockize")[1].name_hint
        'B_o'
    """
    target: For = lpath[-1]
    outer_loops = [s for s in lpath[scope_index(lpath) + 1 : -1] if isinstance(s, For)]
    used = used_vars(realize.iter_values)
    reduce_used = reduction_loop_vars(realize)
    spatial_used = set().union(
        *(
            used_vars(v)
            for iv, v in zip(realize.block.iter_vars, realize.iter_values)
            if iv.iter_type is IterType.SPATIAL
        )
    )
    iters, values, vmap = [], [], {}
    for lp in outer_loops:
        if lp.loop_var not in used:
            continue
        if lp.loop_var in reduce_used and lp.loop_var in spatial_used:
            msg = f"loop {lp.loop_var.name} feeds both spatial and reduction iteration variables"
            raise ScheduleError(p, msg, func, lp)
        kind = IterType.REDUCE if lp.loop_var in reduce_used else IterType.SPATIAL
        var = Var(f"v{lp.loop_var.name}", lp.loop_var.dtype)
        iters.append(IterVar(var, Range(lp.min, lp.extent), kind))
        values.append(lp.loop_var)
        vmap[lp.loop_var] = var
    body = substitute(target, vmap)
    inner = next(s for s in walk(body) if isinstance(s, BlockRealize))
    reads = _regions(body, inner, inner.block.reads)
    writes = _regions(body, inner, inner.block.writes)
    name = state.unique_block_name(func, f"{realize.block.name_hint}_o")
    outer = Block(tuple(iters), reads, writes, name, body)
    return BlockRealize(tuple(values), const(True), outer), outer


def _regions(
    body: For, inner: BlockRealize, regions: tuple[BufferRegion, ...]
) -> tuple[BufferRegion, ...]:
    path = find_path(body, lambda s: s is inner) or []
    doms = {s.loop_var: Range(s.min, s.extent) for s in path if isinstance(s, For)}
    bmap = binding_map(inner)
    out = []
    for region in regions:
        ranges = []
        for r in region.region:
            lo = bound(substitute(r.min, bmap), doms)
            hi = bound(
                substitute(_add(r.min, _add(r.extent, const(-1, r.extent.dtype))), bmap), doms
            )
            if lo is None or hi is None:
                out.append(BufferRegion.full(region.buffer))
                break
            ranges.append(Range(lo[0], _extent(lo[0], hi[1])))
        else:
            out.append(BufferRegion(region.buffer, tuple(ranges)))
    return tuple(out)


def _extent(lo: PrimExpr, hi: PrimExpr) -> PrimExpr:
    from unity.schedule.analysis import _neg, simplify

    return simplify(_add(_add(hi, _neg(lo)), const(1, lo.dtype)))
