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

`for v in range(lo, lo + n): {if v == lo and rest_cond: init}; body` becomes
`{if rest_cond: init[v := lo]}; for v ...: body` when `n >= 1` is a known constant:
the init ran in the first iteration, before anything else of it.  Applied from the
innermost loop outwards, the `if` that `LowerInitBlock` leaves disappears entirely
for a plain loop nest, and the innermost loop is free of branches.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.tir.expr import EQ, And, IntImm, PrimExpr, Var, logical_and
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, substitute
from unity.tir.stmt import For, ForKind, IfThenElse, SeqStmt, Stmt, seq
from unity.tir.transform._base import with_body


@dataclass(frozen=True)
class HoistReductionInit(ModulePass):
    """Move `if v == v_min: init` at the start of loop `v` in front of the loop."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return mod.map_functions(PrimFunc, self.transform_function)

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes)."""
        return with_body(func, _Hoister().visit_stmt(func.body))


def _terms(cond: PrimExpr) -> list[PrimExpr]:
    if isinstance(cond, And):
        return _terms(cond.a) + _terms(cond.b)
    return [cond]


def _is_first_iteration(term: PrimExpr, var: Var, lo: PrimExpr) -> bool:
    if not isinstance(term, EQ) or term.a is not var:
        return False
    b = term.b
    return b is lo or (isinstance(b, IntImm) and isinstance(lo, IntImm) and b.value == lo.value)


class _Hoister(StmtExprMutator):
    def visit_for_(self, loop: For) -> Stmt:
        loop = self._mutate_fields(loop)  # innermost first
        if loop.kind not in (ForKind.SERIAL, ForKind.UNROLLED):
            return loop
        if not isinstance(loop.extent, IntImm) or loop.extent.value < 1:
            return loop
        first, rest = _split_first(loop.body)
        if not isinstance(first, IfThenElse) or first.else_case is not None:
            return loop
        terms = _terms(first.condition)
        keep = [t for t in terms if not _is_first_iteration(t, loop.loop_var, loop.min)]
        if len(keep) == len(terms) or rest is None:
            return loop
        init = substitute(first.then_case, {loop.loop_var: loop.min})
        if keep:
            cond = keep[0]
            for term in keep[1:]:
                cond = logical_and(cond, term)
            init = IfThenElse(substitute(cond, {loop.loop_var: loop.min}), init)
        return seq(init, loop.replace(body=rest))


def _split_first(body: Stmt) -> tuple[Stmt, Stmt | None]:
    if not isinstance(body, SeqStmt):
        return body, None
    return body.seq[0], seq(*body.seq[1:])
