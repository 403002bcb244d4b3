"""Lookup primitives: `get_block`, `get_loops`, `get_child_blocks`, producers, consumers.

Example::

    @T.prim_func
    def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * T.float32(2)

    b = sch.get_block("C"); i, j = sch.get_loops(b)
"""

from __future__ import annotations

from unity.schedule.analysis import buffers_read, buffers_written, child_realizes
from unity.schedule.error import ScheduleError
from unity.schedule.state import BlockRV, LoopRV, ScheduleState, scope_block
from unity.schedule.tree import find_path, walk
from unity.tir.stmt import BlockRealize, For


def get_block(state: ScheduleState, name: str, func_name: str = "main") -> BlockRV:
    """A handle to the block called `name` in function `func_name`.

    Example:
        >>> b = sch.get_block("C")  # doctest: +SKIP
    """
    if func_name not in state.mod:
        raise ScheduleError("get_block", f"the module has no function {func_name!r}")
    func = state.func(func_name)
    names = [s.block.name_hint for s in walk(func.body) if isinstance(s, BlockRealize)]
    if names.count(name) != 1:
        found = "no block" if not names.count(name) else f"{names.count(name)} blocks"
        have = ", ".join(repr(n) for n in names if n != "root")
        raise ScheduleError(
            "get_block", f"{found} named {name!r} in {func_name!r} (blocks: {have})", func
        )
    return state.block_rv(func_name, name)


def get_loops(state: ScheduleState, block: BlockRV) -> list[LoopRV]:
    """Handles to the loops above `block` in its scope, outermost first.

    Example:
        >>> i, j, k = sch.get_loops(sch.get_block("C"))  # doctest: +SKIP
    """
    func_name, _, path = state.resolve_block(block, "get_loops")
    loops: list[For] = []
    for s in reversed(path[:-1]):
        if isinstance(s, BlockRealize):
            break
        if isinstance(s, For):
            loops.append(s)
    return [state.loop_rv(func_name, loop.loop_var) for loop in reversed(loops)]


def get_child_blocks(state: ScheduleState, block_or_loop: BlockRV | LoopRV) -> list[BlockRV]:
    """Handles to the blocks directly under a block or loop (not inside a nested block).

    Example:
        >>> sch.get_child_blocks(sch.get_block("root"))  # doctest: +SKIP
    """
    if isinstance(block_or_loop, LoopRV):
        func_name, _, path = state.resolve_loop(block_or_loop, "get_child_blocks")
        under = path[-1].body
    else:
        func_name, _, path = state.resolve_block(block_or_loop, "get_child_blocks")
        under = path[-1].block.body
    return [state.block_rv(func_name, r.block.name_hint) for r in child_realizes(under)]


def sibling_realizes(state: ScheduleState, block: BlockRV, primitive: str):
    """`(func_name, func, path, siblings)`: the blocks sharing the scope of `block`.

    Example:
        >>> from unity import te
        >>> from unity.schedule.schedule import Schedule
        >>> A = te.placeholder((8,), name="A")
        >>> B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
        >>> C = te.compute((8,), lambda i: B[i] * 2.0, name="C")
        >>> sch = Schedule(te.create_prim_func([A, C]))
        >>> *_, siblings = sibling_realizes(sch.state, sch.get_block("C"), "get_producers")
        >>> [r.block.name_hint for r in siblings]
        ['B', 'C']
    """
    func_name, func, path = state.resolve_block(block, primitive)
    scope = scope_block(path)
    siblings = child_realizes(scope.body if scope is not None else func.body)
    return func_name, func, path, siblings


def get_producers(state: ScheduleState, block: BlockRV) -> list[BlockRV]:
    """Handles to the blocks of the same scope that write a buffer `block` reads.

    Example:
        >>> sch.get_producers(sch.get_block("C"))  # doctest: +SKIP
    """
    func_name, _, path, siblings = sibling_realizes(state, block, "get_producers")
    me = path[-1]
    reads = buffers_read([me])
    index = siblings.index(me)
    return [
        state.block_rv(func_name, r.block.name_hint)
        for r in siblings[:index]
        if buffers_written([r]) & reads
    ]


def get_consumers(state: ScheduleState, block: BlockRV) -> list[BlockRV]:
    """Handles to the blocks of the same scope that read a buffer `block` writes.

    Example:
        >>> sch.get_consumers(sch.get_block("B"))  # doctest: +SKIP
    """
    func_name, _, path, siblings = sibling_realizes(state, block, "get_consumers")
    me = path[-1]
    writes = buffers_written([me])
    index = siblings.index(me)
    return [
        state.block_rv(func_name, r.block.name_hint)
        for r in siblings[index + 1 :]
        if buffers_read([r]) & writes
    ]


def loop_path(func_body, loop: For) -> list:
    """The chain from the function body down to `loop`.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((8, 8), name="A")
        >>> func = te.create_prim_func([A, te.compute((8, 8), lambda i, j: A[i, j], name="B")])
        >>> [s.loop_var.name for s in loop_path(func.body, func.body.body)]
        ['i', 'j']
    """
    return find_path(func_body, lambda s: s is loop) or []
