"""`decompose_reduction`: move a reduction block's `init` into its own block above a loop.

Before::

    for i, k in T.grid(4, 8):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]

After ``sch.decompose_reduction(c, k)``::

    for i in T.serial(4):
        with T.block("C_init"):
            vi = T.axis.spatial(4, i)
            C[vi] = T.float32(0)
        for k in T.serial(8):
            with T.block("C_update"):
                vi, vk = T.axis.remap("SR", [i, k])
                C[vi] = C[vi] + A[vi, vk]
"""

from __future__ import annotations

from unity.schedule.analysis import reduction_loop_vars, used_vars, with_regions
from unity.schedule.error import ScheduleError
from unity.schedule.scope import scope_index
from unity.schedule.state import BlockRV, LoopRV, ScheduleState
from unity.schedule.tree import replace_stmts
from unity.tir.expr import IterType, IterVar, PrimExpr, Var, conjoin, conjuncts
from unity.tir.functor import substitute
from unity.tir.stmt import Block, BlockRealize, For, ForKind, Stmt, seq

P = "decompose_reduction"


def decompose_reduction(state: ScheduleState, block: BlockRV, loop: LoopRV) -> BlockRV:
    """Split the init of reduction `block` into a block `<name>_init` placed before `loop`.

    The loops between `loop` and the block that only feed spatial iteration variables
    are copied above the init block.  The update block is renamed `<name>_update`
    (handles follow it).

    Raises:
        ScheduleError: the block has no init, or `loop` is not above the block in its scope.

    Example:
        >>> init = sch.decompose_reduction(sch.get_block("C"), k)  # doctest: +SKIP
    """
    func_name, func, bpath = state.resolve_block(block, P)
    _, _, lpath = state.resolve_loop(loop, P)
    realize: BlockRealize = bpath[-1]
    target: For = lpath[-1]
    blk = realize.block
    if blk.init is None:
        raise ScheduleError(
            P, f"block {blk.name_hint} has no init (it is not a reduction)", func, blk
        )
    if target not in bpath or any(
        isinstance(s, BlockRealize) for s in bpath[bpath.index(target) : -1]
    ):
        msg = f"loop {target.loop_var.name} is not above block {blk.name_hint} in its scope"
        raise ScheduleError(P, msg, func, target)
    loops = [s for s in bpath[bpath.index(target) : -1] if isinstance(s, For)]
    reduce_vars = reduction_loop_vars(realize)
    bound_vars = used_vars(realize.iter_values)
    for lp in loops:
        if lp.loop_var not in bound_vars:
            msg = (
                f"loop {lp.loop_var.name} feeds no iteration variable of block {blk.name_hint}; "
                "the update would repeat without its init"
            )
            raise ScheduleError(P, msg, func, lp)
    for outer in bpath[scope_index(bpath) + 1 : bpath.index(target)]:
        if isinstance(outer, For) and outer.loop_var in reduce_vars:
            msg = (
                f"loop {target.loop_var.name} is inside reduction loop {outer.loop_var.name}; "
                "the init must go before every reduction loop"
            )
            raise ScheduleError(P, msg, func, target)
    outside = reduce_vars - {lp.loop_var for lp in loops}
    if outside:
        names = ", ".join(sorted(v.name for v in outside))
        msg = f"block {blk.name_hint} reduces over {names}, defined outside loop {target.loop_var.name}"
        raise ScheduleError(P, msg, func, target)
    init_realize = _init_realize(
        realize, loops, state.unique_block_name(func, f"{blk.name_hint}_init"), func
    )
    nest: Stmt = init_realize[0]
    for old, new_var in reversed(init_realize[1]):
        nest = For(new_var, old.min, old.extent, ForKind.SERIAL, nest)
    update_name = state.unique_block_name(func, f"{blk.name_hint}_update")
    new_realize = realize.replace(block=blk.replace(init=None, name_hint=update_name))
    new_loop = replace_stmts(target, {realize: new_realize})
    body = replace_stmts(func.body, {target: seq(nest, new_loop)})
    state.commit(func_name, func.replace(body=body))
    state.rename_block(func_name, blk.name_hint, update_name)
    return state.block_rv(func_name, init_realize[0].block.name_hint)


def _init_realize(realize: BlockRealize, loops: list[For], name: str, func: object):
    blk = realize.block
    vmap: dict[Var, PrimExpr] = {}
    iters, values = [], []
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        if iv.iter_type is IterType.SPATIAL:
            nv = Var(iv.var.name, iv.var.dtype)
            vmap[iv.var] = nv
            iters.append(IterVar(nv, iv.dom, IterType.SPATIAL))
            values.append(value)
    spatial_used = used_vars(values)
    reduce_used = reduction_loop_vars(realize)
    copied = [lp for lp in loops if lp.loop_var in spatial_used]
    for lp in copied:
        if lp.loop_var in reduce_used:
            msg = f"loop {lp.loop_var.name} feeds both spatial and reduction iteration variables"
            raise ScheduleError(P, msg, func, lp)
    lmap: dict[Var, PrimExpr] = {
        lp.loop_var: Var(f"{lp.loop_var.name}_init", lp.loop_var.dtype) for lp in copied
    }
    inner = {lp.loop_var for lp in loops}
    preds = [
        substitute(p, lmap)
        for p in conjuncts(realize.predicate)
        if used_vars(p) & inner <= set(lmap)
    ]
    init = Block(tuple(iters), (), (), name, substitute(blk.init, vmap))
    new = BlockRealize(
        tuple(substitute(v, lmap) for v in values), conjoin(preds), with_regions(init)
    )
    return new, [(lp, lmap[lp.loop_var]) for lp in copied]
