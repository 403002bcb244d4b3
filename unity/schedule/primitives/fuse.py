"""`fuse`: perfectly nested loops become one loop over the product of their extents.

Before::

    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]

After ``sch.fuse(i, j)``::

    for i_j_fused in T.serial(32):
        with T.block("B"):
            vi = T.axis.spatial(4, i_j_fused // 8)
            vj = T.axis.spatial(8, i_j_fused % 8)
            B[vi, vj] = A[vi, vj]
"""

from __future__ import annotations

from itertools import pairwise

from unity.schedule.analysis import as_int, used_vars
from unity.schedule.error import ScheduleError
from unity.schedule.primitives.split import _mul
from unity.schedule.state import LoopRV, ScheduleState
from unity.schedule.tree import replace_stmts
from unity.tir.expr import Cast, PrimExpr, Var, const
from unity.tir.functor import substitute
from unity.tir.stmt import For, ForKind


def fuse(state: ScheduleState, *loops: LoopRV) -> LoopRV:
    """Fuse directly nested loops (outermost first) into one loop.

    Raises:
        ScheduleError: the loops are not directly nested in the given order, or an
            inner extent depends on an outer loop.

    Example:
        >>> f = sch.fuse(i, j)  # doctest: +SKIP
    """
    if not loops:
        raise ScheduleError("fuse", "needs at least one loop")
    nodes: list[For] = []
    func_name = func = None
    for rv in loops:
        func_name, func, path = state.resolve_loop(rv, "fuse")
        nodes.append(path[-1])
    for outer, inner in pairwise(nodes):
        if outer.body is not inner:
            msg = f"loop {inner.loop_var.name} is not the only statement directly in loop {outer.loop_var.name}"
            raise ScheduleError("fuse", msg, func, inner)
    outer_vars = {n.loop_var for n in nodes}
    for n in nodes:
        if used_vars(n.extent) & outer_vars or used_vars(n.min) & outer_vars:
            msg = f"the extent of loop {n.loop_var.name} depends on another fused loop"
            raise ScheduleError("fuse", msg, func, n)
    first = nodes[0]
    bits = lambda dtype: int("".join(filter(str.isdigit, dtype)) or 0)
    widest = max((n.loop_var.dtype for n in nodes), key=bits)
    fused = Var("_".join(n.loop_var.name for n in nodes) + "_fused", widest)
    vmap: dict[Var, PrimExpr] = {}
    stride: PrimExpr = const(1, fused.dtype)
    for k, n in reversed(list(enumerate(nodes))):
        value: PrimExpr = fused if as_int(stride) == 1 else fused // stride
        if k > 0:
            value = value % n.extent
        value = value if as_int(n.min) == 0 else n.min + value
        if value.dtype != n.loop_var.dtype:  # an int32 loop fused with an int64 one
            value = Cast(n.loop_var.dtype, value)
        vmap[n.loop_var] = value
        stride = _mul(stride, n.extent)
    body = substitute(nodes[-1].body, vmap)
    new = For(fused, const(0, fused.dtype), stride, ForKind.SERIAL, body)
    state.commit(func_name, func.replace(body=replace_stmts(func.body, {first: new})))
    return state.loop_rv(func_name, fused)
