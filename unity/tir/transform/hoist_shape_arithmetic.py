"""Compute the divisions of a function's shape variables once, at its top.

Before::

    def main(A: T.Buffer((n,), "float32"), B: T.Buffer(((n + 3) // 4 * 4,), "float32")):
        for i in T.serial((n + 3) // 4):
            for j in T.unroll(4):
                B[i * 4 + j] = A[T.min(i * 4 + j, n - 1)] * T.float32((n + 3) // 4)

After ``HoistShapeArithmetic()``::

    def main(A: T.Buffer((n,), "float32"), B: T.Buffer(((n + 3) // 4 * 4,), "float32")):
        n_0: T.int64 = (n + 3) // 4
        for i in T.serial(n_0):
            for j in T.unroll(4):
                B[i * 4 + j] = A[T.min(i * 4 + j, n - 1)] * T.float32(n_0)

Over symbolic sizes the index arithmetic repeats the same shape expressions everywhere:
a CNN's height after a few strided, ceil-mode layers is ``0 - (0 - (0 - (0 - (h - 1) //
2) // 2 - 3) // 2) // 2``, and a Winograd transform's 36 unrolled points each index
through several of them (9 KB of text per statement in GoogLeNet, 2 MB per kernel after
unrolling, 2.3 s of lowering and LLVM per kernel).  Each integer division, modulo,
minimum and maximum whose operands use only the function's entry variables (its scalar
parameters and the variables of its parameter buffers' shapes) becomes a variable bound
by a `LetStmt` at the top, innermost first, structurally equal ones shared: the statements
keep the linear part (``i * n_0 + j``, which the simplifier and vectorizer read) and lose
the nesting.  A name is a `SizeVar` (known non-negative) when its value is provably so.

The values are evaluated before any loop runs, where a loop of extent 0 would have kept
them from running: harmless, as they load nothing and a division is named only when its
divisor is provably nonzero (a constant, ``n + 1``).  Buffer shapes are left as they are.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from unity.ir import dtype as dt
from unity.ir.node import Node
from unity.tir.arith import Analyzer
from unity.tir.arith.key import expr_key
from unity.tir.expr import (
    BufferLoad, Call, Div, FloorDiv, FloorMod, Let, Max, Min, Mod, PrimExpr, SizeVar, Var,
)  # fmt: skip
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, post_order_visit
from unity.tir.stmt import LetStmt
from unity.tir.transform._base import PrimFuncPass, with_body

_NAMED = (FloorDiv, FloorMod, Div, Mod, Min, Max)
"""The operations that get a name: the ones the simplifier sees as opaque atoms anyway."""

_DIVISIONS = (FloorDiv, FloorMod, Div, Mod)
"""Named only when the divisor is provably nonzero."""


@dataclass(frozen=True)
class HoistShapeArithmetic(PrimFuncPass):
    """Bind each division (modulo, min, max) of entry variables to a variable at the top.

    Example:
        >>> from unity import tir
        >>> n = tir.SizeVar("n", "int64")
        >>> A = tir.decl_buffer((n,), "float32", "A")
        >>> i = tir.Var("i", "int64")
        >>> store = tir.BufferStore(A, tir.const(0.0), (i,))
        >>> loop = tir.For(i, tir.const(0, "int64"), (n + 3) // 4, tir.ForKind.SERIAL, store)
        >>> out = HoistShapeArithmetic().transform_function(tir.PrimFunc((A,), loop))
        >>> print(out.body.script())
        n_0: T.int64 = (n + T.int64(3)) // T.int64(4)
        for i in T.serial(n_0):
            A[i] = T.float32(0.0)
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when it divides no entry variable).

        Example:
            >>> HoistShapeArithmetic().transform_function(f) is f  # doctest: +SKIP
            True
        """
        entry = {p for p in func.params if isinstance(p, Var)} | set(func.shape_vars())
        if not entry:
            return func
        namer = _Namer(entry)
        body = namer.visit_stmt(func.body)
        if not namer.lets:
            return func
        for var, value in reversed(namer.lets):
            body = LetStmt(var, value, body)
        return with_body(func, body)


class _Namer(StmtExprMutator):
    """Replaces named operations of entry variables by their names (`lets`, in order)."""

    def __init__(self, entry: set[Var]) -> None:
        super().__init__()
        self.known: set[Var] = set(entry)  # entry variables and the names made so far
        self.lets: list[tuple[Var, PrimExpr]] = []
        self._names: dict[Hashable, Var] = {}
        self._roots: dict[Var | None, str] = {v: v.name for v in entry}  # names' prefixes
        self._keys: dict[Node, Hashable] = {}
        self._analyzer = Analyzer()

    def _named(self, expr: PrimExpr) -> PrimExpr:
        new = self._mutate_fields(expr)  # children first: their divisions are names now
        if dt.lanes(new.dtype) != 1 or not dt.is_integer(new.dtype) or not self._invariant(new):
            return new
        new = self._analyzer.simplify(new)
        if not isinstance(new, _NAMED):
            return new  # folded away (a constant, a variable, a sum of names)
        if isinstance(new, _DIVISIONS) and not self._analyzer.can_prove(new.b != 0):
            return new  # evaluated up front it could divide by zero where no loop ran
        new = self._mutate_fields(new)  # divisions the simplifier rebuilt inside get names
        key = expr_key(new, self._keys)
        var = self._names.get(key)
        if var is None:
            root = self._roots.get(_first_var(new), "s")
            name = f"{root}_{len(self.lets)}"
            var = (SizeVar if self._analyzer.can_prove(new >= 0) else Var)(name, new.dtype)
            self._names[key] = var
            self._roots[var] = root
            self.known.add(var)
            self.lets.append((var, new))
        return var

    visit_floor_div_ = visit_floor_mod_ = visit_div_ = visit_mod_ = _named
    visit_min_ = visit_max_ = _named

    def _invariant(self, expr: PrimExpr) -> bool:
        """True when `expr` reads only entry variables and names (no loads, no calls)."""
        ok = [True]

        def check(node: Node) -> None:
            if isinstance(node, Var):
                ok[0] = ok[0] and node in self.known
            elif isinstance(node, BufferLoad | Call | Let):
                ok[0] = False

        post_order_visit(expr, check)
        return ok[0]


def _first_var(expr: PrimExpr) -> Var | None:
    found: list[Var] = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, Var) else None)
    return found[0] if found else None


__all__ = ["HoistShapeArithmetic"]
