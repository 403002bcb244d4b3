"""`NarrowIndexDtype`: a CUDA kernel's int64 index arithmetic in int32, where it fits.

ONNX shapes are int64, so every loop variable, index and bound of an imported model is
int64; on an NVIDIA GPU a 64-bit integer add takes two instructions, a multiply three or
more, and a division by a constant (an im2col index: ``m // 56``, ``k % 9``) a long
sequence.  When every int64 value of a kernel provably lies in the int32 range (the
bounds of its loops and thread indices, constant shapes), the whole kernel is rewritten
in int32; otherwise (an int64 tensor's data) it is left alone.  A kernel with symbolic
sizes (int64 scalar parameters: a sequence length) gets an int32 twin, valid while each
size is at most a bound (the largest of `SIZE_BOUNDS` under which everything still
provably fits), and each host launch of it picks the twin when its sizes are in bounds::

    if n <= 16777216:
        T.cuda.launch("main_kernel0_i32", ...)
    else:
        T.cuda.launch("main_kernel0", ...)

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
from unity.ir.module import IRModule
from unity.ir.transform import PassContext
from unity.tir import expr as E
from unity.tir.expr import conjoin
from unity.tir.arith import Analyzer
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, StmtExprVisitor
from unity.tir.stmt import Evaluate, For, IfThenElse, LetStmt, Stmt
from unity.tir.transform._base import PrimFuncPass, with_body
from unity.tir.transform.gpu.intrinsics import launch_op

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
        if func.attrs.get("calling_conv") != "cuda_kernel" or _symbolic(func):
            return func  # a symbolic size: see transform_module
        return _narrowed(func) if _fits(func, {}) else func

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Narrow the static kernels; give each kernel with symbolic sizes an int32 twin
        (valid while each size is at most a bound) and make each launch choose.

        Example:
            >>> len(NarrowIndexDtype()(IRModule()).get_global_vars())
            0
        """
        out = mod.map_functions(PrimFunc, self.transform_function)
        twins: dict[str, tuple[str, list[dict[int, tuple[int, int]]]]] = {}
        for gv, func in list(out.items()):
            if not isinstance(func, PrimFunc) or func.attrs.get("calling_conv") != "cuda_kernel":
                continue
            sizes = _symbolic(func)
            boxes = _boxes(func, sizes) if sizes else []
            if boxes:
                name = f"{gv.name_hint}_i32"
                out[name] = _narrowed(func).with_attr("global_symbol", name)
                slots = [{func.params.index(v): b for v, b in box.items()} for box in boxes]
                twins[gv.name_hint] = (name, slots)
        if not twins:
            return out
        return out.map_functions(PrimFunc, lambda f: with_body(f, _ChooseLaunch(twins).visit_stmt(f.body)))


SIZE_BOUNDS = (2**30, 2**24, 2**20, 2**16, 2**14, 2**12, 2**11, 2**10, 2**9, 2**8)
"""Bounds tried for a kernel's symbolic sizes, largest first: its int32 twin is valid for
the largest bound that all sizes may reach together with every index still provably in
int32 (a kernel over `batch x seq x 3072` elements: both up to 512), and, with several
sizes, for each one alone up to a larger bound while the others stay small (`SMALL`)."""

SMALL = (1, 8)
"""The bounds of the other sizes under which one size may grow further (batch 1 with a
long sequence)."""


def _symbolic(func: PrimFunc) -> list[E.Var]:
    """The kernel's int64 scalar parameters (symbolic sizes)."""
    return [p for p in func.params if isinstance(p, E.Var) and _is_int64(p.dtype)]


def _boxes(func: PrimFunc, sizes: list[E.Var]) -> list[dict[E.Var, tuple[int, int]]]:
    """Ranges of `sizes` under which `func` provably fits int32, as a union of boxes (each
    size in `[lo, hi]`): all sizes up to one bound, then each size further with the others
    small.  `lo` is 0, or 1 when a size divides an index (``i // s`` is unbounded at 0)."""
    for lo in (0, 1):
        together = next((b for b in SIZE_BOUNDS if _fits(func, dict.fromkeys(sizes, (lo, b)))), None)
        if together is not None:
            break
    else:
        return []
    boxes = [dict.fromkeys(sizes, (lo, together))]
    for var in sizes if len(sizes) > 1 else ():
        for small in (s for s in SMALL if s < together):
            bounds = dict.fromkeys(sizes, (lo, small))
            alone = next((b for b in SIZE_BOUNDS
                          if b <= together or _fits(func, bounds | {var: (lo, b)})), together)
            if alone > together:
                boxes.append(bounds | {var: (lo, alone)})
    return [box for box in boxes if not any(o is not box and _within(box, o) for o in boxes)]


def _within(box: dict[E.Var, tuple[int, int]], other: dict[E.Var, tuple[int, int]]) -> bool:
    return all(box[v][1] <= other[v][1] for v in box) and box != other


def _fits(func: PrimFunc, bounds: dict[E.Var, tuple[int, int]]) -> bool:
    """Whether every int64 value of `func` provably fits int32 with each variable of
    `bounds` in its `[lo, hi]`."""
    check = _FitsInt32()
    for var, (lo, hi) in bounds.items():
        check.analyzer.bind(var, E.Range(E.const(lo, var.dtype), E.const(hi - lo + 1, var.dtype)))
    check.visit_stmt(func.body)
    return check.fits and check.seen


def _narrowed(func: PrimFunc) -> PrimFunc:
    """`func` in int32, its parameters narrowed too (`_fits` proved that it may be)."""
    narrow = _Narrow()
    body = narrow.visit_stmt(func.body)
    params = [narrow.visit_var_(p) if isinstance(p, E.Var) else p for p in func.params]
    return func.replace(params=tuple(params), body=body)


class _ChooseLaunch(StmtExprMutator):
    """A launch of a kernel with an int32 twin: the twin while the sizes are in bounds."""

    def __init__(self, twins: dict[str, tuple[str, list[dict[int, tuple[int, int]]]]]) -> None:
        super().__init__()
        self.twins = twins

    def visit_evaluate_(self, stmt: Evaluate) -> Stmt:
        call = stmt.value
        if not (isinstance(call, E.Call) and call.op is launch_op and call.args[0].value in self.twins):
            return stmt
        name, boxes = self.twins[call.args[0].value]
        args = call.args[7:]
        cond: E.PrimExpr | None = None
        for box in boxes:
            parts = []
            for k, (lo, hi) in box.items():
                if lo:
                    parts.append(E.const(lo, args[k].dtype) <= args[k])
                parts.append(args[k] <= E.const(hi, args[k].dtype))
            inside = conjoin(parts)
            cond = inside if cond is None else E.logical_or(cond, inside)
        twin = Evaluate(call.replace(args=(E.StringImm(name), *call.args[1:])))
        return IfThenElse(cond, twin, stmt)


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
