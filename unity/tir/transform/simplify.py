"""Simplify every expression with `unity.tir.arith.Analyzer`, loop variables bound.

Before::

    for i0, i1 in T.grid(4, 32):
        B[(i0 * 32 + i1) // 32 * 32 + (i0 * 32 + i1) % 32] = A[i0 * 32 + i1 - 0]

After ``Simplify()``::

    for i0, i1 in T.grid(4, 32):
        B[i0 * 32 + i1] = A[i0 * 32 + i1]

Inside `for v in range(lo, lo + n)` the analyzer knows `lo <= v < lo + n`; inside
`if c:` it knows `c`.  Statements whose condition folds to a constant are pruned, and
loops of extent one become their body with the loop variable replaced by the minimum.
"""

from __future__ import annotations

from dataclasses import dataclass
from unity.ir.node import dispatch_table
from unity.tir.arith import Analyzer
from unity.tir.expr import IntImm, PrimExpr, Range
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, substitute
from unity.tir.stmt import Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt, seq
from unity.tir.transform._base import PrimFuncPass, with_body


@dataclass(frozen=True)
class Simplify(PrimFuncPass):
    """Run `Analyzer.simplify` on each expression; prune constant `if`s and unit loops.

    Example:
        >>> from unity import tir
        >>> A, i = tir.decl_buffer((64,), "float32", "A"), tir.Var("i")
        >>> store = tir.BufferStore(A, tir.const(0.0), ((i * 4 + 3) // 4,))
        >>> loop = tir.For(i, tir.const(0), tir.const(64), tir.ForKind.SERIAL, store)
        >>> func = tir.PrimFunc((A,), loop)
        >>> "A[i] =" in Simplify()(IRModule({"main": func}))["main"].script()
        True
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> from unity import tir
            >>> A, i = tir.decl_buffer((64,), "float32", "A"), tir.Var("i")
            >>> store = tir.BufferStore(A, tir.const(0.0), ((i * 4 + 3) // 4,))
            >>> loop = tir.For(i, tir.const(0), tir.const(64), tir.ForKind.SERIAL, store)
            >>> func = tir.PrimFunc((A,), loop)
            >>> print(Simplify().transform_function(func).body.script())
            for i in T.serial(64):
                A[i] = T.float32(0.0)
        """
        return with_body(func, _Simplifier(Analyzer()).visit_stmt(func.body))


def _const_bool(expr: PrimExpr) -> bool | None:
    if isinstance(expr, IntImm) and expr.dtype in ("bool", "int32", "int64", "int8"):
        return expr.value != 0
    return None


def _is_no_op(stmt: Stmt) -> bool:
    return isinstance(stmt, Evaluate) and isinstance(stmt.value, IntImm)


class _Simplifier(StmtExprMutator):
    def __init__(self, analyzer: Analyzer) -> None:
        super().__init__()
        self.analyzer = analyzer

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return self.analyzer.simplify(expr)

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        # Not memoized: the same statement object may sit under different facts.
        return dispatch_table(type(self), type(stmt))(self, stmt)

    def visit_for_(self, loop: For) -> Stmt:
        lo, extent = self.visit_expr(loop.min), self.visit_expr(loop.extent)
        if isinstance(extent, IntImm) and extent.value <= 0:
            return Evaluate(IntImm("int32", 0))
        unit = isinstance(extent, IntImm) and extent.value == 1
        if unit and loop.kind is not ForKind.THREAD_BINDING:
            return self.visit_stmt(substitute(loop.body, {loop.loop_var: lo}))
        self.analyzer.bind(loop.loop_var, Range(lo, extent))
        body = self.visit_stmt(loop.body)
        return loop.replace(min=lo, extent=extent, body=body)

    def visit_if_then_else_(self, stmt: IfThenElse) -> Stmt:
        cond = self.visit_expr(stmt.condition)
        known = _const_bool(cond)
        if known is True:
            return self.visit_stmt(stmt.then_case)
        if known is False:
            return self.visit_stmt(stmt.else_case) if stmt.else_case else _no_op()
        with self.analyzer.constraint_scope(cond):
            then_case = self.visit_stmt(stmt.then_case)
        else_case = None if stmt.else_case is None else self.visit_stmt(stmt.else_case)
        if _is_no_op(then_case) and else_case is None:
            return then_case
        return stmt.replace(condition=cond, then_case=then_case, else_case=else_case)

    def visit_let_stmt_(self, stmt: LetStmt) -> Stmt:
        return stmt.replace(value=self.visit_expr(stmt.value), body=self.visit_stmt(stmt.body))

    def visit_seq_stmt_(self, stmt: SeqStmt) -> Stmt:
        items = [self.visit_stmt(s) for s in stmt.seq]
        if all(a is b for a, b in zip(items, stmt.seq)):
            return stmt
        kept = [s for s in items if not _is_no_op(s)]
        return seq(*kept) if kept else _no_op()


def _no_op() -> Stmt:
    return Evaluate(IntImm("int32", 0))
