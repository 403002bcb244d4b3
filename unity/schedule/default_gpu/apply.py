"""`apply_default_gpu_schedules`: bind every unscheduled PrimFunc to GPU blocks and threads.

Like the CPU rules (`unity.schedule.default`), the choice reads structure only:
GEMM-shaped blocks (matmul, batch matmul, dense, conv2d: `gemm.gemm_roles`) are first
brought to ``(b, m, n, k)`` form by `gemm.prepare_gemm`; then spatial blocks writing
intermediate buffers are inlined into their consumers where `compute_inline` allows
(a conv's padding into its input's reindex copy).  A function whose blocks reduce each
row and then use it (softmax, layer norm: `rules.row_chain`) becomes one kernel with a
thread block per row; otherwise each remaining block becomes one kernel, by
`tensor_core.schedule_matmul_wmma` for a float16 GEMM whose sizes divide into its
tiles (tensor cores; the epilogue computed from each warp's staged fragments), else
`matmul.schedule_matmul_tiled` for a GEMM (its reindex copies inlined into the shared
tiles and the write-back), `rules.schedule_reduction` for other reductions, else
`rules.schedule_spatial`.  A function already holding a thread binding, or carrying
``tir.is_scheduled``, is left as it is.
Intermediate buffers stay in global memory (allocated by the host between kernels).

Example:
    >>> mod = apply_default_gpu_schedules(mod)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Collection

from unity.ir.module import IRModule
from unity.schedule.default.analysis import BlockInfo, block_infos
from unity.schedule.default.normalize import unit_indices_as_vars
from unity.schedule.default_gpu.gemm import (
    finish_gemm, gemm_roles, prepare_gemm, rows_fastest, split_k,
)  # fmt: skip
from unity.schedule.default_gpu.matmul import schedule_matmul_tiled
from unity.schedule.default_gpu.tensor_core import schedule_matmul_wmma, wmma_operands
from unity.schedule.default_gpu.rules import (
    row_chain, schedule_reduction, schedule_row_chain, schedule_serial_reduction, schedule_spatial,
)  # fmt: skip
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule
from unity.schedule.scope import with_root_block
from unity.schedule.tree import find_path, walk
from unity.tir.function import PrimFunc
from unity.tir.functor import post_order_visit
from unity.tir.stmt import BlockRealize, For, ForKind


def apply_default_gpu_schedules(mod: IRModule, threads: int = 256) -> IRModule:
    """Schedule every PrimFunc of `mod` for the GPU (unless scheduled or thread-bound).

    Example:
        >>> from unity import te
        >>> A = te.placeholder((64,), name="A")
        >>> B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
        >>> out = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([A, B])}))
        >>> out["main"].attrs["tir.is_scheduled"]
        True
    """
    out = mod.copy()
    for gv, func in list(mod.items()):
        if not isinstance(func, PrimFunc) or func.attrs.get("tir.is_scheduled") or _has_threads(func):
            continue
        out.update_func(gv, schedule_gpu_primfunc(func, threads))
    return out


def schedule_gpu_primfunc(func: PrimFunc, threads: int = 256) -> PrimFunc:
    """The default GPU schedule of one PrimFunc (marked ``tir.is_scheduled``).

    Raises:
        ScheduleError: a block fits neither rule (its loops are not a perfect nest).

    Example:
        >>> scheduled = schedule_gpu_primfunc(func)  # doctest: +SKIP
    """
    func = unit_indices_as_vars(with_root_block(func))
    sch = Schedule(func)
    infos = block_infos(func)
    if infos is None:
        raise ScheduleError("default_gpu", "the function is not a sequence of perfect loop nests "
                            "(schedule it by hand)", func)
    params = set(func.buffer_params())
    gemms = _prepare_gemms(sch, infos, params)
    staged = {name for names in gemms.values() for name in names.values()}
    _inline_producers(sch, infos, params, keep=staged)
    staged |= _absorb_epilogues(sch, gemms)
    side = _square_side(threads)
    infos = [i for i in block_infos(sch.mod["main"]) or [] if i.name not in staged]
    rows = None if gemms else row_chain(infos)
    if rows is not None:
        trial = sch.copy()
        try:
            schedule_row_chain(trial, infos, rows, threads)
        except ScheduleError:
            pass
        else:
            return trial.mod["main"].with_attr("tir.is_scheduled", True)
    for info in infos:
        trial = sch.copy()
        if info.name in gemms and _tensor_core_gemm(trial, info.name, gemms[info.name]):
            sch.state, sch.trace = trial.state, trial.trace
            continue
        trial = sch.copy()
        if info.name not in gemms or not _tile_gemm(trial, info.name, gemms[info.name], side):
            trial = sch.copy()
            _schedule_block(trial, info, threads)
            for name in gemms.get(info.name, {}).values():  # its copies, now kernels of their own
                _schedule_block(trial, _info_of(trial, name), threads)
        sch.state, sch.trace = trial.state, trial.trace
    return sch.mod["main"].with_attr("tir.is_scheduled", True)


def _prepare_gemms(sch: Schedule, infos: list[BlockInfo], params: set) -> dict[str, dict[str, str]]:
    """Bring each GEMM-shaped block to ``(b, m, n, k)`` form (`gemm.prepare_gemm`); by block,
    the reindex copies that its tiled schedule inlines again."""
    gemms = {}
    for info in infos:
        roles = gemm_roles(info)
        if roles is None:
            continue
        trial = sch.copy()
        try:
            split = split_k(trial, info, roles)
            if split is not None:  # the partial sums are the GEMM; a short reduction adds them
                info, roles = split
            gemms[info.name] = prepare_gemm(trial, info, roles, stage_output=info.output not in params)
        except ScheduleError:
            continue
        sch.state, sch.trace = trial.state, trial.trace
    return gemms


def _tile_gemm(sch: Schedule, name: str, staged: dict[str, str], side: int) -> bool:
    """The tiled rule on GEMM block `name` and its copies; False when a primitive refused."""
    try:
        schedule_matmul_tiled(sch, name, threads=side, rows_fastest=rows_fastest(sch, staged))
        finish_gemm(sch, staged)
    except ScheduleError:
        return False
    return True


def _tensor_core_gemm(sch: Schedule, name: str, staged: dict[str, str]) -> bool:
    """The tensor-core rule on a float16 GEMM block `name`: its operand copies inlined
    into the shared tiles, its output copy (with the epilogue absorbed into it) computed
    by each warp from its shared staging tile; False when the block is no such GEMM or a
    primitive refused."""
    if wmma_operands(sch, name) is None:
        return False
    try:
        schedule_matmul_wmma(sch, name, epilogue=staged.get("c"))
        for role in ("a", "b"):
            if role in staged:
                sch.compute_inline(sch.get_block(staged[role]))
    except ScheduleError:
        return False
    return True


def _absorb_epilogues(sch: Schedule, gemms: dict[str, dict[str, str]]) -> set[str]:
    """Inline the elementwise consumers of each GEMM's output into its output copy (so
    that the tiled rule computes them in the write-back); the names of those absorbed."""
    absorbed: set[str] = set()
    for staged in gemms.values():
        while "c" in staged:
            consumers = sch.get_consumers(sch.get_block(staged["c"]))
            if len(consumers) != 1:
                break
            name = sch.get(consumers[0]).name_hint
            trial = sch.copy()
            try:
                trial.reverse_compute_inline(trial.get_block(name))
            except ScheduleError:
                break
            sch.state, sch.trace = trial.state, trial.trace
            absorbed.add(name)
    return absorbed


def _schedule_block(sch: Schedule, info: BlockInfo, threads: int) -> None:
    """A reduction across threads, else (or when that fails) the spatial rule."""
    if info.is_reduction:
        trial = sch.copy()
        try:
            schedule_reduction(trial, info, threads)
        except ScheduleError:
            pass
        else:
            sch.state, sch.trace = trial.state, trial.trace
            return
        schedule_serial_reduction(sch, info, threads)
        return
    schedule_spatial(sch, info, threads)


def _info_of(sch: Schedule, name: str) -> BlockInfo:
    """The `BlockInfo` of block `name` (a reindex copy, still its own perfect nest)."""
    func = sch.mod["main"]
    realize = next(s for s in walk(func.body) if isinstance(s, BlockRealize) and s.block.name_hint == name)
    loops = [s for s in find_path(func.body, lambda s: s is realize) if isinstance(s, For)]
    return BlockInfo(name, realize, loops, ["S"] * len(loops))


def _inline_producers(sch: Schedule, infos: list[BlockInfo], params: set,
                      keep: Collection[str] = ()) -> None:
    """Inline each spatial block writing an intermediate buffer (not one of `params`),
    where `compute_inline` allows (but the blocks in `keep`)."""
    for info in infos:
        if info.is_reduction or info.output is None or info.output in params or info.name in keep:
            continue
        trial = sch.copy()
        try:
            trial.compute_inline(trial.get_block(info.name))
        except ScheduleError:
            continue
        sch.state, sch.trace = trial.state, trial.trace


def _square_side(threads: int) -> int:
    """The side of the largest square thread block within `threads` (16 for 256)."""
    side = 1
    while (side * 2) ** 2 <= threads:
        side *= 2
    return side


def _has_threads(func: PrimFunc) -> bool:
    found: list[object] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, For)
                     and n.kind is ForKind.THREAD_BINDING else None)
    return bool(found)
