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
        """Print the scheduled module as script.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> sch.show()  # doctest: +ELLIPSIS
            @I.ir_module
            class Module:
                @T.prim_func
                def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
            ...
        """
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
        """The current `Block` or `For` a handle points at.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> b = sch.get_block("B")
            >>> type(sch.get(b)).__name__, sch.get(sch.get_loops(b)[0]).loop_var.name
            ('Block', 'i')
        """
        if isinstance(rv, BlockRV):
            return self.state.resolve_block(rv, "get")[2][-1].block
        return self.state.resolve_loop(rv, "get")[2][-1]

    # -- lookup ---------------------------------------------------------------------------
    @_traced
    def get_block(self, name: str, func_name: str = "main") -> BlockRV:
        """A handle to the block `name` (see `primitives.lookup.get_block`).

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> sch.get(sch.get_block("B")).name_hint
            'B'
        """
        return P.get_block(self.state, name, func_name)

    @_traced
    def get_loops(self, block: BlockRV) -> list[LoopRV]:
        """Handles to the loops above `block`, outermost first.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> [sch.get(loop).extent.value for loop in sch.get_loops(sch.get_block("B"))]
            [64, 64]
        """
        return P.get_loops(self.state, block)

    @_traced
    def get_child_blocks(self, block_or_loop: BlockRV | LoopRV) -> list[BlockRV]:
        """Handles to the blocks directly under a block or loop.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> i = sch.get_loops(sch.get_block("B"))[0]
            >>> [sch.get(b).name_hint for b in sch.get_child_blocks(i)]
            ['B']
        """
        return P.get_child_blocks(self.state, block_or_loop)

    @_traced
    def get_producers(self, block: BlockRV) -> list[BlockRV]:
        """Handles to the blocks writing what `block` reads.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> [sch.get(b).name_hint for b in sch.get_producers(sch.get_block("C"))]
            ['B']
        """
        return P.get_producers(self.state, block)

    @_traced
    def get_consumers(self, block: BlockRV) -> list[BlockRV]:
        """Handles to the blocks reading what `block` writes.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> [sch.get(b).name_hint for b in sch.get_consumers(sch.get_block("B"))]
            ['C']
        """
        return P.get_consumers(self.state, block)

    # -- loops ----------------------------------------------------------------------------
    @_traced
    def split(self, loop: LoopRV, factors: list[Any]) -> list[LoopRV]:
        """Split a loop by `factors` (one may be None).

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i, j = sch.get_loops(sch.get_block("B"))
            >>> jo, ji = sch.split(j, factors=[None, 8])
            >>> [sch.get(loop).extent.value for loop in sch.get_loops(sch.get_block("B"))]
            [64, 8, 8]
        """
        return P.split(self.state, loop, factors)

    @_traced
    def fuse(self, *loops: LoopRV) -> LoopRV:
        """Fuse directly nested loops into one.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i, j = sch.get_loops(sch.get_block("B"))
            >>> sch.get(sch.fuse(i, j)).extent.value
            4096
        """
        return P.fuse(self.state, *loops)

    @_traced
    def reorder(self, *ordered_loops: LoopRV) -> None:
        """Reorder loops of one perfectly nested chain.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i, j = sch.get_loops(sch.get_block("B"))
            >>> sch.reorder(j, i)
            >>> [sch.get(loop).loop_var.name for loop in sch.get_loops(sch.get_block("B"))]
            ['j', 'i']
        """
        P.reorder(self.state, *ordered_loops)

    @_traced
    def add_unit_loop(self, block_or_loop: BlockRV | LoopRV) -> LoopRV:
        """Wrap a block or loop in a unit loop.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> b = sch.get_block("B")
            >>> sch.get(sch.add_unit_loop(b)).extent.value, len(sch.get_loops(b))
            (1, 3)
        """
        return P.add_unit_loop(self.state, block_or_loop)

    @_traced
    def parallel(self, loop: LoopRV) -> None:
        """Make a data-parallel loop parallel.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i, j = sch.get_loops(sch.get_block("B"))
            >>> sch.parallel(i)
            >>> sch.get(i).kind.value
            'parallel'
        """
        P.parallel(self.state, loop)

    @_traced
    def vectorize(self, loop: LoopRV) -> None:
        """Vectorize a data-parallel loop.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i, j = sch.get_loops(sch.get_block("B"))
            >>> sch.vectorize(j)
            >>> sch.get(j).kind.value
            'vectorized'
        """
        P.vectorize(self.state, loop)

    @_traced
    def unroll(self, loop: LoopRV) -> None:
        """Unroll a loop.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i, j = sch.get_loops(sch.get_block("B"))
            >>> sch.unroll(j)
            >>> sch.get(j).kind.value
            'unroll'
        """
        P.unroll(self.state, loop)

    @_traced
    def bind(self, loop: LoopRV, thread_axis: str) -> None:
        """Bind a loop to a GPU thread axis.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i, j = sch.get_loops(sch.get_block("B"))
            >>> sch.bind(i, "blockIdx.x")
            >>> sch.get(i).thread_binding
            'blockIdx.x'
        """
        P.bind(self.state, loop, thread_axis)

    @_traced
    def annotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str, ann_val: Any) -> None:
        """Attach an annotation to a block or loop.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i, j = sch.get_loops(sch.get_block("B"))
            >>> sch.annotate(i, "pragma_unroll", 4)
            >>> dict(sch.get(i).annotations)
            {'pragma_unroll': 4}
        """
        P.annotate(self.state, block_or_loop, ann_key, ann_val)

    @_traced
    def unannotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str) -> None:
        """Remove an annotation from a block or loop.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i, j = sch.get_loops(sch.get_block("B"))
            >>> sch.annotate(i, "pragma_unroll", 4)
            >>> sch.unannotate(i, "pragma_unroll")
            >>> dict(sch.get(i).annotations)
            {}
        """
        P.unannotate(self.state, block_or_loop, ann_key)

    # -- blocks ---------------------------------------------------------------------------
    @_traced
    def decompose_reduction(self, block: BlockRV, loop: LoopRV) -> BlockRV:
        """Split a reduction block's init into its own block above `loop`.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((16, 16), name="A")
            >>> k = te.reduce_axis((0, 16), name="k")
            >>> C = te.compute((16,), lambda i: te.sum(A[i, k], axis=k), name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> b = sch.get_block("C")
            >>> i, k = sch.get_loops(b)
            >>> sch.get(sch.decompose_reduction(b, k)).name_hint
            'C_init'
        """
        return P.decompose_reduction(self.state, block, loop)

    @_traced
    def compute_inline(self, block: BlockRV) -> None:
        """Inline a producer block into its consumers.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> sch.compute_inline(sch.get_block("B"))
            >>> "C[v_i, v_j] = A[v_i, v_j] * T.float32(2.0) + T.float32(1.0)" in sch.mod.script()
            True
        """
        P.compute_inline(self.state, block)

    @_traced
    def reverse_compute_inline(self, block: BlockRV) -> None:
        """Inline a consumer block into its producer.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> sch.reverse_compute_inline(sch.get_block("C"))
            >>> "C[v_i, v_j] = A[v_i, v_j] * T.float32(2.0) + T.float32(1.0)" in sch.mod.script()
            True
        """
        P.reverse_compute_inline(self.state, block)

    @_traced
    def compute_at(self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False) -> None:
        """Move a producer block under a loop of its consumers.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
            >>> [sch.get(loop).loop_var.name for loop in sch.get_loops(sch.get_block("B"))]
            ['i', 'ax0']
        """
        P.compute_at(self.state, block, loop, preserve_unit_loops)

    @_traced
    def reverse_compute_at(
        self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False
    ) -> None:
        """Move a consumer block under a loop of its producer.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> sch.reverse_compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("B"))[0])
            >>> [sch.get(loop).loop_var.name for loop in sch.get_loops(sch.get_block("C"))]
            ['i', 'ax0']
        """
        P.reverse_compute_at(self.state, block, loop, preserve_unit_loops)

    @_traced
    def cache_read(self, block: BlockRV, read_buffer_index: int, storage_scope: str) -> BlockRV:
        """Copy a buffer `block` reads into a new buffer in `storage_scope`.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> sch.get(sch.cache_read(sch.get_block("B"), 0, "local")).name_hint
            'A_local'
        """
        return P.cache_read(self.state, block, read_buffer_index, storage_scope)

    @_traced
    def cache_write(self, block: BlockRV, write_buffer_index: int, storage_scope: str) -> BlockRV:
        """Write `block`'s output to a new buffer, then copy it back.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> sch.get(sch.cache_write(sch.get_block("B"), 0, "local")).name_hint
            'B_local'
        """
        return P.cache_write(self.state, block, write_buffer_index, storage_scope)

    @_traced
    def set_scope(self, block: BlockRV, buffer_index: int, storage_scope: str) -> None:
        """Change the storage scope of a buffer `block` writes.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> sch.set_scope(sch.get_block("B"), 0, "local")
            >>> sch.get(sch.get_block("B")).writes[0].buffer.scope
            'local'
        """
        P.set_scope(self.state, block, buffer_index, storage_scope)

    @_traced
    def storage_align(
        self, block: BlockRV, buffer_index: int, axis: int, factor: int, offset: int
    ) -> None:
        """Pad the stride of one axis of a buffer `block` writes (a lowering hint).

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> sch.storage_align(sch.get_block("B"), 0, axis=0, factor=32, offset=1)
            >>> dict(sch.get(sch.get_block("B")).annotations)
            {'buffer_dim_align': ((0, 0, 32, 1),)}
        """
        P.storage_align(self.state, block, buffer_index, axis, factor, offset)

    @_traced
    def transform_layout(self, block: BlockRV, buffer: Any, index_map: Callable[..., Any]) -> None:
        """Store an allocated buffer in the layout `index_map` (a lambda over its indices).

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> index_map = lambda i, j: (j // 8, i, j % 8)
            >>> sch.transform_layout(sch.get_block("B"), ("write", 0), index_map)
            >>> [d.value for d in sch.get(sch.get_block("B")).writes[0].buffer.shape]
            [8, 64, 8]
        """
        P.transform_layout(self.state, block, buffer, index_map)

    @_traced
    def transform_block_layout(self, block: BlockRV, index_map: Callable[..., Any]) -> None:
        """Give `block` the iteration variables `index_map` (a lambda over its variables)
        fuses or permutes, with new loops over them.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((4, 6), name="A")
            >>> B = te.compute((4, 6), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> sch.transform_block_layout(sch.get_block("B"), lambda i, j: (i * 6 + j,))
            >>> [sch.get(loop).extent.value for loop in sch.get_loops(sch.get_block("B"))]
            [24]
        """
        P.transform_block_layout(self.state, block, index_map)

    @_traced
    def rfactor(self, loop: LoopRV, factor_axis: int = 0) -> BlockRV:
        """Factor the reduction over `loop` into a new buffer; return the `_rf` block.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((16, 16), name="A")
            >>> k = te.reduce_axis((0, 16), name="k")
            >>> C = te.compute((16,), lambda i: te.sum(A[i, k], axis=k), name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> i, k = sch.get_loops(sch.get_block("C"))
            >>> ko, ki = sch.split(k, factors=[None, 4])
            >>> sch.get(sch.rfactor(ki)).name_hint
            'C_rf'
        """
        return P.rfactor(self.state, loop, factor_axis)

    @_traced
    def blockize(self, loop: LoopRV) -> BlockRV:
        """Wrap the subtree of `loop` in a new outer block.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((64, 64), name="A")
            >>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i, j = sch.get_loops(sch.get_block("B"))
            >>> sch.get(sch.blockize(j)).name_hint
            'B_o'
        """
        return P.blockize(self.state, loop)

    @_traced
    def tensorize(self, loop: LoopRV, tensor_intrin: str) -> None:
        """Replace the nest at `loop` by the implementation of a registered `TensorIntrin`.

        Example:
            >>> sch.tensorize(ii, "dot_4x4")  # doctest: +SKIP
        """
        P.tensorize(self.state, loop, tensor_intrin)

    @_traced
    def reindex(self, block: BlockRV, buffer: tuple[str, int]) -> BlockRV:
        """Stage buffer ``("read", i)`` / ``("write", i)`` of `block` through a buffer indexed
        by the block's own iteration variables; returns the copy block.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((4, 6), name="A")
            >>> B = te.compute((24,), lambda i: A[i // 6, i % 6] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> sch.get(sch.reindex(sch.get_block("B"), ("read", 0))).name_hint
            'A_reindex'
            >>> "B[v_i] = A_reindex[v_i] * T.float32(2.0)" in sch.mod.script()
            True
        """
        return P.reindex(self.state, block, buffer)

    @_traced
    def pad_einsum(self, block: BlockRV, padding: list[int]) -> None:
        """Pad an einsum block's iteration domain to multiples of `padding`.

        Example:
            >>> from unity import te
            >>> A = te.placeholder((16, 16), name="A")
            >>> k = te.reduce_axis((0, 16), name="k")
            >>> C = te.compute((16,), lambda i: te.sum(A[i, k], axis=k), name="C")
            >>> sch = Schedule(te.create_prim_func([A, C]))
            >>> sch.pad_einsum(sch.get_block("C"), [32, 32])
            >>> [sch.get(loop).extent.value for loop in sch.get_loops(sch.get_block("C"))]
            [32, 32]
        """
        P.pad_einsum(self.state, block, padding)
