"""Test the bound guards of a tile once, before the tile, instead of once per element.

Splitting a loop of symbolic extent (a sequence length) by a constant leaves a guard
``if i0 * 8 + i1 < seq`` in the innermost loops: a branch per row and step, which also
keeps LLVM from holding a register tile in registers across the reduction.  Every
tile but the last has all its rows in bounds, so the statement holding the tile runs
in two versions:

Before::

    for i0 in T.parallel((seq + 7) // 8):
        for k, i1 in T.grid(64, 8):
            if i0 * 8 + i1 < seq:
                C[i0 * 8 + i1] = C[i0 * 8 + i1] + A[i0 * 8 + i1, k]

After ``HoistGuards()``::

    for i0 in T.parallel((seq + 7) // 8):
        if i0 * 8 + 7 < seq:
            for k, i1 in T.grid(64, 8):
                C[i0 * 8 + i1] = C[i0 * 8 + i1] + A[i0 * 8 + i1, k]
        else:
            for k, i1 in T.grid(64, 8):
                if i0 * 8 + i1 < seq:
                    C[i0 * 8 + i1] = C[i0 * 8 + i1] + A[i0 * 8 + i1, k]

A guard qualifies when it is an `if` without `else` whose condition is a comparison
(or a conjunction of comparisons) of index expressions, and one side depends on loops
inside the statement only through a range the analyzer bounds.  The versions are made
at the outermost statement that holds such guards and no `Allocate` (an allocation is
never duplicated: the check goes inside it), and whose guards' bounds use no variable
defined inside it.  Run after `CompactBufferAllocation` (tiles are allocated inside
their loop by then) and before `UnrollLoop`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from unity.tir.arith import Analyzer
from unity.tir.expr import GE, GT, LE, LT, And, BufferLoad, Call, PrimExpr, Range, Var
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, StmtExprVisitor, post_order_nodes, substitute
from unity.tir.stmt import Allocate, For, IfThenElse, LetStmt, Stmt
from unity.tir.transform._base import PrimFuncPass, with_body

__all__ = ["HoistGuards"]


@dataclass(frozen=True)
class HoistGuards(PrimFuncPass):
    """Run a guarded tile in a guard-free version when its bounds hold for the whole tile.

    Example:
        >>> from unity.script import tir as T
        >>> @T.prim_func
        ... def f(a: T.handle, n: T.int32):
        ...     A = T.match_buffer(a, (n,), "float32")
        ...     for i0 in T.serial((n + 3) // 4):
        ...         for i1 in T.serial(4):
        ...             if i0 * 4 + i1 < n:
        ...                 A[i0 * 4 + i1] = T.float32(1)
        >>> "if i0 * 4 + 3 < n" in HoistGuards().transform_function(f).script()
        True
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> HoistGuards().transform_function(func) is func  # no guards  # doctest: +SKIP
            True
        """
        return with_body(func, _Hoister().visit_stmt(func.body))


class _Hoister(StmtExprMutator):
    """Version the body of each loop (and allocation) that holds qualifying guards."""

    def __init__(self) -> None:
        super().__init__()
        self.analyzer = Analyzer()

    def visit_for_(self, loop: For) -> Stmt:
        self.analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
        body = self._version(loop.body)
        return self._mutate_fields(loop) if body is None else loop.replace(body=body)

    def visit_allocate_(self, alloc: Allocate) -> Stmt:
        body = self._version(alloc.body)
        return self._mutate_fields(alloc) if body is None else alloc.replace(body=body)

    def _version(self, stmt: Stmt) -> Stmt | None:
        """`if all_in_bounds: fast else: stmt`, or None (then the caller goes inside)."""
        scan = _Scan()
        scan.visit_stmt(stmt)
        if scan.allocates or not scan.guards:
            return None
        checks: list[PrimExpr] = []
        for guard, domains in scan.guards:
            check = self._whole_range(guard.condition, domains, scan.defined)
            if check is None:
                return None  # a guard that cannot be decided for the whole tile: go inside
            checks.append(check)
        condition = functools.reduce(And, checks)
        fast = _DropGuards({id(g) for g, _ in scan.guards}).visit_stmt(stmt)
        fast = substitute(fast, {v: Var(v.name, v.dtype) for v in scan.defined})  # own loop vars
        return IfThenElse(condition, fast, stmt, span=stmt.span)

    def _whole_range(
        self, cond: PrimExpr, domains: dict[Var, Range], defined: set[Var]
    ) -> PrimExpr | None:
        """A condition on outer variables only that implies `cond` for every iteration of
        the loops in `domains`, or None."""
        if isinstance(cond, And):
            a = self._whole_range(cond.a, domains, defined)
            b = self._whole_range(cond.b, domains, defined)
            return None if a is None or b is None else And(a, b)
        if not isinstance(cond, LT | LE | GT | GE) or _reads_memory(cond):
            return None
        below = isinstance(cond, LT | LE)  # a < b: the largest a against the smallest b
        a = self._edge(cond.a, domains, defined, largest=below)
        b = self._edge(cond.b, domains, defined, largest=not below)
        return None if a is None or b is None else type(cond)(a, b)

    def _edge(
        self, expr: PrimExpr, domains: dict[Var, Range], defined: set[Var], largest: bool
    ) -> PrimExpr | None:
        """The largest (or smallest) value of `expr` over `domains`, free of `defined`."""
        if not _uses(expr, defined):
            return expr
        bounds = self.analyzer.int_set(expr, domains)
        edge = bounds.max_value if largest else bounds.min_value
        return None if edge is None or _uses(edge, defined) else edge


def _uses(expr: PrimExpr, names: set[Var]) -> bool:
    return any(isinstance(n, Var) and n in names for n in post_order_nodes(expr))


def _reads_memory(expr: PrimExpr) -> bool:
    return any(isinstance(n, BufferLoad | Call) for n in post_order_nodes(expr))


class _Scan(StmtExprVisitor):
    """The guards under a statement, each with the loop domains between it and the root."""

    def __init__(self) -> None:
        super().__init__()
        self.guards: list[tuple[IfThenElse, dict[Var, Range]]] = []
        self.defined: set[Var] = set()
        self.allocates = False
        self._domains: dict[Var, Range] = {}

    def visit_for_(self, loop: For) -> None:
        self.defined.add(loop.loop_var)
        self._domains[loop.loop_var] = Range(loop.min, loop.extent)
        self.visit_stmt(loop.body)
        del self._domains[loop.loop_var]

    def visit_let_stmt_(self, stmt: LetStmt) -> None:
        self.defined.add(stmt.var)
        self.visit_stmt(stmt.body)

    def visit_allocate_(self, stmt: Allocate) -> None:
        self.allocates = True

    def visit_if_then_else_(self, stmt: IfThenElse) -> None:
        if stmt.else_case is None:
            self.guards.append((stmt, dict(self._domains)))
        self.visit_stmt(stmt.then_case)
        if stmt.else_case is not None:
            self.visit_stmt(stmt.else_case)


class _DropGuards(StmtExprMutator):
    """Replace the guards with ids in `ids` by their bodies."""

    def __init__(self, ids: set[int]) -> None:
        super().__init__()
        self.ids = ids

    def visit_if_then_else_(self, stmt: IfThenElse) -> Stmt:
        if id(stmt) in self.ids:
            return self.visit_stmt(stmt.then_case)
        return self._mutate_fields(stmt)
