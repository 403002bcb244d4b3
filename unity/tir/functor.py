"""Visitors and mutators over TIR expressions and statements.

Hooks keep TVM's spelling: `visit_add_`, `visit_buffer_store_`, `visit_for_`, ...
Dispatch follows the node's MRO, so `visit_binary_op_` catches every binary node
without its own hook, `visit_var_` catches `SizeVar`, and `visit_prim_expr_` /
`visit_stmt_default_` are the generic fallbacks that walk all children.
Mutators memoize by identity and return the very same node when nothing changed.

Example:
    >>> from unity import tir
    >>> i, j = tir.Var("i"), tir.Var("j")
    >>> class Rename(StmtExprMutator):
    ...     def visit_var_(self, v):
    ...         return j if v is i else v
    >>> Rename().visit_expr(i + 1).a is j
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from unity.ir.node import STRUCTURAL, Node, dispatch_table
from unity.tir.buffer import Buffer, BufferRegion
from unity.tir.expr import IterVar, PrimExpr, Range, Var
from unity.tir.stmt import MatchBufferRegion, Stmt

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAF_FIELDS = frozenset(
    ("dtype", "lanes", "kind", "iter_type", "message", "thread_binding", "annotations", "scope",
     "attrs", "name_hint", "op")
)  # fmt: skip


_EXPR, _STMT, _TUPLE, _BUFFER, _NODE, _LEAF = range(6)
_KINDS: dict[type, int] = {}
"""What a child value of each class is to the walkers: one dict lookup per child
instead of a chain of isinstance tests."""


def _kind(cls: type) -> int:
    """The kind of `cls`, remembered in `_KINDS` (the walkers look there first)."""
    kind = next(
        (k for k, base in ((_EXPR, PrimExpr), (_STMT, Stmt), (_TUPLE, tuple),
                           (_BUFFER, Buffer), (_NODE, Node)) if issubclass(cls, base)),
        _LEAF,
    )  # fmt: skip
    _KINDS[cls] = kind
    return kind


def child_fields(cls: type) -> tuple[str, ...]:
    """Names of the fields of node class `cls` that may hold child nodes.

    Example:
        >>> from unity import tir
        >>> child_fields(tir.Add)
        ('a', 'b')
    """
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if f.metadata.get(STRUCTURAL) != "ignore" and f.name not in _LEAF_FIELDS
        )
        _CHILD_FIELDS[cls] = names
    return names


class ExprVisitor:
    """Walk an expression tree; override `visit_<node>_` hooks.

    Example:
        >>> from unity import tir
        >>> class CountVars(ExprVisitor):
        ...     def __init__(self):
        ...         self.names = []
        ...     def visit_var_(self, v):
        ...         self.names.append(v.name)
        >>> c = CountVars()
        >>> c.visit_expr(tir.Var("i") * 4 + tir.Var("j"))
        >>> c.names
        ['i', 'j']
    """

    def visit_expr(self, expr: PrimExpr) -> Any:
        """Dispatch on the type of `expr`.

        Example:
            >>> from unity import tir
            >>> ExprVisitor().visit_expr(tir.Var("i") + 1) is None
            True
        """
        return dispatch_table(type(self), type(expr))(self, expr)

    def visit_prim_expr_(self, expr: PrimExpr) -> Any:
        """Generic hook: visit every child."""
        self._visit_other(expr)

    def visit_buffer(self, buffer: Buffer) -> Any:
        """Called for every buffer a node refers to (default: nothing).

        Example:
            >>> from unity import tir
            >>> class Buffers(ExprVisitor):
            ...     def visit_buffer(self, buffer):
            ...         print(buffer.name)
            >>> Buffers().visit_expr(tir.decl_buffer((4,), "float32", "A")[0] + 1.0)
            A
        """

    def _visit_child(self, value: object) -> None:
        kind = _KINDS.get(type(value))
        if kind is None:
            kind = _kind(type(value))
        if kind == _EXPR:
            self.visit_expr(value)  # type: ignore[arg-type]
        elif kind == _TUPLE:
            for item in value:  # type: ignore[attr-defined]  # a tuple of children
                self._visit_child(item)
        elif kind == _BUFFER:
            self.visit_buffer(value)  # type: ignore[arg-type]
        elif kind == _STMT:
            self._visit_stmt_child(value)  # type: ignore[arg-type]
        elif kind == _NODE:
            self._visit_other(value)  # type: ignore[arg-type]

    def _visit_stmt_child(self, stmt: Stmt) -> None:
        """A statement under an expression visitor: walked as a plain node."""
        self._visit_other(stmt)

    def _visit_other(self, value: Node) -> None:
        fields = _CHILD_FIELDS.get(type(value))
        for name in child_fields(type(value)) if fields is None else fields:
            self._visit_child(getattr(value, name))


class ExprMutator:
    """Rebuild an expression tree bottom-up; unchanged subtrees are returned as is.

    Example:
        >>> from unity import tir
        >>> class Double(ExprMutator):
        ...     def visit_int_imm_(self, imm):
        ...         return tir.IntImm(imm.dtype, imm.value * 2)
        >>> Double().visit_expr(tir.Var("i") + 3).b.value
        6
    """

    def __init__(self) -> None:
        self._memo: dict[Node, Any] = {}

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        """Dispatch on the type of `expr` (memoized by identity).

        Example:
            >>> from unity import tir
            >>> e = tir.Var("i") + 1
            >>> ExprMutator().visit_expr(e) is e  # nothing changed: the same node comes back
            True
        """
        done = self._memo.get(expr)
        if done is None:
            done = dispatch_table(type(self), type(expr))(self, expr)
            self._memo[expr] = done
        return done

    def visit_prim_expr_(self, expr: PrimExpr) -> PrimExpr:
        """Generic hook: mutate every child, rebuild if one changed."""
        return self._mutate_fields(expr)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        """Called for every buffer a node refers to (default: unchanged).

        Example:
            >>> from unity import tir
            >>> A, B = tir.decl_buffer((4,), "float32", "A"), tir.decl_buffer((4,), "float32", "B")
            >>> class AtoB(ExprMutator):
            ...     def visit_buffer(self, buffer):
            ...         return B if buffer is A else buffer
            >>> AtoB().visit_expr(A[0]).buffer.name
            'B'
        """
        return buffer

    def _mutate_fields(self, node: Any) -> Any:
        changes = None
        fields = _CHILD_FIELDS.get(type(node))
        for name in child_fields(type(node)) if fields is None else fields:
            old = getattr(node, name)
            new = self._mutate_child(old)
            if new is not old:
                if changes is None:
                    changes = {}
                changes[name] = new
        return node if changes is None else dataclasses.replace(node, **changes)

    def _mutate_child(self, value: Any) -> Any:
        kind = _KINDS.get(type(value))
        if kind is None:
            kind = _kind(type(value))
        if kind == _EXPR:
            return self.visit_expr(value)
        if kind == _TUPLE:
            new = [self._mutate_child(v) for v in value]
            for a, b in zip(new, value):
                if a is not b:
                    return tuple(new)
            return value
        if kind == _BUFFER:
            return self.visit_buffer(value)
        if kind == _STMT:
            return self._mutate_stmt_child(value)
        if kind == _NODE:
            return self._mutate_other(value)
        return value

    def _mutate_stmt_child(self, stmt: Stmt) -> Any:
        """A statement under an expression mutator: rebuilt as a plain node."""
        return self._mutate_other(stmt)

    def _mutate_other(self, value: Node) -> Node:
        return self._mutate_fields(value)


class StmtExprVisitor(ExprVisitor):
    """Walk statements and the expressions inside them.

    Example:
        >>> from unity import tir
        >>> class Loops(StmtExprVisitor):
        ...     def visit_for_(self, loop):
        ...         print(loop.loop_var.name)
        ...         self.visit_stmt(loop.body)
        >>> i, j = tir.Var("i"), tir.Var("j")
        >>> inner = tir.For(j, tir.const(0), tir.const(4), tir.ForKind.SERIAL, tir.Evaluate(j))
        >>> Loops().visit_stmt(tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, inner))
        i
        j
    """

    def visit_stmt(self, stmt: Stmt) -> Any:
        """Dispatch on the type of `stmt`.

        Example:
            >>> from unity import tir
            >>> StmtExprVisitor().visit_stmt(tir.Evaluate(tir.const(0))) is None
            True
        """
        return dispatch_table(type(self), type(stmt))(self, stmt)

    def visit_stmt_(self, stmt: Stmt) -> Any:
        """Generic hook: visit every child statement and expression."""
        self._visit_other(stmt)

    def _visit_stmt_child(self, stmt: Stmt) -> None:
        self.visit_stmt(stmt)


class StmtExprMutator(ExprMutator):
    """Rebuild statements and the expressions inside them.

    Example:
        >>> from unity import tir
        >>> class Parallel(StmtExprMutator):
        ...     def visit_for_(self, loop):
        ...         return loop.replace(kind=tir.ForKind.PARALLEL)
        >>> i = tir.Var("i")
        >>> loop = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, tir.Evaluate(i))
        >>> Parallel().visit_stmt(loop).kind.value
        'parallel'
    """

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        """Dispatch on the type of `stmt` (memoized by identity).

        Example:
            >>> from unity import tir
            >>> s = tir.Evaluate(tir.Var("i") + 1)
            >>> StmtExprMutator().visit_stmt(s) is s
            True
        """
        done = self._memo.get(stmt)
        if done is None:
            done = dispatch_table(type(self), type(stmt))(self, stmt)
            self._memo[stmt] = done
        return done

    def visit_stmt_(self, stmt: Stmt) -> Stmt:
        """Generic hook: mutate every child, rebuild if one changed."""
        return self._mutate_fields(stmt)

    def _mutate_stmt_child(self, stmt: Stmt) -> Any:
        return self.visit_stmt(stmt)


class _PostOrder(StmtExprVisitor):
    """`post_order_visit`'s walker (one class: its dispatch table is built once)."""

    def __init__(self, fn: Callable[[Node], object]) -> None:
        self.fn = fn

    def visit_prim_expr_(self, expr: PrimExpr) -> None:
        super().visit_prim_expr_(expr)
        self.fn(expr)

    def visit_stmt_(self, stmt: Stmt) -> None:
        super().visit_stmt_(stmt)
        self.fn(stmt)


def post_order_visit(node: Node, fn: Callable[[Node], object]) -> None:
    """Call `fn` on every expression and statement under `node`, children first.

    Example:
        >>> from unity import tir
        >>> seen = []
        >>> post_order_visit(tir.Var("i") + 1, lambda n: seen.append(type(n).__name__))
        >>> seen
        ['Var', 'IntImm', 'Add']
    """
    visitor = _PostOrder(fn)
    if isinstance(node, Stmt):
        visitor.visit_stmt(node)
    elif isinstance(node, PrimExpr):
        visitor.visit_expr(node)
    else:
        visitor._visit_other(node)


def post_order_nodes(node: Node) -> list[Node]:
    """Every expression and statement under `node`, children first (`post_order_visit`'s
    order).

    Example:
        >>> from unity import tir
        >>> [type(n).__name__ for n in post_order_nodes(tir.Var("i") + 1)]
        ['Var', 'IntImm', 'Add']
    """
    out: list[Node] = []
    post_order_visit(node, out.append)
    return out


def uses_var(node: Node, var: Var) -> bool:
    """True when `var` occurs anywhere under `node` (an expression or a statement).

    Example:
        >>> from unity import tir
        >>> i, j = tir.Var("i"), tir.Var("j")
        >>> uses_var(i * 2 + 1, i), uses_var(i * 2 + 1, j)
        (True, False)
    """
    found: list[bool] = []
    post_order_visit(node, lambda n: found.append(True) if n is var else None)
    return bool(found)


class _Substituter(StmtExprMutator):
    def __init__(self, vmap: Mapping[Var, PrimExpr], buffer_map: Mapping[Buffer, Buffer]) -> None:
        super().__init__()
        self.vmap = vmap
        self.buffer_map = buffer_map

    def visit_var_(self, var: Var) -> PrimExpr:
        return self.vmap.get(var, var)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        return self.buffer_map.get(buffer, buffer)


def substitute(
    node: Any, vmap: Mapping[Var, PrimExpr], buffer_map: Mapping[Buffer, Buffer] | None = None
) -> Any:
    """Replace variables (and optionally buffers) in an expression or statement.

    Example:
        >>> from unity import tir
        >>> i = tir.Var("i")
        >>> substitute(i * 2, {i: tir.const(3)}).a.value
        3
    """
    if not vmap and not buffer_map:
        return node
    sub = _Substituter(vmap, buffer_map or {})
    if isinstance(node, Stmt):
        return sub.visit_stmt(node)
    if isinstance(node, PrimExpr):
        return sub.visit_expr(node)
    return sub._mutate_child(node)


__all__ = [
    "BufferRegion", "ExprMutator", "ExprVisitor", "IterVar", "MatchBufferRegion", "Range",
    "StmtExprMutator", "StmtExprVisitor", "child_fields", "post_order_visit", "substitute",
    "uses_var",
]  # fmt: skip
