"""Flatten N-d buffer accesses into 1-D accesses with the strides and offset folded in.

Before::

    @T.prim_func
    def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        for i, j in T.grid(4, 8):
            B[i, j] = A[i, j]

After ``FlattenBuffer()``::

    @T.prim_func
    def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        A_1 = T.Buffer((32,), data=A.data)
        B_1 = T.Buffer((32,), data=B.data)
        for i, j in T.grid(4, 8):
            B_1[i * 8 + j] = A_1[i * 8 + j]

Parameters keep their N-d buffers (the runtime checks argument shapes against them);
every load and store goes through a 1-D buffer sharing the original's `data` Var, and
`Allocate` holds the flat buffer.  Indices keep their dtype (int32 or int64).  A 1-D
buffer without strides or offset is already flat and kept as is.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.diagnostics import DiagnosticError
from unity.tir.buffer import Buffer
from unity.tir.arith import Analyzer
from unity.tir.arith.key import expr_key
from unity.tir.expr import Add, BufferLoad, FloorDiv, FloorMod, PrimExpr, const
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator
from unity.tir.stmt import Allocate, Block, BlockRealize, BufferStore, Stmt
from unity.tir.transform._base import PrimFuncPass, fold_add, fold_mul, is_const_int, with_body


@dataclass(frozen=True)
class FlattenBuffer(PrimFuncPass):
    """Rewrite `buf[i0, ..., ik]` into `flat[elem_offset + sum(i_d * stride_d)]`.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((4, 8), name="A")
        >>> k = te.reduce_axis((0, 8), name="k")
        >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
        >>> func = te.create_prim_func([A, B])
        >>> from unity.tir.transform import ConvertBlocksToLoops, LowerInitBlock
        >>> func = LowerInitBlock().transform_function(func)
        >>> func = ConvertBlocksToLoops().transform_function(func)
        >>> out = FlattenBuffer()(IRModule({"main": func}))
        >>> "A_1[i * 8 + k]" in out.script()  # a flat alias of A
        True
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> from unity import te
            >>> A = te.placeholder((4, 8), name="A")
            >>> k = te.reduce_axis((0, 8), name="k")
            >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
            >>> func = te.create_prim_func([A, B])
            >>> from unity.tir.transform import ConvertBlocksToLoops, LowerInitBlock
            >>> func = LowerInitBlock().transform_function(func)
            >>> func = ConvertBlocksToLoops().transform_function(func)
            >>> print(FlattenBuffer().transform_function(func).script())
            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"tir.noalias": True})
                A_1 = T.Buffer((32,), "float32", data=A.data)
                for i, k in T.grid(4, 8):
                    if k == 0:
                        B[i] = T.float32(0.0)
                    B[i] = B[i] + A_1[i * 8 + k]
        """
        return with_body(func, _Flattener().visit_stmt(func.body))


def is_flat(buffer: Buffer) -> bool:
    """True when `buffer` is 1-D, compact and without offset (nothing to fold).

    Example:
        >>> from unity import tir
        >>> is_flat(tir.decl_buffer((8,))), is_flat(tir.decl_buffer((2, 4)))
        (True, False)
    """
    return len(buffer.shape) == 1 and not buffer.strides and is_const_int(buffer.elem_offset, 0)


def flat_strides(buffer: Buffer) -> tuple[PrimExpr, ...]:
    """The strides of `buffer`, computed row-major when it has none (constants folded).

    Example:
        >>> from unity import tir
        >>> [s.value for s in flat_strides(tir.decl_buffer((2, 3, 4)))]
        [12, 4, 1]
    """
    if buffer.strides:
        return buffer.strides
    strides: list[PrimExpr] = []
    stride: PrimExpr | None = None
    for dim in reversed(buffer.shape):
        strides.append(const(1, dim.dtype) if stride is None else stride)
        stride = dim if stride is None else fold_mul(stride, dim)
    return tuple(reversed(strides))


def flatten(buffer: Buffer) -> Buffer:
    """The 1-D buffer over the same `data` as `buffer`, as large as its extent.

    Example:
        >>> from unity import tir
        >>> flatten(tir.decl_buffer((2, 3))).shape[0].value
        6
    """
    if not buffer.shape:
        size: PrimExpr = const(1)
    elif buffer.strides:
        size = fold_mul(buffer.shape[0], buffer.strides[0])
    else:
        size = buffer.shape[0]
        for dim in buffer.shape[1:]:
            size = fold_mul(size, dim)
    return Buffer(buffer.data, (size,), buffer.dtype, buffer.name, scope=buffer.scope)


def flat_index(buffer: Buffer, indices: tuple[PrimExpr, ...]) -> PrimExpr:
    """`elem_offset + sum(indices[d] * strides[d])`, skipping `* 1` and `+ 0`.

    Example:
        >>> from unity import tir
        >>> i, j = tir.Var("i"), tir.Var("j")
        >>> flat_index(tir.decl_buffer((4, 8)), (i, j)).script()
        'i * 8 + j'
    """
    index: PrimExpr | None = None
    if not buffer.strides:
        indices = _merged_splits(buffer, indices)
    for idx, stride in zip(indices, flat_strides(buffer)):
        if idx is None:  # merged into the next dimension
            continue
        term = fold_mul(idx, stride)
        index = term if index is None else fold_add(index, term)
    if buffer.elem_offset is not None and not is_const_int(buffer.elem_offset, 0):
        index = buffer.elem_offset if index is None else fold_add(index, buffer.elem_offset)
    return const(0) if index is None else index


def _merged_splits(buffer: Buffer, indices: tuple[PrimExpr, ...]) -> tuple[PrimExpr | None, ...]:
    """`indices` with each pair ``q // D, q % D`` over adjacent dims of which the second
    has extent `D` merged into ``None, q`` (``(q // D) * D * s + (q % D) * s`` is ``q * s``):
    rows of a symbolic width flattened by a schedule (``p // W, p % W``) address the buffer
    without a division."""
    out: list[PrimExpr | None] = list(indices)
    for d in range(len(out) - 1):
        (hi, a), (lo, b) = _with_offset(out[d], FloorDiv), _with_offset(out[d + 1], FloorMod)
        if (hi is not None and lo is not None and expr_key(hi.a) == expr_key(lo.a)
                and expr_key(hi.b) == expr_key(lo.b) and _same_size(hi.b, buffer.shape[d + 1])):  # fmt: skip
            merged = lo.a  # (q // D + a) * D + q % D + b = q + a * D + b
            if a is not None:
                merged = fold_add(merged, fold_mul(a, hi.b))
            out[d], out[d + 1] = None, merged if b is None else fold_add(merged, b)
    return tuple(out)


def _same_size(a: PrimExpr, b: PrimExpr) -> bool:
    """Whether `a` and `b` are equal: ``(W + 15) // 16`` (a schedule's) and ``(W - 1) //
    16 + 1`` (the buffer's) are."""
    return expr_key(a) == expr_key(b) or Analyzer().can_prove_equal(a, b)


def _with_offset(e: PrimExpr | None, cls: type) -> tuple[PrimExpr | None, PrimExpr | None]:
    """`(node, offset)` for `e` = ``node`` or ``node + offset`` with `node` of type `cls`."""
    if type(e) is cls:
        return e, None
    if type(e) is Add:
        if type(e.a) is cls:
            return e.a, e.b
        if type(e.b) is cls:
            return e.b, e.a
    return None, None


class _Flattener(StmtExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.flat: dict[Buffer, Buffer] = {}

    def _flat(self, buffer: Buffer) -> Buffer:
        if is_flat(buffer):
            return buffer
        flat = self.flat.get(buffer)
        if flat is None:
            flat = self.flat[buffer] = flatten(buffer)
        return flat

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        load = self._mutate_fields(load)
        flat = self._flat(load.buffer)
        if flat is load.buffer:
            return load
        return BufferLoad(flat, (flat_index(load.buffer, load.indices),), span=load.span)

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        store = self._mutate_fields(store)
        flat = self._flat(store.buffer)
        if flat is store.buffer:
            return store
        index = flat_index(store.buffer, store.indices)
        return BufferStore(flat, store.value, (index,), span=store.span)

    def visit_allocate_(self, alloc: Allocate) -> Stmt:
        body = self.visit_stmt(alloc.body)
        return alloc.replace(buffer=self._flat(alloc.buffer), body=body)

    def visit_block_(self, block: Block) -> Stmt:
        raise DiagnosticError(
            f"FlattenBuffer needs blocks lowered first (found block {block.name_hint!r}); "
            "run ConvertBlocksToLoops before it",
            block,
        )

    def visit_block_realize_(self, realize: BlockRealize) -> Stmt:
        return self.visit_block_(realize.block)
