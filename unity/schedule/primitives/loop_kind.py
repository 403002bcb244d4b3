"""`parallel`, `vectorize`, `unroll`, `bind`: change how a loop's iterations run.

Before::

    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]

After ``sch.parallel(i); sch.vectorize(j)``::

    for i in T.parallel(4):
        for j in T.vectorized(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
"""

from __future__ import annotations

from unity.ir.structural import structural_equal
from unity.schedule.analysis import (
    as_int,
    child_realizes,
    linear,
    reduction_loop_vars,
    simplify,
    used_vars,
)
from unity.schedule.error import ScheduleError
from unity.schedule.state import LoopRV, ScheduleState
from unity.schedule.tree import replace_stmts
from unity.tir.buffer import BufferRegion
from unity.tir.expr import IntImm, IterType, Range, Var
from unity.tir.stmt import BlockRealize, For, ForKind

THREAD_TAGS = tuple(
    f"{kind}.{axis}" for kind in ("blockIdx", "threadIdx", "vthread") for axis in "xyz"
) + ("vthread",)
"""Thread axes `bind` accepts."""


def _set_kind(
    state: ScheduleState, loop: LoopRV, kind: ForKind, primitive: str, tag: str | None = None
) -> None:
    func_name, func, path = state.resolve_loop(loop, primitive)
    node: For = path[-1]
    if node.kind is not ForKind.SERIAL and (node.kind is not kind or node.thread_binding != tag):
        bound = f" to {node.thread_binding}" if node.thread_binding else ""
        msg = f"loop {node.loop_var.name} is already {node.kind.value}{bound}"
        raise ScheduleError(primitive, msg, func, node)
    cross_thread = kind is ForKind.THREAD_BINDING and (tag or "").startswith("threadIdx")
    unit = isinstance(node.extent, IntImm) and node.extent.value == 1  # one iteration races with none
    if kind is not ForKind.UNROLLED and not cross_thread and not unit:
        for realize in child_realizes(node):
            if node.loop_var in reduction_loop_vars(realize):
                msg = (
                    f"loop {node.loop_var.name} is bound to {_iter_kind(realize, node.loop_var)} "
                    f"iteration variable of block {realize.block.name_hint}; only data-parallel "
                    f"loops can be {kind.value}"
                )
                raise ScheduleError(primitive, msg, func, node)
            carried = _carried_dependence(realize, node.loop_var)
            if carried is not None:
                msg = (
                    f"loop {node.loop_var.name} carries a dependence: block "
                    f"{realize.block.name_hint} {carried}, so its iterations depend on each other"
                )
                raise ScheduleError(primitive, msg, func, node)
            if kind is ForKind.PARALLEL and _writes_everywhere(realize, node.loop_var):
                msg = (
                    f"every iteration of loop {node.loop_var.name} has block "
                    f"{realize.block.name_hint} write the same elements of "
                    f"{realize.block.writes[0].buffer.name}; parallel iterations would race"
                )
                raise ScheduleError(primitive, msg, func, node)
            if _is_reduction(realize) and not _feeds_spatial(realize, node.loop_var):
                msg = (
                    f"loop {node.loop_var.name} feeds no spatial iteration variable of reduction "
                    f"block {realize.block.name_hint}; its iterations would race on the result"
                )
                raise ScheduleError(primitive, msg, func, node)
    new = node.replace(kind=kind, thread_binding=tag)
    state.commit(func_name, func.replace(body=replace_stmts(func.body, {node: new})))


def _iter_kind(realize: BlockRealize, var: Var) -> str:
    """"a reduction" or "an opaque": the kind of the non-spatial iter var `var` feeds."""
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if iv.iter_type is not IterType.SPATIAL and var in used_vars(value):
            return "an opaque" if iv.iter_type is IterType.OPAQUE else "a reduction"
    return "a reduction"


def _carried_dependence(realize: BlockRealize, var: Var) -> str | None:
    """How iterations of loop `var` conflict through one buffer the block both reads and
    writes (e.g. reads `B[vi]`, writes `B[vi + 1]`), or None.  Iterations are independent
    when some dimension is indexed by the same expression in both, linear in `var`."""
    moving = {iv.var for iv, v in zip(realize.block.iter_vars, realize.iter_values)
              if var in used_vars(v)}  # fmt: skip
    for write in realize.block.writes:
        for read in realize.block.reads:
            if read.buffer.data is not write.buffer.data:
                continue
            if not (used_vars(write) | used_vars(read)) & moving:
                continue
            if not any(_separates(w, r, moving) for w, r in zip(write.region, read.region)):
                return (
                    f"reads {read.buffer.name}{_text(read)} and writes "
                    f"{write.buffer.name}{_text(write)}"
                )
    return None


def _separates(w: Range, r: Range, moving: set[Var]) -> bool:
    """True when the same index, moving with the loop, picks this dimension in both."""
    if not (structural_equal(w, r, map_free_vars=False) and as_int(w.extent) == 1):
        return False
    lin = linear(w.min)
    return lin is not None and any(lin[0].get(v) for v in moving)


def _text(region: BufferRegion) -> str:
    from unity.ir.printer import script

    def dim(rng: Range) -> str:
        if as_int(rng.extent) == 1:
            return script(rng.min)
        return f"{script(rng.min)}:{script(simplify(rng.min + rng.extent))}"

    return "[" + ", ".join(dim(rng) for rng in region.region) + "]"


def _writes_everywhere(realize: BlockRealize, var: Var) -> bool:
    """True when the block writes something, and no written index moves with loop `var`
    (a write-back of a whole tile placed under the loop, say)."""
    moving = {iv.var for iv, v in zip(realize.block.iter_vars, realize.iter_values)
              if var in used_vars(v)}  # fmt: skip
    writes = realize.block.writes
    return bool(writes) and not any(used_vars(w) & moving for w in writes)


def _is_reduction(realize: BlockRealize) -> bool:
    return any(iv.iter_type is not IterType.SPATIAL for iv in realize.block.iter_vars)


def _feeds_spatial(realize: BlockRealize, var: Var) -> bool:
    return any(
        iv.iter_type is IterType.SPATIAL and var in used_vars(value)
        for iv, value in zip(realize.block.iter_vars, realize.iter_values)
    )


def parallel(state: ScheduleState, loop: LoopRV) -> None:
    """Run the iterations of `loop` in parallel (it must be data parallel).

    Example:
        >>> sch.parallel(io)  # doctest: +SKIP
    """
    _set_kind(state, loop, ForKind.PARALLEL, "parallel")


def vectorize(state: ScheduleState, loop: LoopRV) -> None:
    """Vectorize `loop` (it must be data parallel).

    Example:
        >>> sch.vectorize(ji)  # doctest: +SKIP
    """
    _set_kind(state, loop, ForKind.VECTORIZED, "vectorize")


def unroll(state: ScheduleState, loop: LoopRV) -> None:
    """Unroll `loop`.

    Example:
        >>> sch.unroll(ki)  # doctest: +SKIP
    """
    _set_kind(state, loop, ForKind.UNROLLED, "unroll")


def bind(state: ScheduleState, loop: LoopRV, thread_axis: str) -> None:
    """Bind `loop` to a GPU thread axis such as `"threadIdx.x"` or `"blockIdx.y"`.

    As in TVM, binding a reduction loop to a `threadIdx` axis asks for a cross-thread
    reduction (the GPU pipeline's `LowerCrossThreadReduction` lowers it); `blockIdx`
    axes take data-parallel loops only.

    Example:
        >>> sch.bind(io, "blockIdx.x")  # doctest: +SKIP
    """
    if thread_axis not in THREAD_TAGS:
        raise ScheduleError(
            "bind", f"unknown thread axis {thread_axis!r}; use one of {THREAD_TAGS}"
        )
    _set_kind(state, loop, ForKind.THREAD_BINDING, "bind", thread_axis)
