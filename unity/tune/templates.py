"""Knob-taking schedule templates the tuner searches over.

`schedule_with_rules(func, lanes=..., parallel_min_work=...)` is the default rule set of
`unity.schedule.default` run with other values of its `RuleContext` knobs.

`schedule_matmul_tiled(func, knobs)` tiles the one matmul block of `func` with the
tile sizes and choices in `knobs` (the default rule picks them by a fixed table) and
gives the other blocks the default rules:

- ``pack``: copy a 2-D `B` into ``[N / tj, K, tj]`` panels first;
- ``ti`` x ``tj``: the register tile, accumulated in a `local` buffer;
- ``kb``: block the reduction by `kb` (None: no blocking);
- ``order``: ``"ij"`` or ``"ji"``, which tile loop is outer (and parallel);
- ``parallel`` / ``unroll``: parallelize the outer tile loop / unroll the `ti` loop.

Before::

    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"): C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

After ``schedule_matmul_tiled(func, dict(ti=4, tj=16, kb=None, pack=False, order="ij",
parallel=True, unroll=True))`` (abridged)::

    for i_0 in T.parallel(16):
        for j_0 in range(4):
            for i_1_init in range(4): for j_1_init in T.vectorized(16): C_local[...] = 0
            for k, i_1 in T.grid(64, 4): for j_1 in T.vectorized(16): C_local += ...
            for ax0 in range(4): for ax1 in T.vectorized(16): C[...] = C_local[...]
"""

from __future__ import annotations

from typing import Any

from unity.schedule.default import conv2d, conv2d_blocked, injective, matmul, reduction
from unity.schedule.default.analysis import BlockInfo, RuleContext, block_infos, const_extent
from unity.schedule.default.apply import schedule_primfunc
from unity.schedule.default.epilogue import inline_epilogue
from unity.schedule.default.fallback import schedule_fallback
from unity.schedule.default.normalize import unit_indices_as_vars
from unity.schedule.default.prepack import PREPACK
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule
from unity.tir.function import PrimFunc

__all__ = [
    "conv_blocked_tiling",
    "conv_tiling",
    "inline_producers",
    "matmul_extents",
    "schedule_matmul_tiled",
    "schedule_rest",
    "schedule_with_rules",
]


def schedule_with_rules(
    func: PrimFunc,
    lanes: int,
    parallel_min_work: int,
    num_cores: int = 2,
    parallel_min_copy: int = RuleContext.parallel_min_copy,
) -> PrimFunc:
    """The default rules of `unity.schedule.default`, with other `RuleContext` knobs.

    Example:
        >>> schedule_with_rules(func, lanes=8, parallel_min_work=0)  # doctest: +SKIP
    """
    ctx = RuleContext(
        lanes=lanes,
        num_cores=num_cores,
        parallel_min_work=parallel_min_work,
        parallel_min_copy=parallel_min_copy,
    )
    return schedule_primfunc(func, ctx)


def conv_tiling(func: PrimFunc, lanes: int) -> conv2d.ConvTiling | None:
    """`conv2d.conv_tiling` of the one conv2d block of `func`; None without exactly one.

    Example:
        >>> conv_tiling(conv_func, 16).tile  # doctest: +SKIP
        (32, 8)
    """
    infos = block_infos(unit_indices_as_vars(func))
    anchors = [b for b in infos or [] if conv2d.applies(b)]
    return conv2d.conv_tiling(anchors[0], lanes) if len(anchors) == 1 else None


def conv_blocked_tiling(func: PrimFunc, ctx: RuleContext) -> conv2d_blocked.BlockedTiling | None:
    """`conv2d_blocked.blocked_tiling` of the one blocked conv2d block of `func`; None
    without exactly one.

    Example:
        >>> conv_blocked_tiling(blocked_conv_func, RuleContext(lanes=8)).tile  # doctest: +SKIP
        (16, 4)
    """
    infos = block_infos(unit_indices_as_vars(func))
    anchors = [b for b in infos or [] if conv2d_blocked.applies(b)]
    return conv2d_blocked.blocked_tiling(anchors[0], ctx) if len(anchors) == 1 else None


def matmul_extents(func: PrimFunc) -> tuple[int, int, int, bool] | None:
    """`(M, N, K, b_is_2d)` of the one matmul block of `func`; None without exactly one.

    `N` and `K` must be constants; `M` is None when symbolic (a sequence length: the
    template then guards the last row tile).

    Example:
        >>> matmul_extents(matmul_func(64))  # doctest: +SKIP
        (64, 64, 64, True)
    """
    infos = block_infos(unit_indices_as_vars(func))
    anchors = [b for b in infos or [] if matmul.applies(b)]
    if len(anchors) != 1:
        return None
    info = anchors[0]
    _, b_load, i, j, k = matmul.match(info)
    ext = [const_extent(info.loops[info.loop_of(v)]) for v in (i, j, k)]
    if ext[1] is None or ext[2] is None:
        return None
    return ext[0], ext[1], ext[2], len(b_load.indices) == 2


def schedule_matmul_tiled(func: PrimFunc, knobs: dict[str, Any], num_cores: int = 2) -> Schedule:
    """Tile the matmul block of `func` by `knobs`; the other blocks get the default rules.

    Raises:
        ScheduleError: `func` has no single matmul block, or a knob does not fit it.

    Example:
        >>> sch = schedule_matmul_tiled(func, dict(ti=4, tj=16, kb=None, pack=False,
        ...     order="ij", parallel=True, unroll=True))  # doctest: +SKIP
    """
    func = unit_indices_as_vars(func)
    sch = Schedule(func)
    infos = block_infos(func)
    anchors = [b for b in infos or [] if matmul.applies(b)]
    if len(anchors) != 1:
        raise ScheduleError("matmul template", "the function has no single matmul block")
    inline_producers(sch, func, infos, anchors[0].name)
    infos = block_infos(sch.mod["main"]) or []
    ctx = RuleContext(num_cores=num_cores)
    done: set[str] = set()
    for info in infos:
        if info.name in done:
            continue
        if matmul.applies(info):
            done |= {info.name, *_tile(sch, info, knobs, num_cores)}
        else:
            schedule_rest(sch, info, ctx)
            done.add(info.name)
    return sch


def inline_producers(sch: Schedule, func: PrimFunc, infos: list[BlockInfo], anchor: str) -> None:
    """Inline spatial blocks writing intermediates, except into the `anchor` block.

    Example:
        >>> inline_producers(sch, func, block_infos(func), "conv")  # doctest: +SKIP
    """
    params = set(func.buffer_params())
    for info in infos:
        if info.is_reduction or info.output is None or info.output in params:
            continue
        readers = [
            b for b in infos if b is not info and info.output in {r.buffer for r in b.block.reads}
        ]
        if not readers or any(b.name == anchor for b in readers):
            continue
        trial = sch.copy()
        try:
            trial.compute_inline(trial.get_block(info.name))
        except ScheduleError:
            continue
        sch.state, sch.trace = trial.state, trial.trace


def schedule_rest(sch: Schedule, info: BlockInfo, ctx: RuleContext) -> None:
    """Give `info` the first default rule (reduction, injective, fallback) that takes it.

    Example:
        >>> schedule_rest(sch, info, RuleContext())  # doctest: +SKIP
    """
    rules = []
    if reduction.applies(info):
        rules.append(reduction.schedule_reduction)
    if injective.applies(info):
        rules.append(injective.schedule_injective)
    rules.append(schedule_fallback)
    for rule in rules:
        trial = sch.copy()
        try:
            rule(trial, info, ctx)
        except ScheduleError:
            continue
        sch.state, sch.trace = trial.state, trial.trace
        return


def _tile(
    sch: Schedule, info: BlockInfo, knobs: dict[str, Any], num_cores: int
) -> list[str]:
    _, b_load, i, j, k = matmul.match(info)
    ti, tj, kb = knobs["ti"], knobs["tj"], knobs["kb"]
    extents = [const_extent(info.loops[info.loop_of(v)]) for v in (i, j, k)]
    for name, tile, extent in (
        ("ti", ti, extents[0] or ti),  # symbolic rows: any tile, the last one guarded
        ("tj", tj, extents[1]),
        ("kb", kb or 1, extents[2]),
    ):
        if extent is None or extent % tile:
            raise ScheduleError(
                "matmul template", f"knob {name}={tile} does not divide the extent {extent}"
            )
    c = sch.get_block(info.name)
    loops = sch.get_loops(c)
    if knobs["pack"]:
        if len(b_load.indices) != 2:
            raise ScheduleError("matmul template", "pack=True needs a 2-D B operand")
        _pack(sch, c, info, b_load, j, tj)
    acc = sch.cache_write(c, 0, "local")
    taken = inline_epilogue(sch, acc, info)
    batch = loops[: info.loop_of(i)]
    i0, i1 = sch.split(loops[info.loop_of(i)], [None, ti])
    j0, j1 = sch.split(loops[info.loop_of(j)], [None, tj])
    k_loop = loops[info.loop_of(k)]
    ks = sch.split(k_loop, [None, kb]) if kb and kb < extents[2] else [k_loop]
    outer = [i0, j0] if knobs["order"] == "ij" else [j0, i0]
    sch.reorder(*batch, *outer, *ks, i1, j1)
    sch.reverse_compute_at(acc, outer[1])
    init = sch.decompose_reduction(c, ks[0])
    if knobs["parallel"]:
        matmul.parallel_tiles(sch, info, batch, outer[0], extents[0] is None, num_cores)
    if knobs["unroll"]:
        sch.unroll(i1)
    sch.vectorize(j1)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.vectorize(sch.get_loops(acc)[-1])
    return taken


def _pack(sch: Schedule, c, info: BlockInfo, b_load, j, tj: int) -> None:
    """Copy `B` into ``[N / tj, K, tj]`` panels (parallel over panels, vectorized copy)."""
    index = [r.buffer for r in info.block.reads].index(b_load.buffer)
    packed = sch.cache_read(c, index, "global")
    if b_load.indices[-1] is j:  # B[k, j]
        sch.transform_layout(packed, ("write", 0), lambda kk, jj: (jj // tj, kk, jj % tj))
        sch.annotate(packed, PREPACK, f"kn:{tj}")  # `DefaultSchedules` packs a constant B once
        pk, pj = sch.get_loops(packed)
    else:  # B[j, k]
        sch.transform_layout(packed, ("write", 0), lambda jj, kk: (jj // tj, kk, jj % tj))
        sch.annotate(packed, PREPACK, f"nk:{tj}")
        pj, pk = sch.get_loops(packed)
    pj0, pj1 = sch.split(pj, [None, tj])
    sch.reorder(pj0, pk, pj1)
    sch.parallel(pj0)
    sch.vectorize(pj1)
