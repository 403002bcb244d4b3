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
    """Base of all TIR statements."""


@node
class BufferStore(Stmt):
    """`buffer[indices] = value`; `Ramp` indices store a vector."""

    buffer: Buffer
    value: PrimExpr
    indices: tuple[PrimExpr, ...]


class ForKind(Enum):
    """How a loop's iterations run; every kind means the same as `SERIAL`."""

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
    """`while condition: body`."""

    condition: PrimExpr
    body: Stmt


@node
class IfThenElse(Stmt):
    """`if condition: then_case else: else_case`."""

    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None


@node
class SeqStmt(Stmt):
    """Statements run in order."""

    seq: tuple[Stmt, ...]


@node
class LetStmt(Stmt):
    """`var = value` scoped over `body`."""

    var: Var = binds()
    value: PrimExpr
    body: Stmt


@node
class Allocate(Stmt):
    """Storage for `buffer` (its scope and shape) during `body`."""

    buffer: Buffer = binds()
    body: Stmt


@node
class AssertStmt(Stmt):
    """Fail with `message` unless `condition`, then run `body`."""

    condition: PrimExpr
    message: str
    body: Stmt


@node
class Evaluate(Stmt):
    """Evaluate `value` for its side effects (an intrinsic call)."""

    value: PrimExpr


@node
class MatchBufferRegion(Node):
    """Inside a block, `buffer` is a view of `source` (used by tensorize)."""

    buffer: Buffer = binds()
    source: BufferRegion


@node
class Block(Stmt):
    """A TensorIR block: iteration variables, read/write regions, optional `init`.

    `init` runs when every reduction iteration variable is at its minimum.
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
    run only where `predicate` holds."""

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
