"""Default rule for injective blocks (elementwise, broadcast, copies, padding).

Before::

    for i, j, k in T.grid(64, 56, 56):
        with T.block("T_add"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = A[vi, vj, vk] + B[vk]

After ``schedule_injective``::

    for i_j_fused in T.parallel(3584):
        for k in T.vectorized(56):
            with T.block("T_add"): ...

The outer loops are fused into one parallel loop (only when the nest is big enough to
pay for a parallel launch and the second core's cache misses, `parallel_min_copy`); the
innermost loop is vectorized when it walks the written buffer contiguously.
`VectorizeLoop` turns any extent into vector chunks plus a scalar tail, and falls back
to a serial loop for a body with no vector form, so the rule never needs to prove more
than that the loops are data parallel, which the `parallel`/`vectorize` primitives
check themselves.
"""

from __future__ import annotations

from unity.schedule.default.analysis import BlockInfo, RuleContext, stride_in, work_size
from unity.schedule.schedule import Schedule
from unity.schedule.state import LoopRV

__all__ = ["applies", "parallel_outer", "schedule_injective"]


def applies(info: BlockInfo) -> bool:
    """True for a block with only spatial iteration variables, trivially bound.

    Example:
        >>> applies(info)  # doctest: +SKIP
        True
    """
    return not info.is_reduction and info.trivial_binding() and info.store is not None


def schedule_injective(sch: Schedule, info: BlockInfo, ctx: RuleContext) -> None:
    """Parallelize the fused outer loops and vectorize the contiguous inner loop.

    Example:
        >>> schedule_injective(sch, info, RuleContext())  # doctest: +SKIP
    """
    block = sch.get_block(info.name)
    loops = sch.get_loops(block)
    if not loops:
        return
    inner_var = info.iter_var(info.loops[-1])
    contiguous = inner_var is not None and stride_in(info.store.indices, inner_var) == 1
    outer = loops[:-1] if contiguous else loops
    if contiguous:
        sch.vectorize(loops[-1])
    work = work_size(info)
    if outer and (work is None or work >= ctx.parallel_min_copy):
        parallel_outer(sch, outer)


def parallel_outer(sch: Schedule, loops: list[LoopRV]) -> LoopRV:
    """Fuse consecutive loops (outermost first) into one and make it parallel.

    Example:
        >>> parallel_outer(sch, sch.get_loops(block)[:2])  # doctest: +SKIP
    """
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    sch.parallel(fused)
    return fused


def parallel_one(
    sch: Schedule,
    loops: list[LoopRV],
    extents: list[int | None],
    ctx: RuleContext,
    hoist: bool = False,
    pick: int | None = None,
) -> LoopRV | None:
    """Make ONE of `loops` (a perfect nest, outermost first) parallel, without fusing; return
    it (None when every loop has one iteration).

    Takes the outermost loop with at least `4 * num_cores` iterations, else a loop of
    symbolic extent (a batch size, which may well be 1), else the one with the most.
    `pick` (an index into `loops`) overrides the choice.  With `hoist`, the chosen loop
    moves outermost, so the nest launches the thread pool
    once.  Used above a register tile accumulated in a `local` buffer: a fused loop's
    `//` and `%` indices keep `CompactBufferAllocation` from proving the tiles disjoint,
    and the tile would stay a full-size buffer.

    Example:
        >>> parallel_one(sch, [n, o0, y], [1, 2, 56], RuleContext())  # doctest: +SKIP
    """
    if not loops:
        return None
    want = 4 * ctx.num_cores
    if pick is None:
        pick = next((k for k, e in enumerate(extents) if e is not None and e >= want), None)
    if pick is None:
        pick = next((k for k, e in enumerate(extents) if e is None), None)
    if pick is None:
        pick = max(range(len(loops)), key=lambda k: extents[k])
    if extents[pick] == 1:
        return None
    if hoist and pick:
        sch.reorder(loops[pick], *loops[:pick])  # one parallel launch, not one per outer step
    sch.parallel(loops[pick])
    return loops[pick]
