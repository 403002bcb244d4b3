"""Turn TensorIR blocks into plain statements: iter vars substituted, predicates as `if`.

Before::

    for i in T.serial(10):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.where(i < 8)
            B[vi] = A[vi] * T.float32(2)

After ``ConvertBlocksToLoops()``::

    for i in T.serial(10):
        if i < 8:
            B[i] = A[i] * T.float32(2)

A block's `alloc_buffers` become `Allocate(buffer, body)` around the block's body (for
the root block: around the whole function body), a remaining `init` is lowered as in
`LowerInitBlock`, and `match_buffers` views are replaced by their source buffer with
the region's offsets added to the indices.  The blocks' `storage_align` requests
(annotation ``buffer_dim_align``) move to a function attribute of that name, for the
compaction passes.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.diagnostics import DiagnosticError
from unity.tir.buffer import Buffer, BufferRegion
from unity.tir.expr import BufferLoad, IntImm, PrimExpr, Var
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, substitute
from unity.tir.stmt import Allocate, Block, BlockRealize, BufferStore, IfThenElse, Stmt
from unity.tir.transform._base import PrimFuncPass, with_body
from unity.tir.transform.lower_init_block import lower_init


@dataclass(frozen=True)
class ConvertBlocksToLoops(PrimFuncPass):
    """Remove every `Block`/`BlockRealize`, keeping their meaning with loops and `if`s.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((4, 8), name="A")
        >>> k = te.reduce_axis((0, 8), name="k")
        >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
        >>> func = te.create_prim_func([A, B])
        >>> from unity.tir.transform import LowerInitBlock
        >>> mod = LowerInitBlock()(IRModule({"main": func}))
        >>> "T.block" in ConvertBlocksToLoops()(mod)["main"].script()
        False
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> from unity import te
            >>> A = te.placeholder((4, 8), name="A")
            >>> k = te.reduce_axis((0, 8), name="k")
            >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
            >>> func = te.create_prim_func([A, B])
            >>> from unity.tir.transform import LowerInitBlock
            >>> func = LowerInitBlock().transform_function(func)
            >>> print(ConvertBlocksToLoops().transform_function(func).body.script())
            for i, k in T.grid(4, 8):
                if k == 0:
                    B[i] = T.float32(0.0)
                B[i] = B[i] + A[i, k]
        """
        lowerer = _BlockLowerer()
        out = with_body(func, lowerer.visit_stmt(func.body))
        if lowerer.aligns:
            out = out.with_attr(DIM_ALIGN, tuple(lowerer.aligns.items()))
        return out


DIM_ALIGN = "buffer_dim_align"
"""The function attribute holding the `storage_align` requests of the blocks (the block
annotation of the same name, by buffer): ``((data_var, ((axis, factor, offset), ..)), ..)``;
the passes that compact allocations give those buffers padded strides."""


def _is_true(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value != 0


class _BlockLowerer(StmtExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.views: dict[Buffer, BufferRegion] = {}
        self.aligns: dict[Var, tuple[tuple[int, int, int], ...]] = {}

    def visit_block_realize_(self, realize: BlockRealize) -> Stmt:
        block = realize.block
        if len(realize.iter_values) != len(block.iter_vars):
            msg = (
                f"block {block.name_hint!r} has {len(block.iter_vars)} iter vars but is "
                f"bound to {len(realize.iter_values)} values"
            )
            raise DiagnosticError(msg, realize)
        vmap: dict[Var, PrimExpr] = {
            iv.var: value for iv, value in zip(block.iter_vars, realize.iter_values)
        }
        body = self._lower_block(block, vmap)
        if _is_true(realize.predicate):
            return body
        return IfThenElse(self.visit_expr(realize.predicate), body)

    def visit_block_(self, block: Block) -> Stmt:
        if block.iter_vars:
            msg = f"block {block.name_hint!r} has iter vars but no BlockRealize binding them"
            raise DiagnosticError(msg, block)
        return self._lower_block(block, {})

    def _lower_block(self, block: Block, vmap: dict[Var, PrimExpr]) -> Stmt:
        for index, axis, factor, offset in block.annotations.get(DIM_ALIGN, ()):
            data = block.writes[index].buffer.data
            self.aligns[data] = (*self.aligns.get(data, ()), (axis, factor, offset))
        for match in block.match_buffers:
            source = match.source
            region = tuple(r.replace(min=substitute(r.min, vmap)) for r in source.region)
            self.views[match.buffer] = source.replace(region=region)
        body = substitute(lower_init(block, block.body), vmap)
        body = self.visit_stmt(body)
        for buffer in reversed(block.alloc_buffers):
            body = Allocate(buffer, body)
        return body

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        load = self._mutate_fields(load)
        view = self.views.get(load.buffer)
        if view is None:
            return load
        return BufferLoad(view.buffer, _view_indices(view, load.indices), span=load.span)

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        store = self._mutate_fields(store)
        view = self.views.get(store.buffer)
        if view is None:
            return store
        indices = _view_indices(view, store.indices)
        return BufferStore(view.buffer, store.value, indices, span=store.span)


def _view_indices(view: BufferRegion, indices: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
    """Indices into the source buffer of a `match_buffer` view: the view's dimensions map
    to the trailing dimensions of the region; the leading ones sit at the region's min."""
    lead = len(view.region) - len(indices)
    if lead < 0:
        msg = f"a view of rank {len(indices)} cannot match a region of rank {len(view.region)}"
        raise DiagnosticError(msg, view)
    mins = [r.min for r in view.region]
    shifted = (i if _is_zero(m) else m + i for m, i in zip(mins[lead:], indices))
    return (*mins[:lead], *shifted)


def _is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 0
