"""Statement-tree helpers for schedule primitives: paths, lookups and replacement.

Nodes are immutable, so a primitive rebuilds the spine from the changed statement up
to the function body with `replace_stmts`.

Example:
    >>> from unity import tir
    >>> A = tir.decl_buffer((4,), "float32", "A")
    >>> i = tir.Var("i")
    >>> loop = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL,
    ...                tir.BufferStore(A, tir.const(0.0), (i,)))
    >>> len(find_path(loop, lambda s: isinstance(s, tir.BufferStore)))
    2
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from unity.tir.expr import IntImm
from unity.tir.stmt import (
    Allocate,
    AssertStmt,
    Block,
    BlockRealize,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    While,
)  # fmt: skip

_BODY_FIELDS: dict[type, tuple[str, ...]] = {
    For: ("body",), While: ("body",), LetStmt: ("body",), Allocate: ("body",),
    AssertStmt: ("body",), IfThenElse: ("then_case", "else_case"), BlockRealize: ("block",),
    Block: ("init", "body"),
}  # fmt: skip


def children(stmt: Stmt) -> list[Stmt]:
    """The statements directly under `stmt`, in program order.

    Example:
        >>> children(tir.SeqStmt((s1, s2)))  # doctest: +SKIP
        [s1, s2]
    """
    if isinstance(stmt, SeqStmt):
        return list(stmt.seq)
    out: list[Stmt] = []
    for name in _BODY_FIELDS.get(type(stmt), ()):
        child = getattr(stmt, name)
        if child is not None:
            out.append(child)
    return out


def walk(stmt: Stmt) -> Iterator[Stmt]:
    """Every statement under `stmt` (included), pre-order.

    Example:
        >>> [type(s).__name__ for s in walk(loop)]  # doctest: +SKIP
        ['For', 'BufferStore']
    """
    yield stmt
    for child in children(stmt):
        yield from walk(child)


def find_path(root: Stmt, pred: Callable[[Stmt], bool]) -> list[Stmt] | None:
    """The chain `[root, ..., s]` to the first statement `s` (pre-order) with `pred(s)`.

    Example:
        >>> find_path(loop, lambda s: s is loop) == [loop]  # doctest: +SKIP
        True
    """
    if pred(root):
        return [root]
    for child in children(root):
        path = find_path(child, pred)
        if path is not None:
            return [root, *path]
    return None


def replace_stmts(root: Stmt, mapping: Mapping[Stmt, Stmt | None]) -> Stmt:
    """Rebuild `root` with each key statement replaced by its value (`None` removes it).

    Loops, sequences and blocks left empty by a removal disappear too.

    Example:
        >>> replace_stmts(loop, {loop.body: new_store}).body is new_store  # doctest: +SKIP
        True
    """
    new = _rewrite(root, mapping)
    return new if new is not None else Evaluate(IntImm("int32", 0))


def _rewrite(stmt: Stmt, mapping: Mapping[Stmt, Stmt | None]) -> Stmt | None:
    if stmt in mapping:
        return mapping[stmt]
    if isinstance(stmt, SeqStmt):
        items: list[Stmt] = []
        for s in stmt.seq:
            r = _rewrite(s, mapping)
            if r is not None:
                items.extend(r.seq if isinstance(r, SeqStmt) else (r,))
        if not items:
            return None
        if len(items) == len(stmt.seq) and all(a is b for a, b in zip(items, stmt.seq)):
            return stmt
        return items[0] if len(items) == 1 else SeqStmt(tuple(items))
    names = _BODY_FIELDS.get(type(stmt), ())
    changes = {}
    for name in names:
        old = getattr(stmt, name)
        if old is None:
            continue
        new = _rewrite(old, mapping)
        if new is None and name in ("body", "then_case", "block"):
            if isinstance(stmt, Block):
                new = Evaluate(IntImm("int32", 0))
            else:
                return None
        changes[name] = new
    return stmt.replace(**changes) if changes else stmt


def parent_map(root: Stmt) -> dict[Stmt, Stmt]:
    """Map every statement under `root` to its parent statement.

    Example:
        >>> parent_map(loop)[loop.body] is loop  # doctest: +SKIP
        True
    """
    out: dict[Stmt, Stmt] = {}
    for s in walk(root):
        for c in children(s):
            out[c] = s
    return out
