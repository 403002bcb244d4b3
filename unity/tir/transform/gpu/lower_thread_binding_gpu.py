"""Turn each thread-bound region into a kernel launch nest over canonical thread indices.

Before::

    for i in T.thread_binding(4, thread="blockIdx.x"):
        for j in T.thread_binding(64, thread="threadIdx.x"):
            B[i * 64 + j] = A[i * 64 + j]
        for j in T.thread_binding(32, thread="threadIdx.x"):
            C[i * 32 + j] = T.float32(0)

After ``LowerThreadBindingGPU()``::

    for blockIdx_x in T.thread_binding(4, thread="blockIdx.x"):
        for threadIdx_x in T.thread_binding(64, thread="threadIdx.x"):
            B[blockIdx_x * 64 + threadIdx_x] = A[blockIdx_x * 64 + threadIdx_x]
            if threadIdx_x < 32:
                C[blockIdx_x * 32 + threadIdx_x] = T.float32(0)

A kernel is the subtree under an outermost thread-bound loop.  Inside it, every loop
bound to a thread axis is replaced by that axis's single canonical variable (loops with
the same tag are the same hardware index, nested or not), guarded when its extent is
below the launch dimension, which is the largest constant extent bound to the axis (or
the one symbolic extent all its loops share).  The launch nest (blockIdx z, y, x then
threadIdx z, y, x) is the only place thread-bound loops remain; from here on the kernel
body means SIMT code run by every thread, not a sequential loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.diagnostics import DiagnosticError
from unity.ir.structural import structural_equal
from unity.tir.expr import LT, IntImm, PrimExpr, Var, cast, const
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, StmtExprVisitor, substitute
from unity.tir.stmt import For, ForKind, IfThenElse, Stmt
from unity.tir.transform._base import PrimFuncPass, with_body
from unity.tir.transform.gpu.intrinsics import THREAD_TAGS


@dataclass(frozen=True)
class LowerThreadBindingGPU(PrimFuncPass):
    """Rewrite each outermost thread-bound loop nest into a canonical kernel launch nest.

    Example:
        >>> from unity import te
        >>> from unity.ir.transform import Sequential
        >>> from unity.schedule.default_gpu import apply_default_gpu_schedules
        >>> from unity.tir.transform.gpu.gpu_pipeline import gpu_lowering_passes
        >>> A = te.placeholder((4, 256), name="A")
        >>> k = te.reduce_axis((0, 256), name="k")
        >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
        >>> mod = IRModule({"main": te.create_prim_func([A, B])})
        >>> mod = apply_default_gpu_schedules(mod)
        >>> passes = gpu_lowering_passes()
        >>> n = [type(p) for p in passes].index(LowerThreadBindingGPU)
        >>> before = Sequential(passes[:n])(mod)  # the passes that run first
        >>> after = LowerThreadBindingGPU()(before)
        >>> "blockIdx_x" in before.script(), "blockIdx_x" in after.script()
        (False, True)
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when it binds no thread).

        Example:
            >>> from unity import tir
            >>> f = tir.PrimFunc([], tir.Evaluate(tir.const(0)))
            >>> LowerThreadBindingGPU().transform_function(f) is f  # nothing to do
            True
        """
        return with_body(func, _Host().visit_stmt(func.body))


def is_launch_loop(stmt: Stmt) -> bool:
    """True when `stmt` is a thread-bound loop (at host level: the root of a kernel).

    Example:
        >>> is_launch_loop(tir.Evaluate(tir.const(0)))  # doctest: +SKIP
        False
    """
    return isinstance(stmt, For) and stmt.kind is ForKind.THREAD_BINDING


def launch_nest(kernel: Stmt) -> tuple[list[For], Stmt]:
    """The launch loops at the top of a lowered kernel, and the SIMT body under them.

    Example:
        >>> loops, body = launch_nest(kernel)  # doctest: +SKIP
    """
    loops: list[For] = []
    stmt = kernel
    while is_launch_loop(stmt):
        assert isinstance(stmt, For)
        loops.append(stmt)
        stmt = stmt.body
    return loops, stmt


class _Host(StmtExprMutator):
    def visit_for_(self, loop: For) -> Stmt:
        if loop.kind is ForKind.THREAD_BINDING:
            return _make_kernel(loop)
        return self._mutate_fields(loop)


def _make_kernel(root: For) -> Stmt:
    extents = _launch_extents(root)
    canon = {tag: Var(tag.replace(".", "_"), "int32") for tag in extents}
    body = _Rebinder(canon, extents).visit_stmt(root)
    for tag in reversed(THREAD_TAGS):
        if tag in extents:
            extent = extents[tag]
            var = canon[tag]
            body = For(var, const(0, var.dtype), _as_int32(extent), ForKind.THREAD_BINDING,
                       body, thread_binding=tag)
    return body


def _as_int32(expr: PrimExpr) -> PrimExpr:
    if expr.dtype == "int32":
        return expr
    return const(expr.value, "int32") if isinstance(expr, IntImm) else cast("int32", expr)


def _launch_extents(root: For) -> dict[str, PrimExpr]:
    found: dict[str, list[For]] = {}

    class _Collect(StmtExprVisitor):
        def visit_for_(self, loop: For) -> None:
            if loop.kind is ForKind.THREAD_BINDING:
                tag = loop.thread_binding
                if tag not in THREAD_TAGS:
                    msg = f"thread-bound loop {loop.loop_var.name}: unknown thread axis {tag!r}"
                    raise DiagnosticError(msg, loop)
                found.setdefault(tag, []).append(loop)
            self.visit_stmt_(loop)

    _Collect().visit_stmt(root)
    return {tag: _launch_extent(tag, loops) for tag, loops in found.items()}


def _launch_extent(tag: str, loops: list[For]) -> PrimExpr:
    extents = [loop.extent for loop in loops]
    if all(isinstance(e, IntImm) for e in extents):
        return max(extents, key=lambda e: e.value)  # type: ignore[attr-defined]  # IntImm
    if tag.startswith("threadIdx"):
        msg = f"loop {loops[0].loop_var.name} binds {tag} to a symbolic extent; thread counts must be constant"
        raise DiagnosticError(msg, next(lp for lp in loops if not isinstance(lp.extent, IntImm)))
    first = extents[0]
    for loop in loops[1:]:
        if not structural_equal(loop.extent, first):
            msg = f"loops bound to {tag} have different symbolic extents"
            raise DiagnosticError(msg, loop)
    return first


class _Rebinder(StmtExprMutator):
    """Replace thread-bound loops by their canonical index (plus a guard where needed)."""

    def __init__(self, canon: dict[str, Var], extents: dict[str, PrimExpr]) -> None:
        super().__init__()
        self.canon, self.extents = canon, extents

    def visit_for_(self, loop: For) -> Stmt:
        body = self.visit_stmt(loop.body)
        if loop.kind is not ForKind.THREAD_BINDING:
            return loop.replace(body=body)
        tag = loop.thread_binding
        assert tag is not None
        var = self.canon[tag]
        index: PrimExpr = var if loop.loop_var.dtype == "int32" else cast(loop.loop_var.dtype, var)
        if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
            index = index + loop.min
        body = substitute(body, {loop.loop_var: index})
        if _same_extent(loop.extent, self.extents[tag]):
            return body
        return IfThenElse(LT(var, _as_int32(loop.extent)), body)


def _same_extent(a: PrimExpr, b: PrimExpr) -> bool:
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value == b.value
    return a is b or structural_equal(a, b)
