"""Test a tile's zero padding once, before the tile: interior tiles load without a check.

A conv that reads its input through an inlined zero padding (a depthwise conv: copying
the padded input cost as much as the conv) loads ``T.if_then_else(in_bounds,
X[clamped], 0)`` per tap and pixel: a compare, two clamps and a select per multiply-add.
Every tile whose taps all land inside the input needs none of it, so the statement
holding the tile (the body of its register tile's allocation) runs in two versions: for
such tiles the loads as they are, their clamps dropped where the checks imply them;
else the statement as it was (the image's border tiles).

Before::

    with T.allocate_buffer((7, 16), "float32", scope="local") as acc:
        for ry, rx, x1 in T.grid(3, 3, 7):
            x = x0 * 7 + x1 + rx
            acc[x1, 0:16] += T.if_then_else(
                y + ry >= 1 and y + ry < h + 1 and x >= 1 and x < w + 1,
                X[T.max(T.min(y + ry - 1, h - 1), 0), T.max(T.min(x - 1, w - 1), 0), 0:16],
                0.0,
            ) * K[ry, rx, 0:16]
        ...

After ``HoistPadChecks()``::

    with T.allocate_buffer((7, 16), "float32", scope="local") as acc:
        if y >= 1 and y + 2 < h + 1 and x0 * 7 >= 1 and x0 * 7 + 8 < w + 1:
            for ry, rx, x1 in T.grid(3, 3, 7):
                x = x0 * 7 + x1 + rx
                acc[x1, 0:16] += X[y + ry - 1, x - 1, 0:16] * K[ry, rx, 0:16]
            ...
        else:
            ...  (as before)

A select qualifies when one side is a buffer load, the other a constant, and its
condition a conjunction of comparisons of index expressions whose bounds over the loops
inside the tile the analyzer finds.  Run after `HoistGuards` (a tile moved back over a
symbolic size starts at a variable defined outside it) and before `FlattenBuffer`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from unity.tir.arith import Analyzer
from unity.tir.arith.key import expr_key
from unity.tir.expr import (
    GE, GT, LE, LT, And, BufferLoad, FloatImm, IntImm, Max, Min, PrimExpr, Range, Select, Var,
    conjuncts,
)  # fmt: skip
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator
from unity.tir.stmt import Allocate, IfThenElse, Stmt
from unity.tir.transform._base import LoopBoundsMutator, PrimFuncPass, with_body
from unity.tir.transform._tile_range import TileScan, reads_memory, whole_range
from unity.tir.transform.unroll_loop import copy_with_fresh_vars

__all__ = ["HoistPadChecks"]


@dataclass(frozen=True)
class HoistPadChecks(PrimFuncPass):
    """Run a tile that reads through a zero padding in a check-free version when all its
    reads land inside the data.

    Example:
        >>> from unity.script import tir as T
        >>> @T.prim_func
        ... def f(A: T.Buffer((T.int64("n"),), "float32"), n: T.int64):
        ...     for i0 in T.serial((n + T.int64(3)) // T.int64(4)):
        ...         with T.allocate_buffer((4,), "float32", scope="local") as acc:
        ...             for i1, r in T.grid(T.int64(4), T.int64(3)):
        ...                 acc[i1] = acc[i1] + T.if_then_else(
        ...                     i0 * 4 + i1 + r >= 1 and i0 * 4 + i1 + r < n + 1,
        ...                     A[T.max(T.min(i0 * 4 + i1 + r - 1, n - 1), T.int64(0))],
        ...                     T.float32(0))
        >>> script = HoistPadChecks().transform_function(f).script()
        >>> "if i0 >= T.int64(1) and i0 * T.int64(4) < n - T.int64(4):" in script
        True
        >>> "acc[i1] = acc[i1] + A[i0 * T.int64(4) + i1 + r - T.int64(1)]" in script
        True
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> HoistPadChecks().transform_function(func) is func  # no padding  # doctest: +SKIP
            True
        """
        return with_body(func, _Versioner().visit_stmt(func.body))


class _Versioner(LoopBoundsMutator):
    """Version the body of each allocation that holds qualifying padded loads."""

    def visit_allocate_(self, alloc: Allocate) -> Stmt:
        body = self._version(alloc.body)
        return self._mutate_fields(alloc) if body is None else alloc.replace(body=body)

    def _version(self, stmt: Stmt) -> Stmt | None:
        """`if all_inside: unchecked else: stmt`, or None (then the caller goes inside)."""
        scan = _Scan()
        scan.visit_stmt(stmt)
        if scan.allocates or not scan.padded:
            return None
        checks: dict[object, PrimExpr] = {}
        for select, domains in scan.padded:
            check = whole_range(self.analyzer, select.condition, domains, scan.defined)
            if check is None:
                return None
            for part in conjuncts(self.analyzer.simplify(check)):  # (true parts dropped)
                if isinstance(part, IntImm):
                    return None  # never inside (a tile wider than the data): leave it
                checks.setdefault(expr_key(part), part)
        unchecked = _Unchecked({id(s) for s, _ in scan.padded}, self.analyzer).visit_stmt(stmt)
        fast = copy_with_fresh_vars(unchecked, {})
        if not checks:
            return fast
        return IfThenElse(functools.reduce(And, checks.values()), fast, stmt, span=stmt.span)


class _Scan(TileScan):
    """The padded loads under a statement, each with the loop domains above it there."""

    def __init__(self) -> None:
        super().__init__()
        self.padded: list[tuple[Select, dict[Var, Range]]] = []

    def visit_select_(self, e: Select) -> None:
        if _padded_load(e):
            self.padded.append((e, dict(self.domains)))
        else:
            self._visit_other(e)


def _padded_load(e: Select) -> bool:
    """``if_then_else(index comparisons, X[...], constant)``."""
    parts = conjuncts(e.condition)
    return (
        isinstance(e.false_value, FloatImm | IntImm)
        and isinstance(e.true_value, BufferLoad)
        and bool(parts)
        and all(isinstance(c, LT | LE | GT | GE) for c in parts)
        and not reads_memory(e.condition)
    )


class _Unchecked(StmtExprMutator):
    """Each padded load (by id) replaced by its load, the clamps its check implies gone."""

    def __init__(self, ids: set[int], analyzer: Analyzer) -> None:
        super().__init__()
        self.ids = ids
        self.analyzer = analyzer

    def visit_select_(self, e: Select) -> PrimExpr:
        if id(e) not in self.ids:
            return self._mutate_fields(e)
        load = e.true_value
        facts = conjuncts(e.condition)
        indices = tuple(self._unclamp(i, facts) for i in load.indices)  # type: ignore[attr-defined]
        return load.replace(indices=indices)  # type: ignore[attr-defined]

    def _unclamp(self, index: PrimExpr, facts: list[PrimExpr]) -> PrimExpr:
        """``max(min(e, hi), lo)`` (or ``min(max(e, lo), hi)``) -> `e` where `facts` give
        ``lo <= e <= hi``; other indices as they are."""
        if isinstance(index, Max) and isinstance(index.a, Min):
            e, hi, lo = index.a.a, index.a.b, index.b
        elif isinstance(index, Min) and isinstance(index.a, Max):
            e, lo, hi = index.a.a, index.a.b, index.b
        else:
            return index
        if self._implied(e - lo, facts) and self._implied(hi - e, facts):
            return e
        return index

    def _implied(self, d: PrimExpr, facts: list[PrimExpr]) -> bool:
        """Whether one fact ``p >= q`` (``p > q``, ``q < p``...) gives ``d >= 0``: ``d - (p -
        q)`` simplifies to a constant at least 0 (1 less for a strict comparison)."""
        for fact in facts:
            big, small = (fact.a, fact.b) if isinstance(fact, GE | GT) else (fact.b, fact.a)
            strict = 1 if isinstance(fact, GT | LT) else 0
            rest = self.analyzer.simplify(d - (big - small) + strict)
            if isinstance(rest, IntImm) and rest.value >= 0:
                return True
        return False
