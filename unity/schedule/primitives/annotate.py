"""`annotate` / `unannotate`: attach or remove a key-value hint on a block or loop.

Before::

    for i in T.serial(4):
        ...

After ``sch.annotate(i, "pragma_unroll", 4)``::

    for i in T.serial(4, annotations={"pragma_unroll": 4}):
        ...
"""

from __future__ import annotations

from unity.schedule.error import ScheduleError
from unity.schedule.state import BlockRV, LoopRV, ScheduleState
from unity.schedule.tree import replace_stmts
from unity.tir.stmt import AnnotationValue, BlockRealize


def _target(state: ScheduleState, rv: BlockRV | LoopRV, primitive: str):
    if isinstance(rv, LoopRV):
        func_name, func, path = state.resolve_loop(rv, primitive)
        return func_name, func, path[-1]
    func_name, func, path = state.resolve_block(rv, primitive)
    realize: BlockRealize = path[-1]
    return func_name, func, realize.block


def annotate(
    state: ScheduleState, block_or_loop: BlockRV | LoopRV, ann_key: str, ann_val: AnnotationValue
) -> None:
    """Set annotation `ann_key` to `ann_val` on a block or loop.

    Example:
        >>> sch.annotate(i, "pragma_auto_unroll_max_step", 16)  # doctest: +SKIP
    """
    if not isinstance(ann_key, str):
        raise ScheduleError(
            "annotate", f"the annotation key must be a string, not {type(ann_key).__name__}"
        )
    func_name, func, node = _target(state, block_or_loop, "annotate")
    new = node.replace(annotations={**node.annotations, ann_key: ann_val})
    state.commit(func_name, func.replace(body=replace_stmts(func.body, {node: new})))


def unannotate(state: ScheduleState, block_or_loop: BlockRV | LoopRV, ann_key: str) -> None:
    """Remove annotation `ann_key` from a block or loop.

    Example:
        >>> sch.unannotate(i, "pragma_auto_unroll_max_step")  # doctest: +SKIP
    """
    func_name, func, node = _target(state, block_or_loop, "unannotate")
    if ann_key not in node.annotations:
        have = ", ".join(map(repr, node.annotations)) or "none"
        raise ScheduleError(
            "unannotate", f"no annotation {ann_key!r} here (it has: {have})", func, node
        )
    new = node.replace(annotations={k: v for k, v in node.annotations.items() if k != ann_key})
    state.commit(func_name, func.replace(body=replace_stmts(func.body, {node: new})))
