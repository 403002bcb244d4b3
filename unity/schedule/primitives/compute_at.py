"""`compute_at` / `reverse_compute_at`: move a block under a loop of its consumer/producer.

The moved block's loops are regenerated (`ax0`, `ax1`, ...) to cover only the region
needed (or produced) by one iteration of the target loop.

Before::

    for i in T.serial(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i_0, i_1 in T.grid(2, 4):
        with T.block("C"):
            vi = T.axis.spatial(8, i_0 * 4 + i_1)
            C[vi] = B[vi] + T.float32(1)

After ``sch.compute_at(sch.get_block("B"), i_0)``::

    for i_0 in T.serial(2):
        for ax0 in T.serial(4):
            with T.block("B"):
                vi = T.axis.spatial(8, i_0 * 4 + ax0)
                B[vi] = A[vi] * T.float32(2)
        for i_1 in T.serial(4):
            with T.block("C"):
                vi = T.axis.spatial(8, i_0 * 4 + i_1)
                C[vi] = B[vi] + T.float32(1)
"""

from __future__ import annotations

from unity.schedule.analysis import (
    _add,
    _fold,
    _neg,
    as_int,
    binding_map,
    bound,
    buffers_read,
    buffers_written,
    child_realizes,
    reduction_loop_vars,
    simplify,
    used_vars,
)  # fmt: skip
from unity.schedule.error import ScheduleError
from unity.schedule.scope import scope_index, scope_realizes
from unity.schedule.state import BlockRV, LoopRV, ScheduleState
from unity.schedule.tree import find_path, replace_stmts
from unity.tir.buffer import Buffer, BufferRegion
from unity.tir.expr import (
    IterType, PrimExpr, Range, Var, conjoin, const, ge, lt, max_value_of, min_value_of,
)  # fmt: skip
from unity.tir.function import PrimFunc
from unity.tir.functor import substitute
from unity.tir.stmt import BlockRealize, For, ForKind, Stmt, seq


def compute_at(
    state: ScheduleState, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False
) -> None:
    """Move producer `block` under `loop`, computing only what one iteration consumes.

    Raises:
        ScheduleError: the loop is not in the block's scope, a consumer is not under the
            loop, the block comes after the loop, a block in between changes its inputs,
            or the block's predicate uses a loop not bound alone to an iteration variable.

    Example:
        >>> sch.compute_at(sch.get_block("B"), i_0)  # doctest: +SKIP
    """
    p = "compute_at"
    func_name, func, bpath, lpath, realize, target, siblings = _common(state, block, loop, p)
    under = child_realizes(target)
    writes = buffers_written([realize])
    consumers = [r for r in siblings if r is not realize and buffers_read([r]) & writes]
    if not consumers:
        raise ScheduleError(
            p, f"block {realize.block.name_hint} has no consumer", func, realize.block
        )
    for c in consumers:
        if c not in under:
            msg = f"consumer {c.block.name_hint} of block {realize.block.name_hint} is not under loop {target.loop_var.name}"
            raise ScheduleError(p, msg, func, target)
    first = siblings.index(consumers[0])
    if siblings.index(realize) > siblings.index(under[0]):
        raise ScheduleError(
            p,
            f"block {realize.block.name_hint} comes after loop {target.loop_var.name}",
            func,
            realize.block,
        )
    reads = buffers_read([realize])
    for r in siblings[siblings.index(realize) + 1 : first] + under:
        if buffers_written([r]) & (reads | writes):
            msg = f"block {r.block.name_hint} writes a buffer block {realize.block.name_hint} reads or writes"
            raise ScheduleError(p, msg, func, r.block)
    buf, key = _key_access(realize, realize.block.writes, func, p, "writes")
    region = _hull(
        [_needed(target, c, buf, c.block.reads) for c in consumers if buf in buffers_read([c])], buf
    )
    nest = _nest(realize, key, region, preserve_unit_loops, lpath, bpath, func, p)
    new_target = target.replace(body=seq(nest, target.body))
    state.commit(
        func_name, func.replace(body=replace_stmts(func.body, {realize: None, target: new_target}))
    )


def reverse_compute_at(
    state: ScheduleState, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False
) -> None:
    """Move consumer `block` under `loop`, consuming what one iteration produces.

    Raises:
        ScheduleError: a producer is not under the loop, the loop is a reduction loop of
            a producer (the consumer would read partial results), what one iteration
            produces is not a box (`_check_box`), or the block comes before the loop.

    Example:
        >>> sch.reverse_compute_at(sch.get_block("C"), i_0)  # doctest: +SKIP
    """
    p = "reverse_compute_at"
    func_name, func, bpath, lpath, realize, target, siblings = _common(state, block, loop, p)
    under = child_realizes(target)
    reads = buffers_read([realize])
    index = siblings.index(realize)
    producers = [r for r in siblings[:index] if buffers_written([r]) & reads]
    if not producers:
        raise ScheduleError(
            p, f"block {realize.block.name_hint} has no producer", func, realize.block
        )
    for prod in producers:
        if prod not in under:
            msg = f"producer {prod.block.name_hint} of block {realize.block.name_hint} is not under loop {target.loop_var.name}"
            raise ScheduleError(p, msg, func, target)
        outer = {s.loop_var for s in lpath if isinstance(s, For)}
        if outer & reduction_loop_vars(prod):
            msg = f"loop {target.loop_var.name} (or a loop above it) is a reduction loop of producer {prod.block.name_hint}"
            raise ScheduleError(p, msg, func, target)
    if index < siblings.index(under[-1]):
        raise ScheduleError(
            p,
            f"block {realize.block.name_hint} comes before loop {target.loop_var.name}",
            func,
            realize.block,
        )
    writes = buffers_written([realize])
    for r in siblings[siblings.index(under[-1]) + 1 : index] + under:
        if (buffers_read([r]) | buffers_written([r])) & writes or (
            r not in producers and buffers_written([r]) & reads
        ):
            msg = f"block {r.block.name_hint} touches a buffer block {realize.block.name_hint} reads or writes"
            raise ScheduleError(p, msg, func, r.block)
    produced = buffers_written(producers) & reads
    buf, key = _key_access(
        realize, tuple(r for r in realize.block.reads if r.buffer in produced), func, p, "reads"
    )
    for q in producers:
        _check_box(target, q, buf, realize, func)
    region = _hull(
        [_needed(target, q, buf, q.block.writes) for q in producers if buf in buffers_written([q])],
        buf,
    )
    nest = _nest(realize, key, region, preserve_unit_loops, lpath, bpath, func, p)
    new_target = target.replace(body=seq(target.body, nest))
    state.commit(
        func_name, func.replace(body=replace_stmts(func.body, {realize: None, target: new_target}))
    )


def _common(state: ScheduleState, block: BlockRV, loop: LoopRV, p: str):
    func_name, func, bpath = state.resolve_block(block, p)
    _, _, lpath = state.resolve_loop(loop, p)
    realize: BlockRealize = bpath[-1]
    target: For = lpath[-1]
    blk = realize.block
    if blk.init is None and any(iv.iter_type is not IterType.SPATIAL for iv in blk.iter_vars):
        msg = f"block {blk.name_hint} accumulates without an init; moving it could run an update twice"
        raise ScheduleError(p, msg, func, blk)
    if realize in lpath:
        raise ScheduleError(
            p,
            f"loop {target.loop_var.name} is inside block {realize.block.name_hint}",
            func,
            target,
        )
    bs, ls = scope_index(bpath), scope_index(lpath)
    if (bpath[bs] if bs >= 0 else None) is not (lpath[ls] if ls >= 0 else None):
        msg = f"loop {target.loop_var.name} is not in the scope of block {realize.block.name_hint}"
        raise ScheduleError(p, msg, func, target)
    if not child_realizes(target):
        raise ScheduleError(p, f"loop {target.loop_var.name} contains no block", func, target)
    return func_name, func, bpath, lpath, realize, target, scope_realizes(func, bpath)


def _key_access(
    realize: BlockRealize, regions: tuple[BufferRegion, ...], func: PrimFunc, p: str, what: str
):
    blk = realize.block
    spatial = {iv.var for iv in blk.iter_vars if iv.iter_type is IterType.SPATIAL}
    if len({r.buffer for r in regions}) != 1:
        msg = f"block {blk.name_hint} must {what[:-1]} exactly one buffer involved here, found {len(regions)}"
        raise ScheduleError(p, msg, func, blk)
    region = regions[0]
    key = [r.min for r in region.region]
    ok = all(
        isinstance(v, Var) and v in spatial and as_int(r.extent) == 1
        for v, r in zip(key, region.region)
    )
    if not ok or len(set(key)) != len(key):
        msg = f"block {blk.name_hint} {what} {region.buffer.name} at something other than a point of distinct spatial iteration vars"
        raise ScheduleError(p, msg, func, blk)
    return region.buffer, key


def _check_box(
    target: For, producer: BlockRealize, buf: Buffer, consumer: BlockRealize, func: PrimFunc
) -> None:
    """Raise when what one iteration of `target` has `producer` write of `buf` is not a box:
    two of its dimensions move with one loop inside `target` (a fused ``y * W + x`` loop
    split into tiles writes part of a row).  The consumer's loops would cover the box
    around it and read elements not yet computed; under a parallel loop, elements another
    thread is computing (a race, and a wrong result)."""
    path = find_path(target, lambda s: s is producer) or []
    inner = {
        s.loop_var for s in path[1:] if isinstance(s, For) and as_int(s.extent) != 1
    }  # fmt: skip
    bmap = binding_map(producer)
    for region in producer.block.writes:
        if region.buffer is not buf:
            continue
        seen: dict[Var, int] = {}
        for dim, r in enumerate(region.region):
            for var in used_vars(substitute(r.min, bmap)) & inner:
                if var in seen and seen[var] != dim:
                    msg = (
                        f"what one iteration of loop {target.loop_var.name} has block "
                        f"{producer.block.name_hint} write of {buf.name} is not a box "
                        f"(dimensions {seen[var]} and {dim} both move with loop {var.name}); "
                        f"block {consumer.block.name_hint} would read elements of it not yet "
                        f"computed. Give each dimension its own loops, or move the block under "
                        f"a loop that covers whole rows"
                    )
                    raise ScheduleError("reverse_compute_at", msg, func, target)
                seen[var] = dim


def _needed(
    target: For, realize: BlockRealize, buf: Buffer, regions: tuple[BufferRegion, ...]
) -> list[Range] | None:
    path = find_path(target, lambda s: s is realize) or []
    doms = {s.loop_var: Range(s.min, s.extent) for s in path[1:] if isinstance(s, For)}
    bmap = binding_map(realize)
    out: list[Range] | None = None
    for region in regions:
        if region.buffer is not buf:
            continue
        ranges = []
        for r in region.region:
            lo = bound(substitute(r.min, bmap), doms)
            hi = bound(
                substitute(_add(r.min, _add(r.extent, const(-1, r.extent.dtype))), bmap), doms
            )
            if lo is None or hi is None:
                return None
            ranges.append((lo[0], hi[1]))
        out = (
            [Range(lo, hi) for lo, hi in ranges]
            if out is None
            else [
                Range(_fold([a.min, lo], min_value_of), _fold([a.extent, hi], max_value_of))
                for a, (lo, hi) in zip(out, ranges)
            ]
        )
    return out


def _hull(items: list[list[Range] | None], buf: Buffer) -> list[Range]:
    """Union of (lo, hi) pairs (stored in Range fields) into (min, extent) ranges."""
    full = [Range(const(0, d.dtype), _add(d, const(-1, d.dtype))) for d in buf.shape]
    los_his = [it if it is not None else full for it in items]
    out = []
    for dim in range(buf.ndim):
        lo = _fold([x[dim].min for x in los_his], min_value_of)
        hi = _fold([x[dim].extent for x in los_his], max_value_of)
        out.append(Range(lo, simplify(_add(_add(hi, _neg(lo)), const(1, lo.dtype)))))
    return out


def _nest(
    realize: BlockRealize,
    key: list[PrimExpr],
    region: list[Range],
    keep_units: bool,
    lpath: list,
    bpath: list,
    func: PrimFunc,
    p: str,
) -> Stmt:
    blk = realize.block
    dim_of = {v: d for d, v in enumerate(key)}
    doms = {s.loop_var: Range(s.min, s.extent) for s in lpath if isinstance(s, For)}
    loops: list[tuple[Var, PrimExpr]] = []
    values: list[PrimExpr] = []
    preds: list[PrimExpr] = []
    for iv in blk.iter_vars:
        r = region[dim_of[iv.var]] if iv.var in dim_of else iv.dom
        if as_int(r.extent) == 1 and not keep_units:
            value = r.min
        else:
            ax = Var(f"ax{len(loops)}", iv.var.dtype)
            loops.append((ax, r.extent))
            value = _add(r.min, ax)
        values.append(value)
        if iv.var in dim_of:
            preds += _guards(
                value, iv.dom, {**doms, **{a: Range(const(0, e.dtype), e) for a, e in loops}}
            )
    preds += _carried_predicate(realize, values, doms, bpath, func, p)
    nest: Stmt = BlockRealize(tuple(values), conjoin(preds), blk)
    for ax, ext in reversed(loops):
        nest = For(ax, const(0, ax.dtype), ext, ForKind.SERIAL, nest)
    return nest


def _carried_predicate(
    realize: BlockRealize,
    values: list[PrimExpr],
    doms: dict[Var, Range],
    bpath: list,
    func: PrimFunc,
    p: str,
) -> list[PrimExpr]:
    """The block's own predicate, rewritten for its new loops: a guard of a split that
    does not divide (``k_0 * 8 + k_1 < seq``) still holds the block to its domain, whose
    box of iteration values the regenerated loops cover whole (dropping it read and
    summed past the end of every row).  Each old loop variable is replaced by the new
    value of the iteration variable bound to it alone; loops still above the block stay.
    `bpath` is the path to the block before the move (its old loops)."""
    pred = realize.predicate
    if as_int(pred) == 1:
        return []
    new_value = {
        old: new
        for old, new in zip(realize.iter_values, values)
        if isinstance(old, Var)
    }  # fmt: skip
    old_loops = {st.loop_var for st in bpath if isinstance(st, For)}
    lost = (used_vars(pred) & old_loops) - set(new_value) - set(doms)
    if lost:
        names = ", ".join(sorted(v.name for v in lost))
        msg = (
            f"block {realize.block.name_hint} has the predicate {pred}, which uses loops "
            f"({names}) not bound alone to an iteration variable; it cannot follow the block"
        )
        raise ScheduleError(p, msg, func, realize.block)
    return [substitute(pred, new_value)]


def _guards(value: PrimExpr, dom: Range, doms: dict[Var, Range]) -> list[PrimExpr]:
    b = bound(value, doms)
    lo = as_int(b[0]) if b else None
    hi = as_int(b[1]) if b else None
    dmin, dext = as_int(dom.min), as_int(dom.extent)
    out = []
    if lo is None or dmin is None or lo < dmin:
        out.append(ge(value, dom.min))
    if hi is None or dmin is None or dext is None or hi >= dmin + dext:
        out.append(lt(value, _add(dom.min, dom.extent)))
    return out
