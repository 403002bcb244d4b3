"""TIR statements, including TensorIR's `Block` and `BlockRealize`.

Example:
    >>> from unity import tir
    >>> A = tir.decl_buffer((8,), "float32", "A")
    >>> i = tir.Var("i")
    >>> loop = tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL,
    ...                tir.BufferStore(A, tir.const(0.0), (i,)))
    >>> loop.kind.value
    'serial'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from enum import Enum
from typing import Union

from unity.ir.node import Node, binds, node
from unity.tir.buffer import Buffer, BufferRegion
from unity.tir.expr import IterVar, PrimExpr, Var

AnnotationValue = Union[int, float, str, bool, PrimExpr, tuple["AnnotationValue", ...]]
"""Values allowed in loop and block annotations."""


@node
class Stmt(Node):
    """Base of all TIR statements.

    Example:
        >>> from unity import tir
        >>> isinstance(tir.Evaluate(tir.const(0)), Stmt)
        True
    """


@node
class BufferStore(Stmt):
    """`buffer[indices] = value`; `Ramp` indices store a vector.

    Example:
        >>> from unity import tir
        >>> A, i = tir.decl_buffer((8,), "float32", "A"), tir.Var("i")
        >>> print(BufferStore(A, tir.const(1.0), (i,)).script())
        A[i] = T.float32(1.0)
    """

    buffer: Buffer
    value: PrimExpr
    indices: tuple[PrimExpr, ...]


class ForKind(Enum):
    """How a loop's iterations run; every kind means the same as `SERIAL`.

    Example:
        >>> ForKind("unroll") is ForKind.UNROLLED
        True
    """

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unroll"
    THREAD_BINDING = "thread_binding"


@node
class For(Stmt):
    """`for loop_var in range(min, min + extent): body`.

    `thread_binding` names the GPU thread axis ("threadIdx.x", "blockIdx.y", ...)
    when `kind` is `THREAD_BINDING`.

    Example:
        >>> from unity import tir
        >>> A, i = tir.decl_buffer((8,), "float32", "A"), tir.Var("i")
        >>> body = BufferStore(A, tir.const(1.0), (i,))
        >>> print(For(i, tir.const(0), tir.const(8), ForKind.PARALLEL, body).script())
        for i in T.parallel(8):
            A[i] = T.float32(1.0)
    """

    loop_var: Var = binds()
    min: PrimExpr
    extent: PrimExpr
    kind: ForKind
    body: Stmt
    thread_binding: str | None = None
    annotations: Mapping[str, AnnotationValue] = field(default_factory=dict)


@node
class While(Stmt):
    """`while condition: body`.

    Example:
        >>> from unity import tir
        >>> A, i = tir.decl_buffer((8,), "float32", "A"), tir.Var("i")
        >>> print(While(i < 8, BufferStore(A, tir.const(1.0), (i,))).script())
        while i < 8:
            A[i] = T.float32(1.0)
    """

    condition: PrimExpr
    body: Stmt


@node
class IfThenElse(Stmt):
    """`if condition: then_case else: else_case`.

    Example:
        >>> from unity import tir
        >>> A, i = tir.decl_buffer((8,), "float32", "A"), tir.Var("i")
        >>> print(IfThenElse(i < 4, BufferStore(A, tir.const(1.0), (i,))).script())
        if i < 4:
            A[i] = T.float32(1.0)
    """

    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None


@node
class SeqStmt(Stmt):
    """Statements run in order.

    Example:
        >>> from unity import tir
        >>> A = tir.decl_buffer((2,), "float32", "A")
        >>> stores = tuple(BufferStore(A, tir.const(0.0), (tir.const(k),)) for k in range(2))
        >>> print(SeqStmt(stores).script())
        A[0] = T.float32(0.0)
        A[1] = T.float32(0.0)
    """

    seq: tuple[Stmt, ...]


@node
class LetStmt(Stmt):
    """`var = value` scoped over `body`.

    Example:
        >>> from unity import tir
        >>> x = tir.Var("x")
        >>> print(LetStmt(x, tir.const(2), Evaluate(x)).script())
        x: T.int32 = 2
        T.evaluate(x)
    """

    var: Var = binds()
    value: PrimExpr
    body: Stmt


@node
class Allocate(Stmt):
    """Storage for `buffer` (its scope and shape) during `body`.

    Example:
        >>> from unity import tir
        >>> B = tir.decl_buffer((4,), "float32", "B", scope="local")
        >>> print(Allocate(B, BufferStore(B, tir.const(0.0), (tir.const(0),))).script())
        with T.allocate_buffer((4,), "float32", scope="local") as B:
            B[0] = T.float32(0.0)
    """

    buffer: Buffer = binds()
    body: Stmt


@node
class AssertStmt(Stmt):
    """Fail with `message` unless `condition`, then run `body`.

    Example:
        >>> from unity import tir
        >>> i = tir.Var("i")
        >>> print(AssertStmt(i < 8, "i out of range", Evaluate(i)).script())
        assert i < 8, "i out of range"
        T.evaluate(i)
    """

    condition: PrimExpr
    message: str
    body: Stmt


@node
class Evaluate(Stmt):
    """Evaluate `value` for its side effects (an intrinsic call).

    Example:
        >>> from unity import tir
        >>> print(Evaluate(tir.const(0)).script())
        T.evaluate(0)
    """

    value: PrimExpr


@node
class MatchBufferRegion(Node):
    """Inside a block, `buffer` is a view of `source` (used by tensorize).

    Example:
        >>> from unity import tir
        >>> A = tir.decl_buffer((16,), "float32", "A")
        >>> sub = tir.decl_buffer((4,), "float32", "A_sub")
        >>> m = MatchBufferRegion(sub, BufferRegion(A, (tir.Range.from_min_extent(4, 4),)))
        >>> m.source.region[0].min.value, m.buffer.name
        (4, 'A_sub')
    """

    buffer: Buffer = binds()
    source: BufferRegion


@node
class Block(Stmt):
    """A TensorIR block: iteration variables, read/write regions, optional `init`.

    `init` runs when every reduction iteration variable is at its minimum.

    Example:
        >>> from unity import tir
        >>> A = tir.decl_buffer((8,), "float32", "A")
        >>> vi = tir.IterVar(tir.Var("vi"), tir.Range.from_min_extent(0, 8))
        >>> body = BufferStore(A, tir.const(0.0), (vi.var,))
        >>> block = Block((vi,), (), (BufferRegion.from_point(A, (vi.var,)),), "zero", body)
        >>> block.name_hint, block.init is None
        ('zero', True)
    """

    iter_vars: tuple[IterVar, ...] = binds()
    reads: tuple[BufferRegion, ...]
    writes: tuple[BufferRegion, ...]
    name_hint: str
    body: Stmt
    init: Stmt | None = None
    alloc_buffers: tuple[Buffer, ...] = binds(default=())
    match_buffers: tuple[MatchBufferRegion, ...] = ()
    annotations: Mapping[str, AnnotationValue] = field(default_factory=dict)


@node
class BlockRealize(Stmt):
    """An instance of `block` with its iteration variables bound to `iter_values`,
    run only where `predicate` holds.

    Example:
        >>> from unity import tir
        >>> A = tir.decl_buffer((8,), "float32", "A")
        >>> vi = tir.IterVar(tir.Var("vi"), tir.Range.from_min_extent(0, 8))
        >>> block = Block((vi,), (), (), "zero", BufferStore(A, tir.const(0.0), (vi.var,)))
        >>> realize = BlockRealize((tir.const(3),), tir.const(True), block)
        >>> realize.iter_values[0].value, realize.block.name_hint
        (3, 'zero')
    """

    iter_values: tuple[PrimExpr, ...]
    predicate: PrimExpr
    block: Block


def seq(*stmts: Stmt) -> Stmt:
    """Flatten nested sequences; a single statement is returned as is.

    Example:
        >>> from unity import tir
        >>> s = tir.Evaluate(tir.const(0))
        >>> seq(s) is s
        True
    """
    flat: list[Stmt] = []
    for s in stmts:
        flat.extend(s.seq if isinstance(s, SeqStmt) else (s,))
    return flat[0] if len(flat) == 1 else SeqStmt(tuple(flat))
