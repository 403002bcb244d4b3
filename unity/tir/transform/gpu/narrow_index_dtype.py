"""`NarrowIndexDtype`: a CUDA kernel's int64 index arithmetic in int32, where it fits.

ONNX shapes are int64, so every loop variable, index and bound of an imported model is
int64; on an NVIDIA GPU a 64-bit integer add takes two instructions, a multiply three or
more, and a division by a constant (an im2col index: ``m // 56``, ``k % 9``) a long
sequence.  When every int64 value of a kernel provably lies in the int32 range (the
bounds of its loops and thread indices, constant shapes), the whole kernel is rewritten
in int32; otherwise (a symbolic dimension, an int64 tensor's data) it is left alone.

Before (a kernel of a static-shape model)::

    for k_0 in range(T.int64(4)):
        if k_0 * T.int64(256) + T.Cast("int64", threadIdx_x) < T.int64(1000):
            red[T.int64(0)] = T.max(red[T.int64(0)], A[k_0 * T.int64(256) + T.Cast("int64", threadIdx_x)])

After ``NarrowIndexDtype()``::

    for k_0 in range(4):
        if k_0 * 256 + threadIdx_x < 1000:
            red[0] = T.max(red[0], A[k_0 * 256 + threadIdx_x])
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir import dtype as dt
from unity.tir import expr as E
from unity.tir.arith import Analyzer
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, StmtExprVisitor
from unity.tir.stmt import For, LetStmt
from unity.tir.transform._base import PrimFuncPass, with_body

INT32 = (-(2**31), 2**31 - 1)


@dataclass(frozen=True)
class NarrowIndexDtype(PrimFuncPass):
    """Rewrite a CUDA kernel's int64 arithmetic in int32 when all of it fits.

    Example:
        >>> from unity import tir
        >>> i = tir.Var("i", "int64")
        >>> A = tir.decl_buffer((8,), "float32", "A")
        >>> body = tir.For(i, tir.const(0, "int64"), tir.const(8, "int64"), tir.ForKind.SERIAL,
        ...                tir.BufferStore(A, tir.const(1.0), (i * tir.const(1, "int64"),)))
        >>> kernel = tir.PrimFunc([A], body).with_attr("calling_conv", "cuda_kernel")
        >>> NarrowIndexDtype().transform_function(kernel).body.loop_var.dtype
        'int32'
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Narrow one kernel (host functions and kernels that do not fit are returned as is).

        Example:
            >>> from unity import tir
            >>> f = tir.PrimFunc([], tir.Evaluate(tir.const(0)))
            >>> NarrowIndexDtype().transform_function(f) is f
            True
        """
        if func.attrs.get("calling_conv") != "cuda_kernel":
            return func
        check = _FitsInt32()
        for p in func.params:
            if isinstance(p, E.Var) and _is_int64(p.dtype):
                return func  # a symbolic size: its value is unknown here
        check.visit_stmt(func.body)
        if not check.fits or not check.seen:
            return func
        return with_body(func, _Narrow().visit_stmt(func.body))


def _is_int64(dtype: str) -> bool:
    return dt.element(dtype) == "int64"


class _FitsInt32(StmtExprVisitor):
    """Whether every int64 expression of a kernel has constant bounds within int32."""

    def __init__(self) -> None:
        self.analyzer = Analyzer()
        self.fits = True
        self.seen = False

    def visit_for_(self, loop: For) -> None:
        self.visit_expr(loop.min)
        self.visit_expr(loop.extent)
        self.analyzer.bind(loop.loop_var, E.Range(loop.min, loop.extent))
        self.visit_stmt(loop.body)

    def visit_let_stmt_(self, let: LetStmt) -> None:
        self.visit_expr(let.value)
        if dt.is_integer(let.var.dtype):
            self.analyzer.bind(let.var, let.value)
        self.visit_stmt(let.body)

    def visit_expr(self, expr: E.PrimExpr) -> None:
        if not self.fits:
            return
        if _is_int64(expr.dtype):
            self.seen = True
            if isinstance(expr, E.Call | E.BufferLoad | E.Let):  # data, or nothing to bound
                self.fits = False
                return
            scalar = expr.base if isinstance(expr, E.Ramp) else expr
            if isinstance(expr, E.Broadcast):
                scalar = expr.value
            bound = self.analyzer.const_int_bound(scalar)
            if not (INT32[0] <= bound.min_value and bound.max_value <= INT32[1]):
                self.fits = False
                return
        super().visit_expr(expr)


class _Narrow(StmtExprMutator):
    """int64 variables and constants -> int32 (the operations follow their operands)."""

    def __init__(self) -> None:
        super().__init__()
        self.vars: dict[E.Var, E.Var] = {}

    def visit_var_(self, var: E.Var) -> E.PrimExpr:
        if var.dtype != "int64":
            return var
        if var not in self.vars:
            self.vars[var] = E.Var(var.name, "int32")
        return self.vars[var]

    def visit_int_imm_(self, imm: E.IntImm) -> E.PrimExpr:
        return E.IntImm("int32", imm.value) if imm.dtype == "int64" else imm

    def visit_cast_(self, cast: E.Cast) -> E.PrimExpr:
        value = self.visit_expr(cast.value)
        dtype = dt.with_lanes("int32", dt.lanes(cast.dtype)) if _is_int64(cast.dtype) else cast.dtype
        return value if value.dtype == dtype else E.Cast(dtype, value)
