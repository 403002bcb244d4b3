"""Turn each `index_check(i, n)` into an assertion before the statement reading it, and a clamp.

An index read from data (ONNX Gather's token ids) must lie in ``[0, n)``; numpy and
onnxruntime refuse one that does not.  `topi` writes such an index as
``index_check(i, n)``; this pass checks it once where it is known and clamps the access,
so a kernel never reads out of bounds even where no check can be placed.

Before::

    for i in T.serial(n):
        for j in T.vectorized(64):
            Y[i, j] = W[T.call_intrin("int64", "tir.index_check", ids[i], T.int64(100)), j]

After ``LowerIndexChecks()``::

    for i in T.serial(n):
        assert T.int64(0) <= ids[i] and ids[i] < T.int64(100), "an index into W axis 0 ..."
        for j in T.vectorized(64):
            Y[i, j] = W[T.max(T.min(ids[i], T.int64(99)), T.int64(0)), j]

An assertion moves out of the loops around its statement while it uses none of their
variables, they run at least once and write none of the buffers it reads (so vectorized
copies stay vector code); it stays inside `if`s and before the item of a sequence that
holds it.  An index evaluated only on one side of a `select`, or outside a store (an
`if` condition, a `let` value), is clamped, not asserted.
With ``check=False`` (GPU kernels, which cannot fail) every index is only clamped.  Run
after `ConvertBlocksToLoops`.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from unity.tir.arith import Analyzer
from unity.tir.arith.key import expr_key
from unity.tir.buffer import Buffer
from unity.tir.expr import And, BufferLoad, Call, IntImm, PrimExpr, Select, Var, const
from unity.tir.expr import max_value_of as tir_max
from unity.tir.expr import min_value_of as tir_min
from unity.tir.function import PrimFunc
from unity.tir.functor import ExprMutator, ExprVisitor, child_fields, post_order_nodes
from unity.tir.op import index_check_op
from unity.tir.stmt import AssertStmt, BufferStore, For, IfThenElse, LetStmt, SeqStmt, Stmt
from unity.tir.transform._base import PrimFuncPass, with_body

__all__ = ["LowerIndexChecks"]


@dataclass(frozen=True)
class LowerIndexChecks(PrimFuncPass):
    """Assert each data-dependent index in range (once, as far out as it may go) and clamp it.

    Example:
        >>> from unity import te, topi
        >>> from unity.tir.transform import ConvertBlocksToLoops
        >>> W = te.placeholder((100, 8), name="W")
        >>> ids = te.placeholder((4,), "int64", name="ids")
        >>> func = ConvertBlocksToLoops().transform_function(
        ...     te.create_prim_func([W, ids, topi.take(W, ids)]))
        >>> "assert" in LowerIndexChecks().transform_function(func).script()
        True
    """

    check: bool = True
    """False: clamp only (device code cannot report a failure)."""

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when it has no `index_check`).

        Example:
            >>> LowerIndexChecks().transform_function(func) is func  # no gathers  # doctest: +SKIP
            True
        """
        if not _uses_index_check(func.body):
            return func
        return with_body(func, _Placer(self.check).scope(func.body))


@dataclass(frozen=True)
class _Check:
    condition: PrimExpr
    message: str
    vars: frozenset[Var]
    reads: frozenset[Var]
    """The data variables of the buffers the condition loads."""


class _Placer:
    def __init__(self, check: bool) -> None:
        self.check = check

    def scope(self, stmt: Stmt) -> Stmt:
        """`stmt` rewritten, with the checks that reach it placed in front of it."""
        out, checks = self.visit(stmt)
        return _wrap(out, checks)

    def visit(self, stmt: Stmt) -> tuple[Stmt, list[_Check]]:
        if isinstance(stmt, BufferStore):
            return self._store(stmt)
        if isinstance(stmt, For):
            body, checks = self.visit(stmt.body)
            up = _hoistable(checks, stmt, body)
            stay = [c for c in checks if c not in up]
            return stmt.replace(body=_wrap(body, stay)), up
        if isinstance(stmt, LetStmt):
            body, checks = self.visit(stmt.body)
            up = [c for c in checks if stmt.var not in c.vars]
            stay = [c for c in checks if c not in up]
            return stmt.replace(value=_Clamp().visit_expr(stmt.value), body=_wrap(body, stay)), up
        if isinstance(stmt, SeqStmt):  # a check stays in front of its item (earlier ones may
            return SeqStmt(tuple(self.scope(s) for s in stmt.seq), span=stmt.span), []  # write)
        if isinstance(stmt, IfThenElse):
            other = None if stmt.else_case is None else self.scope(stmt.else_case)
            cond = _Clamp().visit_expr(stmt.condition)
            return stmt.replace(condition=cond, then_case=self.scope(stmt.then_case), else_case=other), []
        changes = {}
        for name in child_fields(type(stmt)):
            value = getattr(stmt, name)
            if isinstance(value, Stmt):
                changes[name] = self.scope(value)
            elif isinstance(value, PrimExpr):
                changes[name] = _Clamp().visit_expr(value)
        return stmt.replace(**changes), []

    def _store(self, store: BufferStore) -> tuple[Stmt, list[_Check]]:
        found = _Finder()
        for index in store.indices:
            found.visit_expr(index)
        found.visit_expr(store.value)
        checks = [_check(call, buffer, axis, store) for call, buffer, axis in found.calls] if self.check else []
        return _Clamp().visit_stmt(store), checks


def _check(call: Call, buffer: Buffer | None, axis: int | None, store: BufferStore) -> _Check:
    index, extent = (_Clamp().visit_expr(a) for a in call.args)
    condition = And(const(0, index.dtype) <= index, index < extent)
    sources = sorted({n.buffer.name for n in post_order_nodes(index) if isinstance(n, BufferLoad)})
    where = f"into {buffer.name} axis {axis}" if buffer is not None else f"computing {store.buffer.name}"
    bound = Analyzer().simplify(extent)
    size = bound.value if isinstance(bound, IntImm) else bound.script()
    message = f"an index {where} is outside [0, {size})"
    if sources:
        message += f" (it is read from {', '.join(sources)})"
    nodes = post_order_nodes(condition)
    return _Check(
        condition, message,
        frozenset(n for n in nodes if isinstance(n, Var)),
        frozenset(n.buffer.data for n in nodes if isinstance(n, BufferLoad)),
    )  # fmt: skip


def _hoistable(checks: list[_Check], loop: For, body: Stmt) -> list[_Check]:
    """The checks that may run once before `loop`: they do not use the loop's variable,
    the loop runs at least once, and its body writes none of the buffers they read."""
    if not checks or not (isinstance(loop.extent, IntImm) and loop.extent.value >= 1):
        return []
    written = {n.buffer.data for n in post_order_nodes(body) if isinstance(n, BufferStore)}
    return [c for c in checks if loop.loop_var not in c.vars and written.isdisjoint(c.reads)]


def _wrap(stmt: Stmt, checks: list[_Check]) -> Stmt:
    seen: set[Hashable] = set()
    for c in reversed(checks):
        key = expr_key(c.condition)
        if key not in seen:
            seen.add(key)
            stmt = AssertStmt(c.condition, c.message, stmt)
    return stmt


class _Finder(ExprVisitor):
    """The `index_check` calls an expression always evaluates (not one side of a select),
    each with the buffer and axis it indexes (None when it is not directly an index)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[Call, Buffer | None, int | None]] = []

    def visit_select_(self, expr: Select) -> None:
        self.visit_expr(expr.condition)

    def visit_buffer_load_(self, load: BufferLoad) -> None:
        for axis, index in enumerate(load.indices):
            if isinstance(index, Call) and index.op is index_check_op:
                self.calls.append((index, load.buffer, axis))
                for arg in index.args:
                    self.visit_expr(arg)
            else:
                self.visit_expr(index)

    def visit_call_(self, call: Call) -> None:
        if call.op is index_check_op:
            self.calls.append((call, None, None))
        for arg in call.args:
            self.visit_expr(arg)


class _Clamp(ExprMutator):
    """Every ``index_check(i, n)`` as ``max(min(i, n - 1), 0)``."""

    def visit_call_(self, call: Call) -> PrimExpr:
        call = self._mutate_fields(call)
        if call.op is not index_check_op:
            return call
        index, extent = call.args
        return tir_max(tir_min(index, extent - const(1, extent.dtype)), const(0, index.dtype))

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        return self._mutate_fields(stmt)


def _uses_index_check(stmt: Stmt) -> bool:
    return any(isinstance(n, Call) and n.op is index_check_op for n in post_order_nodes(stmt))

