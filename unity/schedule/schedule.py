"""`Schedule`: the user-facing facade over the schedule primitives.

Each method resolves handles through the `ScheduleState`, runs one primitive from
`unity.schedule.primitives`, and records itself in `sch.trace`.  A primitive that
raises `ScheduleError` leaves `sch.mod` and the trace unchanged.

Example:
    >>> sch = Schedule(func)  # doctest: +SKIP
    >>> b = sch.get_block("C")  # doctest: +SKIP
    >>> i, j, k = sch.get_loops(b)  # doctest: +SKIP
    >>> io, ii = sch.split(i, factors=[None, 8])  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from unity.ir.module import IRModule
from unity.schedule import primitives as P
from unity.schedule.state import BlockRV, LoopRV, ScheduleState
from unity.schedule.trace import Instruction, Trace
from unity.tir.function import PrimFunc

_F = TypeVar("_F", bound=Callable[..., Any])


def _traced(fn: _F) -> _F:
    """Record a successful call of `fn` (with its arguments named) in the trace."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(self: Schedule, *args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        result = fn(self, *args, **kwargs)
        named = {}
        for k, v in bound.arguments.items():
            if k == "self":
                continue
            star = sig.parameters[k].kind is inspect.Parameter.VAR_POSITIONAL
            named["*" if star else k] = list(v) if star else v
        self.trace.append(Instruction(fn.__name__, named, result))
        return result

    return wrapper  # type: ignore[return-value]


class Schedule:
    """Schedule a PrimFunc (or every PrimFunc of a module) by hand.

    Example:
        >>> sch = Schedule(mod)  # doctest: +SKIP
        >>> sch.parallel(sch.get_loops(sch.get_block("C"))[0])  # doctest: +SKIP
        >>> lib = unity.build(sch.mod)  # doctest: +SKIP
    """

    def __init__(self, func_or_mod: PrimFunc | IRModule) -> None:
        if isinstance(func_or_mod, PrimFunc):
            mod = IRModule({"main": func_or_mod})
        elif isinstance(func_or_mod, IRModule):
            mod = func_or_mod.copy()
        else:
            raise TypeError(
                f"Schedule takes a PrimFunc or an IRModule, not {type(func_or_mod).__name__}"
            )
        self.state = ScheduleState(mod)
        self.trace = Trace()

    # -- module ---------------------------------------------------------------------------
    @property
    def mod(self) -> IRModule:
        """The scheduled module (a new value after every primitive)."""
        return self.state.mod

    def show(self) -> None:
        """Print the scheduled module as script."""
        self.mod.show()

    def copy(self) -> Schedule:
        """An independent schedule with the same module, handles and trace.

        Example:
            >>> sch2 = sch.copy()  # doctest: +SKIP
        """
        new = Schedule.__new__(Schedule)
        new.state = self.state.copy()
        new.trace = self.trace.copy()
        return new

    def get(self, rv: BlockRV | LoopRV):
        """The current `Block` or `For` a handle points at."""
        if isinstance(rv, BlockRV):
            return self.state.resolve_block(rv, "get")[2][-1].block
        return self.state.resolve_loop(rv, "get")[2][-1]

    # -- lookup ---------------------------------------------------------------------------
    @_traced
    def get_block(self, name: str, func_name: str = "main") -> BlockRV:
        """A handle to the block `name` (see `primitives.lookup.get_block`)."""
        return P.get_block(self.state, name, func_name)

    @_traced
    def get_loops(self, block: BlockRV) -> list[LoopRV]:
        """Handles to the loops above `block`, outermost first."""
        return P.get_loops(self.state, block)

    @_traced
    def get_child_blocks(self, block_or_loop: BlockRV | LoopRV) -> list[BlockRV]:
        """Handles to the blocks directly under a block or loop."""
        return P.get_child_blocks(self.state, block_or_loop)

    @_traced
    def get_producers(self, block: BlockRV) -> list[BlockRV]:
        """Handles to the blocks writing what `block` reads."""
        return P.get_producers(self.state, block)

    @_traced
    def get_consumers(self, block: BlockRV) -> list[BlockRV]:
        """Handles to the blocks reading what `block` writes."""
        return P.get_consumers(self.state, block)

    # -- loops ----------------------------------------------------------------------------
    @_traced
    def split(self, loop: LoopRV, factors: list[Any]) -> list[LoopRV]:
        """Split a loop by `factors` (one may be None)."""
        return P.split(self.state, loop, factors)

    @_traced
    def fuse(self, *loops: LoopRV) -> LoopRV:
        """Fuse directly nested loops into one."""
        return P.fuse(self.state, *loops)

    @_traced
    def reorder(self, *ordered_loops: LoopRV) -> None:
        """Reorder loops of one perfectly nested chain."""
        P.reorder(self.state, *ordered_loops)

    @_traced
    def add_unit_loop(self, block_or_loop: BlockRV | LoopRV) -> LoopRV:
        """Wrap a block or loop in a unit loop."""
        return P.add_unit_loop(self.state, block_or_loop)

    @_traced
    def parallel(self, loop: LoopRV) -> None:
        """Make a data-parallel loop parallel."""
        P.parallel(self.state, loop)

    @_traced
    def vectorize(self, loop: LoopRV) -> None:
        """Vectorize a data-parallel loop."""
        P.vectorize(self.state, loop)

    @_traced
    def unroll(self, loop: LoopRV) -> None:
        """Unroll a loop."""
        P.unroll(self.state, loop)

    @_traced
    def bind(self, loop: LoopRV, thread_axis: str) -> None:
        """Bind a loop to a GPU thread axis."""
        P.bind(self.state, loop, thread_axis)

    @_traced
    def annotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str, ann_val: Any) -> None:
        """Attach an annotation to a block or loop."""
        P.annotate(self.state, block_or_loop, ann_key, ann_val)

    @_traced
    def unannotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str) -> None:
        """Remove an annotation from a block or loop."""
        P.unannotate(self.state, block_or_loop, ann_key)

    # -- blocks ---------------------------------------------------------------------------
    @_traced
    def decompose_reduction(self, block: BlockRV, loop: LoopRV) -> BlockRV:
        """Split a reduction block's init into its own block above `loop`."""
        return P.decompose_reduction(self.state, block, loop)

    @_traced
    def compute_inline(self, block: BlockRV) -> None:
        """Inline a producer block into its consumers."""
        P.compute_inline(self.state, block)

    @_traced
    def reverse_compute_inline(self, block: BlockRV) -> None:
        """Inline a consumer block into its producer."""
        P.reverse_compute_inline(self.state, block)

    @_traced
    def compute_at(self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False) -> None:
        """Move a producer block under a loop of its consumers."""
        P.compute_at(self.state, block, loop, preserve_unit_loops)

    @_traced
    def reverse_compute_at(
        self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False
    ) -> None:
        """Move a consumer block under a loop of its producer."""
        P.reverse_compute_at(self.state, block, loop, preserve_unit_loops)

    @_traced
    def cache_read(self, block: BlockRV, read_buffer_index: int, storage_scope: str) -> BlockRV:
        """Copy a buffer `block` reads into a new buffer in `storage_scope`."""
        return P.cache_read(self.state, block, read_buffer_index, storage_scope)

    @_traced
    def cache_write(self, block: BlockRV, write_buffer_index: int, storage_scope: str) -> BlockRV:
        """Write `block`'s output to a new buffer, then copy it back."""
        return P.cache_write(self.state, block, write_buffer_index, storage_scope)

    @_traced
    def set_scope(self, block: BlockRV, buffer_index: int, storage_scope: str) -> None:
        """Change the storage scope of a buffer `block` writes."""
        P.set_scope(self.state, block, buffer_index, storage_scope)

    @_traced
    def storage_align(
        self, block: BlockRV, buffer_index: int, axis: int, factor: int, offset: int
    ) -> None:
        """Pad the stride of one axis of a buffer `block` writes (a lowering hint)."""
        P.storage_align(self.state, block, buffer_index, axis, factor, offset)

    @_traced
    def transform_layout(self, block: BlockRV, buffer: Any, index_map: Callable[..., Any]) -> None:
        """Store an allocated buffer in the layout `index_map` (a lambda over its indices)."""
        P.transform_layout(self.state, block, buffer, index_map)

    @_traced
    def rfactor(self, loop: LoopRV, factor_axis: int = 0) -> BlockRV:
        """Factor the reduction over `loop` into a new buffer; return the `_rf` block."""
        return P.rfactor(self.state, loop, factor_axis)

    @_traced
    def blockize(self, loop: LoopRV) -> BlockRV:
        """Wrap the subtree of `loop` in a new outer block."""
        return P.blockize(self.state, loop)

    @_traced
    def tensorize(self, loop: LoopRV, tensor_intrin: str) -> None:
        """Replace the nest at `loop` by the implementation of a registered `TensorIntrin`."""
        P.tensorize(self.state, loop, tensor_intrin)

    @_traced
    def pad_einsum(self, block: BlockRV, padding: list[int]) -> None:
        """Pad an einsum block's iteration domain to multiples of `padding`."""
        P.pad_einsum(self.state, block, padding)
