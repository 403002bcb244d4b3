"""The schedule's state: the current module and what each block/loop handle points at.

A `BlockRV` resolves by (function, block name) and a `LoopRV` by (function, loop
variable).  Primitives keep the loop variable of every loop they do not replace, so
handles survive other primitives; a primitive that renames a block calls
`rename_block`, and a loop removed by `fuse`/`split` leaves its handle dangling with a
clear error on use.

Example:
    >>> from unity.schedule.state import BlockRV
    >>> BlockRV(0)
    b0
"""

from __future__ import annotations

import itertools

from unity.ir.module import IRModule
from unity.schedule.error import ScheduleError
from unity.schedule.tree import find_path
from unity.tir.expr import Var
from unity.tir.function import PrimFunc
from unity.tir.stmt import Block, BlockRealize, For

_ids = itertools.count()


class BlockRV:
    """A handle to a block, valid across primitives.

    Example:
        >>> BlockRV(3), isinstance(BlockRV().id, int)
        (b3, True)
    """

    __slots__ = ("id",)

    def __init__(self, id: int | None = None) -> None:
        self.id = next(_ids) if id is None else id

    def __repr__(self) -> str:
        return f"b{self.id}"


class LoopRV:
    """A handle to a loop, valid across primitives that keep the loop.

    Example:
        >>> LoopRV(5)
        l5
    """

    __slots__ = ("id",)

    def __init__(self, id: int | None = None) -> None:
        self.id = next(_ids) if id is None else id

    def __repr__(self) -> str:
        return f"l{self.id}"


class ScheduleState:
    """The module being scheduled plus the handle tables.

    Example:
        >>> state = ScheduleState(IRModule())  # doctest: +SKIP
    """

    def __init__(self, mod: IRModule) -> None:
        self.mod = mod
        self.blocks: dict[BlockRV, tuple[str, str]] = {}
        self.loops: dict[LoopRV, tuple[str, Var]] = {}

    def copy(self) -> ScheduleState:
        """An independent state sharing the (immutable) functions and the handles.

        Example:
            >>> state = ScheduleState(IRModule())
            >>> rv = state.block_rv("main", "B")
            >>> new = state.copy()
            >>> new.blocks == state.blocks, new.blocks is state.blocks
            (True, False)
        """
        new = ScheduleState(self.mod)
        new.blocks = dict(self.blocks)
        new.loops = dict(self.loops)
        return new

    def func(self, name: str) -> PrimFunc:
        """The PrimFunc `name` of the module.

        Example:
            >>> from unity import tir
            >>> f = tir.PrimFunc([], tir.Evaluate(tir.const(0)))
            >>> ScheduleState(IRModule({"main": f})).func("main") is f
            True
        """
        func = self.mod[name]
        if not isinstance(func, PrimFunc):
            raise ScheduleError("get_block", f"function {name!r} is not a PrimFunc")
        return func

    def commit(self, func_name: str, func: PrimFunc) -> None:
        """Install the new version of function `func_name` (the module is copied, not mutated).

        Example:
            >>> from unity import tir
            >>> state = ScheduleState(IRModule())
            >>> old = state.mod
            >>> state.commit("main", tir.PrimFunc([], tir.Evaluate(tir.const(0))))
            >>> "main" in state.mod, "main" in old
            (True, False)
        """
        mod = self.mod.copy()
        mod[func_name] = func
        self.mod = mod

    # -- handles ----------------------------------------------------------------------------
    def block_rv(self, func_name: str, name: str) -> BlockRV:
        """A new handle to block `name` of `func_name`.

        Example:
            >>> state = ScheduleState(IRModule())
            >>> state.blocks[state.block_rv("main", "B")]
            ('main', 'B')
        """
        rv = BlockRV()
        self.blocks[rv] = (func_name, name)
        return rv

    def loop_rv(self, func_name: str, var: Var) -> LoopRV:
        """A new handle to the loop over `var` in `func_name`.

        Example:
            >>> i = Var("i")
            >>> state = ScheduleState(IRModule())
            >>> state.loops[state.loop_rv("main", i)] == ("main", i)
            True
        """
        rv = LoopRV()
        self.loops[rv] = (func_name, var)
        return rv

    def rename_block(self, func_name: str, old: str, new: str) -> None:
        """Point every handle of block `old` at its new name `new`.

        Example:
            >>> state = ScheduleState(IRModule())
            >>> rv = state.block_rv("main", "B")
            >>> state.rename_block("main", "B", "B_o")
            >>> state.blocks[rv]
            ('main', 'B_o')
        """
        for rv, key in self.blocks.items():
            if key == (func_name, old):
                self.blocks[rv] = (func_name, new)

    def resolve_block(self, rv: BlockRV, primitive: str) -> tuple[str, PrimFunc, list]:
        """`(func_name, func, path)` where `path[-1]` is the block's `BlockRealize`.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((8,), name="A")
            >>> func = te.create_prim_func([A, te.compute((8,), lambda i: A[i] + 1.0, name="B")])
            >>> state = ScheduleState(IRModule({"main": func}))
            >>> name, f, path = state.resolve_block(state.block_rv("main", "B"), "get")
            >>> name, path[-1].block.name_hint
            ('main', 'B')
        """
        if not isinstance(rv, BlockRV) or rv not in self.blocks:
            raise ScheduleError(primitive, f"{rv!r} is not a block handle of this schedule")
        func_name, name = self.blocks[rv]
        func = self.func(func_name)
        path = find_path(
            func.body, lambda s: isinstance(s, BlockRealize) and s.block.name_hint == name
        )
        if path is None:
            msg = f"block handle {rv!r} refers to block {name!r}, which no longer exists"
            raise ScheduleError(primitive, msg, func)
        return func_name, func, path

    def resolve_loop(self, rv: LoopRV, primitive: str) -> tuple[str, PrimFunc, list]:
        """`(func_name, func, path)` where `path[-1]` is the `For` of the handle.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((8,), name="A")
            >>> func = te.create_prim_func([A, te.compute((8,), lambda i: A[i] + 1.0, name="B")])
            >>> state = ScheduleState(IRModule({"main": func}))
            >>> rv = state.loop_rv("main", func.body.loop_var)
            >>> state.resolve_loop(rv, "get")[2][-1] is func.body
            True
        """
        if not isinstance(rv, LoopRV) or rv not in self.loops:
            raise ScheduleError(primitive, f"{rv!r} is not a loop handle of this schedule")
        func_name, var = self.loops[rv]
        func = self.func(func_name)
        path = find_path(func.body, lambda s: isinstance(s, For) and s.loop_var is var)
        if path is None:
            msg = f"loop handle {rv!r} (loop {var.name}) refers to a loop an earlier primitive removed"
            raise ScheduleError(primitive, msg, func)
        return func_name, func, path

    def unique_block_name(self, func: PrimFunc, base: str) -> str:
        """`base`, or `base_1`, `base_2`... whichever no block of `func` has yet.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((8,), name="A")
            >>> func = te.create_prim_func([A, te.compute((8,), lambda i: A[i] + 1.0, name="B")])
            >>> state = ScheduleState(IRModule({"main": func}))
            >>> state.unique_block_name(func, "B"), state.unique_block_name(func, "C")
            ('B_1', 'C')
        """
        names = {s.block.name_hint for s in _realizes(func)}
        name, i = base, 0
        while name in names:
            i += 1
            name = f"{base}_{i}"
        return name


def _realizes(func: PrimFunc) -> list[BlockRealize]:
    from unity.schedule.tree import walk

    return [s for s in walk(func.body) if isinstance(s, BlockRealize)]


def scope_block(path: list) -> Block | None:
    """The innermost `Block` strictly above the last element of `path`.

    Example:
        >>> from unity import te
        >>> from unity.schedule.scope import with_root_block
        >>> A = te.placeholder((8,), name="A")
        >>> B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
        >>> func = with_root_block(te.create_prim_func([A, B]))
        >>> state = ScheduleState(IRModule({"main": func}))
        >>> scope_block(state.resolve_block(state.block_rv("main", "B"), "get")[2]).name_hint
        'root'
    """
    for s in reversed(path[:-1]):
        if isinstance(s, Block):
            return s
    return None
