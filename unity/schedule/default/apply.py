"""`apply_default_schedules`: pick a rule for every block of every unscheduled PrimFunc.

The choice reads structure only (iteration types, access patterns, a block annotation
that TOPI sets), never names:

0. constant-0 indices into unit dimensions are spelled as the unit iteration variable
   (`normalize`), so that epilogues read their producer at exactly its point;
1. spatial blocks writing an intermediate buffer are inlined into their consumers
   (`compute_inline` checks legality), except into matmul/conv anchors, whose inner
   loop should read plain memory, except a block that a rule claims (a Winograd
   transform's passes), and except a costly one (a math call, many operations:
   softmax's `exp`) that several blocks or a pooling window would evaluate again;
2. each remaining block takes the first rule that claims it: `matmul` (one reduction
   axis, a product of two operands, output contiguous in one of them or packable),
   `conv2d` (a windowed product over a padded input), `conv2d_blocked` (the same on
   channel-blocked "NCHW16c" data), `winograd` (the blocks annotated
   ``unity.winograd`` by `topi.nn.winograd`), `reduction`, `injective`; matmul, conv
   and the Winograd output transform also take their elementwise epilogue (bias,
   activation) into their tile loop;
3. a rule that raises `ScheduleError` is undone and the next rule that claims the
   block is tried, down to `fallback` (or no schedule at all).  Any other exception
   leaves the whole function unscheduled, with a warning: a rule's bug may cost speed,
   never correctness.

A function carrying the attribute ``tir.is_scheduled`` is left as it is; every
function the rules visit gets the attribute, so running the pass twice is a no-op.

Example:
    >>> mod = apply_default_schedules(mod, "llvm")  # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from unity.ir.module import IRModule
from unity.schedule.analysis import used_vars
from unity.schedule.default import conv2d, conv2d_blocked, injective, matmul, reduction, winograd
from unity.schedule.default.analysis import BlockInfo, RuleContext, block_infos, loads_of
from unity.schedule.default.fallback import schedule_fallback
from unity.schedule.default.normalize import unit_indices_as_vars
from unity.schedule.default.row_fusion import merge_row_loops
from unity.schedule.default.width_versions import merge_versions, width_versions
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule
from unity.tir.buffer import Buffer
from unity.tir.expr import BinaryOp, Call, IntImm, IterType
from unity.tir.function import PrimFunc
from unity.tir.functor import post_order_nodes
from unity.tir.stmt import Block, BufferStore

__all__ = ["apply_default_schedules", "schedule_primfunc"]

Rule = Callable[[Schedule, BlockInfo, RuleContext], "list[str] | None"]


def apply_default_schedules(mod: IRModule, target=None) -> IRModule:
    """Schedule every PrimFunc of `mod` that has no ``tir.is_scheduled`` attribute.

    Args:
        mod: The module; relax functions pass through unchanged.
        target: An `llvm` target (string, dict or `Target`); None means the host CPU.

    Returns:
        A new module whose PrimFuncs are scheduled and marked ``tir.is_scheduled``.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((64, 64), name="A")
        >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
        >>> mod = IRModule({"main": te.create_prim_func([A, B])})
        >>> apply_default_schedules(mod)["main"].attrs["tir.is_scheduled"]
        True
    """
    ctx = RuleContext.for_target(target)
    out = mod.copy()
    for gv, func in list(mod.items()):
        if isinstance(func, PrimFunc) and not func.attrs.get("tir.is_scheduled"):
            try:
                out.update_func(gv, schedule_primfunc(func, ctx))
            except Exception as err:  # noqa: BLE001 - a rule bug must not cost correctness
                name = getattr(gv, "name_hint", gv)
                warnings.warn(
                    f"default schedules: {name} left unscheduled after "
                    f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}",
                    RuntimeWarning,
                    stacklevel=2,
                )
    return out


def schedule_primfunc(func: PrimFunc, ctx: RuleContext | None = None) -> PrimFunc:
    """The default schedule of one PrimFunc (marked ``tir.is_scheduled``).

    Example:
        >>> scheduled = schedule_primfunc(func)  # doctest: +SKIP
    """
    ctx = ctx or RuleContext.for_target(None)
    func = unit_indices_as_vars(func)
    # a conv over a symbolic width: a version per range of widths, when the conv is the
    # one anchor (another would be scheduled, and its weights packed, once per version)
    versions = width_versions(func, ctx)
    if versions is not None and _anchors(func) == 1:
        merged = merge_versions([(cond, _schedule_once(func, c)) for cond, c in versions])
        return merged.with_attr("tir.is_scheduled", True)
    return _schedule_once(func, ctx).with_attr("tir.is_scheduled", True)


def _schedule_once(func: PrimFunc, ctx: RuleContext) -> PrimFunc:
    sch = Schedule(func)
    infos = block_infos(func)
    if infos is not None:
        anchors = {b.name for b in infos if _anchor_rule(b) is not None}
        _inline_spatial(sch, func, infos, anchors)
        infos = block_infos(sch.mod["main"]) or []
        done: set[str] = set()
        for info in infos:
            if info.name in done:
                continue
            done |= _schedule_block(sch, info, ctx)
    return merge_row_loops(sch.mod["main"])


def _anchors(func: PrimFunc) -> int:
    return sum(_anchor_rule(b) is not None for b in block_infos(func) or [])


def _anchor_rule(info: BlockInfo) -> Rule | None:
    if matmul.applies(info):
        return matmul.schedule_matmul
    if conv2d.applies(info):
        return conv2d.schedule_conv2d
    if conv2d_blocked.applies(info):
        return conv2d_blocked.schedule_conv2d_blocked
    if winograd.applies(info):
        return winograd.schedule_winograd
    return None


def _schedule_block(sch: Schedule, info: BlockInfo, ctx: RuleContext) -> set[str]:
    """Apply the first rule that claims `info`; return the names of the blocks it handled."""
    rules: list[Rule] = []
    anchor = _anchor_rule(info)
    if anchor is not None:
        rules.append(anchor)
    if reduction.applies(info):
        rules.append(reduction.schedule_reduction)
    if injective.applies(info):
        rules.append(injective.schedule_injective)
    rules.append(schedule_fallback)
    for rule in rules:
        trial = sch.copy()
        try:
            handled = rule(trial, info, ctx)
        except ScheduleError:
            continue
        sch.state, sch.trace = trial.state, trial.trace
        return {info.name, *(handled or ())}
    return {info.name}


def _inline_spatial(
    sch: Schedule, func: PrimFunc, infos: list[BlockInfo], anchors: set[str]
) -> None:
    """Inline spatial blocks that write intermediate buffers into their consumers."""
    params = set(func.buffer_params())
    for info in infos:
        if info.is_reduction or info.output is None or info.output in params:
            continue
        if info.name in anchors:
            continue  # a rule schedules it (a Winograd transform's passes)
        readers = [
            b for b in infos if b is not info and info.output in {r.buffer for r in b.block.reads}
        ]
        if not readers or any(b.name in anchors for b in readers):
            continue
        if any(len(b.block.reads) > _MANY_READS for b in readers):
            continue  # a concat of 90 parts: each inline would walk (and grow) its long expression
        recomputed = len(readers) > 1 or any(
            _recomputes(b) or _replicates(b, info.output) for b in readers
        )
        if recomputed and _costly(sch.get(sch.get_block(info.name))):
            continue  # several readers, window positions or broadcast axes would evaluate it again
        trial = sch.copy()
        try:
            trial.compute_inline(trial.get_block(info.name))
        except ScheduleError:
            continue
        sch.state, sch.trace = trial.state, trial.trace


_MANY_READS = 16
"""Buffers a block may read and still have its producers inlined into it (SSDlite's
per-class concats read 90: inlining into them took 25 s of scheduling, quadratic in
the parts, where the parts written out first cost a copy of a few hundred rows each)."""


_COSTLY_OPS = 8
"""Arithmetic nodes above which a producer is not recomputed per window position."""


_CHEAP_CALLS = frozenset(
    f"tir.{name}" for name in ("fabs", "floor", "ceil", "round", "trunc", "isnan", "isinf")
)


def _recomputes(reader: BlockInfo) -> bool:
    """True when `reader` loads a buffer at indices that use a reduction iteration
    variable (a pooling window): inlining a producer there evaluates it several times
    per element."""
    reduce = {iv.var for iv in reader.block.iter_vars if iv.iter_type is not IterType.SPATIAL}
    if not reduce or reader.store is None:
        return False
    return any(
        reduce & used_vars(index)
        for load in loads_of(reader.store.value)
        if load.buffer is not reader.store.buffer
        for index in load.indices
    )


def _replicates(reader: BlockInfo, buffer: Buffer) -> bool:
    """True when `reader` loads `buffer` at indices that leave out one of its spatial
    iteration variables of more than one value: inlining a producer of `buffer` there
    evaluates it again along that axis.  T5's position bias, ``(batch, 6, seq, seq)``: its
    buckets (a log per query and key) and its mask (an index checked and divided per
    batch and key) inlined into the per-head gather, 0.177 ms; computed once, 0.099."""
    if reader.store is None:
        return False
    spatial = {
        iv.var
        for iv in reader.block.iter_vars
        if iv.iter_type is IterType.SPATIAL
        and not (isinstance(iv.dom.extent, IntImm) and iv.dom.extent.value == 1)
    }
    loads = [load for load in loads_of(reader.store.value) if load.buffer is buffer]
    return any(spatial - set().union(*(used_vars(i) for i in load.indices)) for load in loads)


def _costly(block: Block) -> bool:
    """True when `block`'s value calls a math function or has many arithmetic nodes."""
    if not isinstance(block.body, BufferStore):
        return True
    nodes = post_order_nodes(block.body.value)
    if any(isinstance(n, Call) and n.op.name not in _CHEAP_CALLS for n in nodes):
        return True
    return sum(isinstance(n, BinaryOp) for n in nodes) > _COSTLY_OPS
