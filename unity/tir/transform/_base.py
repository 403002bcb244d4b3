"""Small helpers shared by the TIR lowering passes (folding index arithmetic as it is built).

Example:
    >>> fold_add(fold_mul(const(1), const(7)), const(0)).value
    7
"""

from __future__ import annotations

from typing import Any

from unity.ir import dtype as dt
from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.tir.arith import Analyzer
from unity.tir.expr import IntImm, PrimExpr, Range, const
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator
from unity.tir.stmt import For, Stmt


def with_body(func: PrimFunc, body: Any) -> PrimFunc:
    """`func` with `body`, or `func` itself when the body is unchanged.

    Example:
        >>> with_body(f, f.body) is f  # doctest: +SKIP
        True
    """
    return func if body is func.body else func.replace(body=body)


def is_const_int(expr: PrimExpr | None, value: int) -> bool:
    """True when `expr` is the integer constant `value` (None counts as 0).

    Example:
        >>> is_const_int(const(0), 0), is_const_int(None, 0)
        (True, True)
    """
    if expr is None:
        return value == 0
    return isinstance(expr, IntImm) and expr.value == value


def fold_mul(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """`a * b`, folding two constants and dropping a factor of one.

    Example:
        >>> fold_mul(const(3), const(4)).value
        12
    """
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return const(a.value * b.value, a.dtype if a.dtype == b.dtype else "int64")
    if is_const_int(b, 1):
        return a
    if is_const_int(a, 1):
        return b
    a, b = _same_dtype(a, b)
    return a * b


def fold_add(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """`a + b`, folding two constants and dropping a zero term.

    Example:
        >>> fold_add(const(3), const(0)).value
        3
    """
    if isinstance(a, IntImm) and isinstance(b, IntImm) and a.dtype == b.dtype:
        return const(a.value + b.value, a.dtype)
    if is_const_int(b, 0):
        return a
    if is_const_int(a, 0):
        return b
    a, b = _same_dtype(a, b)
    return a + b


def _same_dtype(a: PrimExpr, b: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
    """Retype an integer constant to the other operand's dtype (no `Cast` around it)."""
    if a.dtype == b.dtype:
        return a, b
    if isinstance(b, IntImm) and dt.is_integer(a.dtype):
        return a, const(b.value, a.dtype)
    if isinstance(a, IntImm) and dt.is_integer(b.dtype):
        return const(a.value, b.dtype), b
    return a, b


class PrimFuncPass(ModulePass, register=False):
    """A module pass that rewrites each `PrimFunc` on its own with `transform_function`.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class Identity(PrimFuncPass):
        ...     def transform_function(self, func):
        ...         return func
        >>> mod = IRModule()
        >>> Identity()(mod) is mod
        True
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Apply `transform_function` to every PrimFunc (`mod` itself when none changes)."""
        return mod.map_functions(PrimFunc, self.transform_function)

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Return the rewritten function (`func` itself when nothing changes).

        Example:
            >>> PrimFuncPass.transform_function  # doctest: +ELLIPSIS
            <function PrimFuncPass.transform_function at ...>
        """
        raise TypeError(f"{type(self).__name__} must override transform_function")


class LoopBoundsMutator(StmtExprMutator):
    """A statement mutator whose `analyzer` knows the range of every loop it has entered
    (the loops above the node it visits among them).

    Example:
        >>> class Show(LoopBoundsMutator):
        ...     def visit_evaluate_(self, stmt):
        ...         print(self.analyzer.simplify(stmt.value))
        ...         return stmt
        >>> from unity import tir
        >>> i = tir.Var("i")
        >>> _ = Show().visit_stmt(tir.For(i, const(0), const(4), tir.ForKind.SERIAL, tir.Evaluate(i // 8)))
        0
    """

    def __init__(self) -> None:
        super().__init__()
        self.analyzer = Analyzer()

    def visit_for_(self, loop: For) -> Stmt:
        self.analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
        return self._mutate_fields(loop)
