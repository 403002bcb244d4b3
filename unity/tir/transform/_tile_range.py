"""Conditions decided for a whole tile: what must hold outside a tile's loops for a
comparison inside them to hold at every iteration (`HoistGuards`, `HoistPadChecks`).

Example:
    >>> from unity import tir
    >>> from unity.tir.arith import Analyzer
    >>> i, k, n = tir.Var("i", "int64"), tir.Var("k", "int64"), tir.Var("n", "int64")
    >>> domains = {k: tir.Range(tir.const(0, "int64"), tir.const(4, "int64"))}
    >>> print(whole_range(Analyzer(), i * 4 + k < n, domains, {k}))
    i * T.int64(4) + T.int64(3) < n
"""

from __future__ import annotations

from unity.tir.arith import Analyzer
from unity.tir.expr import GE, GT, LE, LT, And, BufferLoad, Call, PrimExpr, Range, Var
from unity.tir.functor import StmtExprVisitor, post_order_nodes
from unity.tir.stmt import Allocate, For, LetStmt


def whole_range(
    analyzer: Analyzer, cond: PrimExpr, domains: dict[Var, Range], defined: set[Var]
) -> PrimExpr | None:
    """A condition on variables outside `defined` that implies `cond` for every iteration
    of the loops in `domains`, or None (another form, a load, a bound that needs a
    variable of `defined`).

    Example:
        >>> whole_range(Analyzer(), x0 * 7 + x1 >= 1, {x1: Range(0, 7)}, {x1})  # doctest: +SKIP
        x0 * 7 >= 1
    """
    if isinstance(cond, And):
        a = whole_range(analyzer, cond.a, domains, defined)
        b = whole_range(analyzer, cond.b, domains, defined)
        return None if a is None or b is None else And(a, b)
    if not isinstance(cond, LT | LE | GT | GE) or reads_memory(cond):
        return None
    below = isinstance(cond, LT | LE)  # a < b: the largest a against the smallest b
    a = _edge(analyzer, cond.a, domains, defined, largest=below)
    b = _edge(analyzer, cond.b, domains, defined, largest=not below)
    return None if a is None or b is None else type(cond)(a, b)


def uses_any(expr: PrimExpr, names: set[Var]) -> bool:
    """Whether `expr` refers to one of the variables `names`.

    Example:
        >>> uses_any(i + 1, {i})  # doctest: +SKIP
        True
    """
    return any(isinstance(n, Var) and n in names for n in post_order_nodes(expr))


def reads_memory(expr: PrimExpr) -> bool:
    """Whether `expr` loads from a buffer or calls a function.

    Example:
        >>> reads_memory(A[i] < 4)  # doctest: +SKIP
        True
    """
    return any(isinstance(n, BufferLoad | Call) for n in post_order_nodes(expr))


def _edge(
    analyzer: Analyzer, expr: PrimExpr, domains: dict[Var, Range], defined: set[Var], largest: bool
) -> PrimExpr | None:
    """The largest (or smallest) value of `expr` over `domains`, free of `defined`."""
    if not uses_any(expr, defined):
        return expr
    bounds = analyzer.int_set(expr, domains)
    edge = bounds.max_value if largest else bounds.min_value
    return None if edge is None or uses_any(edge, defined) else edge


class TileScan(StmtExprVisitor):
    """Walks a tile's statement tracking the loops around each node (`domains`), the
    variables it defines (`defined`: loops and lets) and whether it allocates; subclasses
    collect what they version on.

    Example:
        >>> scan = TileScan()
        >>> scan.visit_stmt(body)  # doctest: +SKIP
        >>> sorted(v.name for v in scan.defined)  # doctest: +SKIP
        ['i1', 'r']
    """

    def __init__(self) -> None:
        super().__init__()
        self.defined: set[Var] = set()
        self.allocates = False
        self.domains: dict[Var, Range] = {}

    def visit_for_(self, loop: For) -> None:
        self.defined.add(loop.loop_var)
        self.domains[loop.loop_var] = Range(loop.min, loop.extent)
        self.visit_stmt(loop.body)
        del self.domains[loop.loop_var]

    def visit_let_stmt_(self, stmt: LetStmt) -> None:
        self.defined.add(stmt.var)
        self.visit_expr(stmt.value)
        self.visit_stmt(stmt.body)

    def visit_allocate_(self, stmt: Allocate) -> None:
        self.allocates = True
        self.visit_stmt(stmt.body)
