"""Hoist a reduction's init out of the loops it only runs in the first iteration of.

Before::

    for i, k in T.grid(4, 8):
        if k == 0:
            C[i] = T.float32(0)
        C[i] = C[i] + A[i, k]

After ``HoistReductionInit()``::

    for i in T.serial(4):
        C[i] = T.float32(0)
        for k in T.serial(8):
            C[i] = C[i] + A[i, k]

`for v in range(lo, lo + n): {if cond: init}; body` becomes
`{if cond[v := lo]: init[v := lo]}; for v ...: body` when `cond` can only hold for
`v == lo` (a term `v == lo`, or `ko * 4 + ki == 0` with `ko`, `ki` at their minimum):
the init ran in the first iteration, before anything else of it.  Applied from the
innermost loop outwards, the `if` that `LowerInitBlock` leaves disappears entirely
for a plain loop nest, and the innermost loop is free of branches.

A loop that may run no iteration (`n` symbolic: a reduction over the rows a NonZero
found) is hoisted too, and must be: the init then still runs, as a reduction over an
empty domain gives its init value (left inside, it never ran and the result was
whatever the memory held).
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.tir.arith import Analyzer
from unity.tir.expr import EQ, Add, And, IntImm, Mul, PrimExpr, Range, Var
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, substitute
from unity.tir.stmt import For, ForKind, IfThenElse, SeqStmt, Stmt, seq
from unity.tir.transform._base import PrimFuncPass, with_body


@dataclass(frozen=True)
class HoistReductionInit(PrimFuncPass):
    """Move `if v == v_min: init` at the start of loop `v` in front of the loop.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((4, 8), name="A")
        >>> k = te.reduce_axis((0, 8), name="k")
        >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
        >>> func = te.create_prim_func([A, B])
        >>> from unity.tir.transform import ConvertBlocksToLoops, LowerInitBlock
        >>> func = LowerInitBlock().transform_function(func)
        >>> func = ConvertBlocksToLoops().transform_function(func)
        >>> "if k == 0" in HoistReductionInit()(IRModule({"main": func}))["main"].script()
        False
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> from unity import te
            >>> A = te.placeholder((4, 8), name="A")
            >>> k = te.reduce_axis((0, 8), name="k")
            >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
            >>> func = te.create_prim_func([A, B])
            >>> from unity.tir.transform import ConvertBlocksToLoops, LowerInitBlock
            >>> func = LowerInitBlock().transform_function(func)
            >>> func = ConvertBlocksToLoops().transform_function(func)
            >>> print(HoistReductionInit().transform_function(func).body.script())
            for i in T.serial(4):
                B[i] = T.float32(0.0)
                for k in T.serial(8):
                    B[i] = B[i] + A[i, k]
        """
        return with_body(func, _Hoister().visit_stmt(func.body))


def _terms(cond: PrimExpr) -> list[PrimExpr]:
    if isinstance(cond, And):
        return _terms(cond.a) + _terms(cond.b)
    return [cond]


def _sum_terms(expr: PrimExpr) -> list[PrimExpr]:
    if isinstance(expr, Add):
        return _sum_terms(expr.a) + _sum_terms(expr.b)
    return [expr]


def _scaled_var(term: PrimExpr) -> Var | None:
    """`v` for a term `v`, `v * c` or `c * v` with a constant `c > 0`."""
    if isinstance(term, Var):
        return term
    if isinstance(term, Mul):
        for v, c in ((term.a, term.b), (term.b, term.a)):
            if isinstance(v, Var) and isinstance(c, IntImm) and c.value > 0:
                return v
    return None


def _int(expr: PrimExpr) -> int | None:
    return expr.value if isinstance(expr, IntImm) else None


class _Hoister(StmtExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.analyzer = Analyzer()

    def forces_first(self, term: PrimExpr, var: Var, lo: PrimExpr) -> bool:
        """True when `term` can only hold in the loop's first iteration.

        `v == lo` does; so does `sum == m` for a sum of increasing terms `c * v_i`
        (`c > 0`) that includes `v`, when `m` is the sum's smallest value (what a split
        reduction loop's init condition `ko * 4 + ki == 0` looks like).
        """
        if not isinstance(term, EQ):
            return False
        if term.a is var:
            return term.b is lo or (_int(term.b) is not None and _int(term.b) == _int(lo))
        if not isinstance(term.b, IntImm):
            return False
        parts = _sum_terms(term.a)
        scaled = [_scaled_var(p) for p in parts]
        if var not in scaled:
            return False
        if any(v is None and not isinstance(p, IntImm) for v, p in zip(scaled, parts)):
            return False
        return self.analyzer.const_int_bound(term.a).min_value == term.b.value

    def visit_for_(self, loop: For) -> Stmt:
        self.analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
        loop = self._mutate_fields(loop)  # innermost first
        if loop.kind not in (ForKind.SERIAL, ForKind.UNROLLED):
            return loop
        first, rest = _split_first(loop.body)
        if not isinstance(first, IfThenElse) or first.else_case is not None or rest is None:
            return loop
        if not any(self.forces_first(t, loop.loop_var, loop.min) for t in _terms(first.condition)):
            return loop
        at_first = {loop.loop_var: loop.min}
        init = substitute(first.then_case, at_first)
        cond = self.analyzer.simplify(substitute(first.condition, at_first))
        hoisted = loop.replace(body=rest)
        if isinstance(cond, IntImm):
            return seq(init, hoisted) if cond.value else hoisted
        return seq(IfThenElse(cond, init), hoisted)


def _split_first(body: Stmt) -> tuple[Stmt, Stmt | None]:
    if not isinstance(body, SeqStmt):
        return body, None
    return body.seq[0], seq(*body.seq[1:])
