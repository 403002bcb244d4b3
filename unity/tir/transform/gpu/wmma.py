"""Tensor-core intrinsics: 16x16x16 `wmma` fragment operations of one warp, as TIR `Op`s.

A fragment is a 16 x 16 tile held across the 32 lanes of a warp (the layout inside is
the hardware's).  Fragments live in buffers of scope ``wmma.matrix_a``,
``wmma.matrix_b`` (the operands, row-major 16 x 16 tiles of A and B) or
``wmma.accumulator`` (C); each such buffer is one warp's, an array of 16 x 16 tiles.
Every lane of the warp executes each operation with the same arguments (they are
warp-collective, like `nvcuda::wmma`'s `*_sync` functions).

Two forms.  What the tensor intrinsics' `impl` write (and the schedule holds): each
fragment and each memory tile is named by a `BufferLoad` of its top-left element::

    T.cuda.wmma_fill(C_frag[i * 16, j * 16], T.float32(0))
    T.cuda.wmma_load(A_frag[i * 16, 0], A_shared[ty * 64 + i * 16, k * 16])
    T.cuda.wmma_mma(C_frag[..], A_frag[..], B_frag[..], C_frag[..])   # D = A @ B + C
    T.cuda.wmma_store(C[by * 128 + .., bx * 128 + ..], C_frag[..])

and, after `LowerWmma`, what codegen and the emulator read: a fragment is its buffer's
`data` variable and the index of the tile in it, a memory tile its top-left `BufferLoad`
(flattened later) and the row stride in elements::

    T.cuda.wmma_load(A_frag_data, i, A_shared[...], 32)

Example:
    >>> from unity.tir.buffer import decl_buffer
    >>> F = decl_buffer((16, 16), "float32", "F", scope="wmma.accumulator")
    >>> fill(F[0, 0], 0.0).value.op is wmma_fill_op
    True
"""

from __future__ import annotations

from unity.ir.op import Op
from unity.tir.expr import BufferLoad, Call, ExprLike, PrimExpr, const
from unity.tir.stmt import Evaluate

TILE = 16
"""The side of a fragment (the m16n16k16 shape)."""

FRAGMENT_SCOPES = ("wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator")
"""Scopes of fragment buffers (one warp's each)."""

wmma_fill_op = Op("tir.cuda.wmma_fill", numpy=None, llvm=None, tile=(16, 16), writes=(0,))
"""`fill_fragment(frag, value)`: every element of an accumulator tile set to `value`."""

wmma_load_op = Op("tir.cuda.wmma_load", numpy=None, llvm=None, tile=(16, 16), writes=(0,))
"""`load_matrix_sync(frag, &mem, ldm)`: a row-major 16 x 16 tile of memory into an operand."""

wmma_mma_op = Op("tir.cuda.wmma_mma", numpy=None, llvm=None, tile=(16, 16), writes=(0,))
"""`mma_sync(d, a, b, c)`: `d = a @ b + c` on fragments."""

wmma_store_op = Op("tir.cuda.wmma_store", numpy=None, llvm=None, tile=(16, 16), writes=(0,))
"""`store_matrix_sync(&mem, frag, ldm, mem_row_major)`: an accumulator tile into memory."""

WMMA_OPS = (wmma_fill_op, wmma_load_op, wmma_mma_op, wmma_store_op)
"""Their attributes: ``tile``, the shape each `BufferLoad` argument's tile covers (on the
buffer's last two dimensions, from that element on), and ``writes``, the argument
written (the others are read); buffer compaction and barrier insertion read both."""


def _call(op: Op, *args: PrimExpr) -> Evaluate:
    return Evaluate(Call("int32", op, tuple(args)))


def fill(frag: BufferLoad, value: ExprLike) -> Evaluate:
    """Set the accumulator tile at `frag` to `value` (of the fragment's dtype).

    Example:
        >>> from unity.tir.buffer import decl_buffer
        >>> F = decl_buffer((16, 16), "float16", "F", scope="wmma.accumulator")
        >>> fill(F[0, 0], 0.0).value.args[1].dtype
        'float16'
    """
    return _call(wmma_fill_op, frag, const(value, frag.dtype))


def load(frag: BufferLoad, tile: BufferLoad) -> Evaluate:
    """Load the row-major 16 x 16 memory tile whose top-left element is `tile`.

    Example:
        >>> from unity.tir.buffer import decl_buffer
        >>> A = decl_buffer((32, 32), "float16", "A", scope="shared")
        >>> F = decl_buffer((16, 16), "float16", "F", scope="wmma.matrix_a")
        >>> load(F[0, 0], A[16, 0]).value.op.name
        'tir.cuda.wmma_load'
    """
    return _call(wmma_load_op, frag, tile)


def mma(d: BufferLoad, a: BufferLoad, b: BufferLoad, c: BufferLoad) -> Evaluate:
    """`d = a @ b + c` on the fragments at `d`, `a`, `b`, `c`.

    Example:
        >>> from unity.tir.buffer import decl_buffer
        >>> A = decl_buffer((16, 16), "float16", "A", scope="wmma.matrix_a")
        >>> B = decl_buffer((16, 16), "float16", "B", scope="wmma.matrix_b")
        >>> C = decl_buffer((16, 16), "float32", "C", scope="wmma.accumulator")
        >>> len(mma(C[0, 0], A[0, 0], B[0, 0], C[0, 0]).value.args)
        4
    """
    return _call(wmma_mma_op, d, a, b, c)


def store(tile: BufferLoad, frag: BufferLoad) -> Evaluate:
    """Store the accumulator tile at `frag` row-major into memory from `tile` on.

    Example:
        >>> from unity.tir.buffer import decl_buffer
        >>> C = decl_buffer((16, 16), "float32", "C")
        >>> F = decl_buffer((16, 16), "float32", "F", scope="wmma.accumulator")
        >>> store(C[0, 0], F[0, 0]).value.op.name
        'tir.cuda.wmma_store'
    """
    return _call(wmma_store_op, tile, frag)


def is_wmma(node: object) -> bool:
    """True for a call of one of the four fragment operations.

    Example:
        >>> from unity.tir.buffer import decl_buffer
        >>> F = decl_buffer((16, 16), "float32", "F", scope="wmma.accumulator")
        >>> is_wmma(fill(F[0, 0], 0.0).value), is_wmma(const(0))
        (True, False)
    """
    return isinstance(node, Call) and node.op in WMMA_OPS
