"""Unroll loops marked `UNROLLED` whose extent is a small constant.

Before::

    for i in T.unroll(3):
        B[i] = A[i] + T.float32(1)

After ``UnrollLoop()``::

    B[0] = A[0] + T.float32(1)
    B[1] = A[1] + T.float32(1)
    B[2] = A[2] + T.float32(1)

Each copy gets fresh variables for the loops, lets and allocations inside it, so every
variable is still defined once.  A select whose condition the copy's constant decides
(``select(k == 2, a, b)`` in copy 2, or ``(y0 * 4 + 1) % 4 == 1``) is replaced by the branch
it takes before the copy is made: a Winograd transform picks each point's coefficients
that way, and its 36 copies would otherwise carry every point's branches into the
passes after this one.  An `UNROLLED` loop with a symbolic extent or one larger
than `max_extent` becomes a `SERIAL` loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.tir.arith import Analyzer
from unity.tir.buffer import Buffer
from unity.tir.expr import IntImm, Let, PrimExpr, Select, Var, const
from unity.tir.function import PrimFunc
from unity.tir.functor import (
    StmtExprMutator, StmtExprVisitor, post_order_visit, substitute, uses_var,
)  # fmt: skip
from unity.tir.stmt import Allocate, Block, Evaluate, For, ForKind, LetStmt, Stmt, seq
from unity.tir.transform._base import PrimFuncPass, with_body


@dataclass(frozen=True)
class UnrollLoop(PrimFuncPass):
    """Replace `for i in T.unroll(n)` by `n` copies of its body (n <= `max_extent`).

    Example:
        >>> from unity import te
        >>> from unity.schedule.schedule import Schedule
        >>> from unity.tir.transform import ConvertBlocksToLoops
        >>> A = te.placeholder((64,), name="A")
        >>> B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
        >>> sch = Schedule(te.create_prim_func([A, B]))
        >>> i_0, i_1 = sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[None, 2])
        >>> sch.unroll(i_1)
        >>> func = ConvertBlocksToLoops().transform_function(sch.mod["main"])
        >>> "T.unroll" in UnrollLoop()(IRModule({"main": func}))["main"].script()
        False
    """

    max_extent: int = 64
    """Unrolled loops with a larger (or symbolic) extent stay loops, made serial."""

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> from unity import te
            >>> from unity.schedule.schedule import Schedule
            >>> from unity.tir.transform import ConvertBlocksToLoops
            >>> A = te.placeholder((64,), name="A")
            >>> B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i_0, i_1 = sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[None, 2])
            >>> sch.unroll(i_1)
            >>> func = ConvertBlocksToLoops().transform_function(sch.mod["main"])
            >>> print(UnrollLoop().transform_function(func).body.script())
            for i_0 in T.serial(32):
                B[i_0 * 2 + 0] = A[i_0 * 2 + 0] * T.float32(2.0)
                B[i_0 * 2 + 1] = A[i_0 * 2 + 1] * T.float32(2.0)
        """
        return with_body(func, _Unroller(self.max_extent).visit_stmt(func.body))


def copy_with_fresh_vars(stmt: Stmt, vmap: dict[Var, PrimExpr]) -> Stmt:
    """`stmt` with `vmap` substituted and every variable/buffer it defines renamed fresh
    (loop, let and block iteration variables; `Allocate`d and block-allocated buffers).

    Example:
        >>> copy_with_fresh_vars(loop.body, {loop.loop_var: tir.const(0)})  # doctest: +SKIP
    """
    collector = _Binders()
    collector.visit_stmt(stmt)
    full: dict[Var, PrimExpr] = dict(vmap)
    for var in collector.vars:
        full[var] = Var(var.name, var.dtype)
    buffers: dict[Buffer, Buffer] = {}
    for buf in collector.buffers:
        data = Var(buf.data.name, buf.data.dtype)
        full[buf.data] = data
        buffers[buf] = buf.replace(data=data)
    return substitute(stmt, full, buffers)


class _Binders(StmtExprVisitor):
    def __init__(self) -> None:
        self.vars: list[Var] = []
        self.buffers: list[Buffer] = []

    def visit_for_(self, loop: For) -> None:
        self.vars.append(loop.loop_var)
        self.visit_stmt_(loop)

    def visit_let_stmt_(self, stmt: LetStmt) -> None:
        self.vars.append(stmt.var)
        self.visit_stmt_(stmt)

    def visit_let_(self, expr: Let) -> None:
        self.vars.append(expr.var)
        self.visit_prim_expr_(expr)

    def visit_allocate_(self, alloc: Allocate) -> None:
        self.buffers.append(alloc.buffer)
        self.visit_stmt_(alloc)

    def visit_block_(self, block: Block) -> None:
        self.vars.extend(iv.var for iv in block.iter_vars)
        self.buffers.extend(block.alloc_buffers)
        self.visit_stmt_(block)


class _Unroller(StmtExprMutator):
    def __init__(self, max_extent: int) -> None:
        super().__init__()
        self.max_extent = max_extent

    def visit_for_(self, loop: For) -> Stmt:
        loop = self._mutate_fields(loop)
        if loop.kind is not ForKind.UNROLLED:
            return loop
        extent = loop.extent
        if not isinstance(extent, IntImm) or extent.value > self.max_extent:
            return loop.replace(kind=ForKind.SERIAL)
        decides = _selects_on(loop.body, loop.loop_var)
        copies = [self._copy(loop, i, decides) for i in range(extent.value)]
        return seq(*copies) if copies else Evaluate(const(0))

    def _copy(self, loop: For, i: int, decides: bool) -> Stmt:
        lo = loop.min
        value = const(lo.value + i, lo.dtype) if isinstance(lo, IntImm) else lo + i
        body = loop.body
        if decides:
            body = _TakenBranches(loop.loop_var, value).visit_stmt(body)
        if i == 0:
            return substitute(body, {loop.loop_var: value})
        return copy_with_fresh_vars(body, {loop.loop_var: value})


def _selects_on(body: Stmt, var: Var) -> bool:
    """True when a select under `body` has a condition that uses `var`."""
    found: list[bool] = []

    def visit(node: object) -> None:
        if isinstance(node, Select) and uses_var(node.condition, var):
            found.append(True)

    post_order_visit(body, visit)
    return bool(found)


class _TakenBranches(StmtExprMutator):
    """Selects whose condition `var` = `value` decides, replaced by the branch taken."""

    def __init__(self, var: Var, value: PrimExpr) -> None:
        super().__init__()
        self.var, self.value = var, value
        self.analyzer = Analyzer()

    def visit_select_(self, expr: Select) -> PrimExpr:
        taken = self._decided(expr.condition)
        if taken is None:
            return self.visit_prim_expr_(expr)
        return self.visit_expr(expr.true_value if taken else expr.false_value)

    def _decided(self, condition: PrimExpr) -> bool | None:
        if not uses_var(condition, self.var):
            return None
        folded = self.analyzer.simplify(substitute(condition, {self.var: self.value}))
        return bool(folded.value) if isinstance(folded, IntImm) else None
