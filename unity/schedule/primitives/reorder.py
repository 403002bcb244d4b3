"""`reorder`: permute loops of one perfectly nested chain.

Before::

    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]

After ``sch.reorder(j, i)``::

    for j, i in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
"""

from __future__ import annotations

from itertools import pairwise

from unity.schedule.analysis import child_realizes, is_quasi_affine, used_vars
from unity.schedule.error import ScheduleError
from unity.schedule.state import LoopRV, ScheduleState
from unity.schedule.tree import replace_stmts
from unity.tir.expr import IterType
from unity.tir.stmt import For


def reorder(state: ScheduleState, *loops: LoopRV) -> None:
    """Reorder `loops` to the given order (outermost first); other loops keep their place.

    Raises:
        ScheduleError: a loop is given twice, the loops are not on one perfectly nested
            chain, an extent depends on a moved loop, or a block under them has an
            opaque iteration variable bound to one.

    Example:
        >>> sch.reorder(io, jo, k, ii, ji)  # doctest: +SKIP
    """
    paths = []
    func_name = func = None
    for rv in loops:
        func_name, func, path = state.resolve_loop(rv, "reorder")
        paths.append(path)
    nodes = [p[-1] for p in paths]
    if len({id(n) for n in nodes}) != len(nodes):
        raise ScheduleError("reorder", "a loop is given more than once", func)
    if len(nodes) < 2:
        return
    deepest = max(paths, key=len)
    chain_start = min(len(p) for p in paths) - 1
    for n in nodes:
        if n not in deepest:
            msg = f"loop {n.loop_var.name} is not on the same loop nest as the others"
            raise ScheduleError("reorder", msg, func, n)
    chain: list[For] = deepest[chain_start:]
    for outer, inner in pairwise(chain):
        if not isinstance(inner, For) or outer.body is not inner:
            msg = f"loops between {chain[0].loop_var.name} and {chain[-1].loop_var.name} are not perfectly nested"
            raise ScheduleError("reorder", msg, func, inner)
    _check_blocks(chain, func)
    moved = iter(nodes)
    order = [next(moved) if n in nodes else n for n in chain]
    body = chain[-1].body
    for loop in reversed(order):
        body = loop.replace(body=body)
    state.commit(func_name, func.replace(body=replace_stmts(func.body, {chain[0]: body})))


def _check_blocks(chain: list[For], func: object) -> None:
    loop_vars = {n.loop_var for n in chain}
    for n in chain:
        if used_vars(n.extent) & loop_vars or used_vars(n.min) & loop_vars:
            msg = f"the extent of loop {n.loop_var.name} depends on another reordered loop"
            raise ScheduleError("reorder", msg, func, n)
    for realize in child_realizes(chain[-1]):
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if used_vars(value) & loop_vars and not is_quasi_affine(value, loop_vars):
                msg = (
                    f"block {realize.block.name_hint} binds {iv.var.name} to {value.script()}, "
                    "which is not an affine function of the loops"
                )
                raise ScheduleError("reorder", msg, func, realize.block)
            if iv.iter_type is IterType.OPAQUE and used_vars(value) & loop_vars:
                msg = f"block {realize.block.name_hint} binds opaque iter var {iv.var.name} to a reordered loop"
                raise ScheduleError("reorder", msg, func, realize.block)
