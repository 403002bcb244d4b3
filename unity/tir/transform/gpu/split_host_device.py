"""Split each kernel launch nest out of its function into a device `PrimFunc`.

Before (after ``LowerThreadBindingGPU`` and the other GPU passes)::

    @T.prim_func
    def main(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        for blockIdx_x in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
            for threadIdx_x in T.thread_binding(64, thread="threadIdx.x"):
                if blockIdx_x * 64 + threadIdx_x < n:
                    B[blockIdx_x * 64 + threadIdx_x] = A[blockIdx_x * 64 + threadIdx_x]

After ``SplitHostDevice()``::

    @T.prim_func
    def main(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        T.cuda_launch("main_kernel0", (n + 63) // 64, 1, 1, 64, 1, 1, A.data, B.data, n)

    @T.prim_func
    def main_kernel0(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), n: T.int32):
        T.func_attr({"calling_conv": "cuda_kernel", "global_symbol": "main_kernel0"})
        for blockIdx_x in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
            ...  # unchanged

The kernel takes one flat buffer per memory it touches that is defined outside it
(function parameters, host allocations) and one scalar per free variable (symbolic
shapes, scalar parameters), in first-use order.  The host function keeps its parameters;
its body launches the kernels (grid and block sizes are expressions over its variables)
and may still hold serial loops, lets, asserts and global allocations around them.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.tir.buffer import Buffer
from unity.tir.expr import BufferLoad, Let, PrimExpr, Var, const
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, StmtExprVisitor
from unity.tir.stmt import Allocate, BufferStore, For, LetStmt, Stmt
from unity.tir.transform.gpu.intrinsics import launch
from unity.tir.transform.gpu.lower_thread_binding_gpu import is_launch_loop, launch_nest

KERNEL_CONV = "cuda_kernel"
"""`calling_conv` attribute of the device functions."""


@dataclass(frozen=True)
class SplitHostDevice(ModulePass):
    """Outline every kernel launch nest into a `PrimFunc` and launch it from the host.

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
        >>> n = [type(p) for p in passes].index(SplitHostDevice)
        >>> before = Sequential(passes[:n])(mod)  # the passes that run first
        >>> [gv.name_hint for gv in SplitHostDevice()(before).get_global_vars()]
        ['main', 'main_kernel0']
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        out = IRModule(attrs=mod.attrs)
        for gv, func in mod.items():
            if not isinstance(func, PrimFunc) or func.attrs.get("calling_conv") == KERNEL_CONV:
                out.add(gv.name_hint, func)
                continue
            splitter = _Splitter(gv.name_hint, func)
            body = splitter.visit_stmt(func.body)
            out.add(gv.name_hint, func if body is func.body else func.replace(body=body))
            for name, kernel in splitter.kernels:
                out.add(name, kernel)
        return out


def is_kernel(func: object) -> bool:
    """True when `func` is a device function made by `SplitHostDevice`.

    Example:
        >>> is_kernel(None)
        False
    """
    return isinstance(func, PrimFunc) and func.attrs.get("calling_conv") == KERNEL_CONV


class _Splitter(StmtExprMutator):
    def __init__(self, prefix: str, func: PrimFunc) -> None:
        super().__init__()
        self.prefix = prefix
        self.order = {p.data: k for k, p in enumerate(func.buffer_params())}
        self.kernels: list[tuple[str, PrimFunc]] = []

    def visit_for_(self, loop: For) -> Stmt:
        if not is_launch_loop(loop):
            return self._mutate_fields(loop)
        name = f"{self.prefix}_kernel{len(self.kernels)}"
        buffers, scalars = _kernel_params(loop)
        buffers.sort(key=lambda b: self.order.get(b.data, len(self.order)))  # host order first
        kernel = PrimFunc((*buffers, *scalars), loop,
                          attrs={"global_symbol": name, "calling_conv": KERNEL_CONV})
        self.kernels.append((name, kernel))
        dims = {lp.thread_binding: lp.extent for lp in launch_nest(loop)[0]}
        one = const(1)
        grid = tuple(dims.get(f"blockIdx.{a}", one) for a in "xyz")
        block = tuple(dims.get(f"threadIdx.{a}", one) for a in "xyz")
        args: tuple[PrimExpr, ...] = (*(b.data for b in buffers), *scalars)
        return launch(name, grid, block, args)


def _kernel_params(kernel: For) -> tuple[list[Buffer], list[Var]]:
    """Buffers (one per outside memory) and free scalar variables of a kernel."""
    uses = _Uses()
    uses.visit_stmt(kernel)
    buffers: dict[Var, Buffer] = {}
    for buf in uses.buffers:
        if buf.data in uses.defined:
            continue
        seen = buffers.setdefault(buf.data, buf)
        if seen.dtype != buf.dtype:
            msg = f"memory {buf.data.name} is used as {seen.dtype} and as {buf.dtype} in one kernel"
            raise DiagnosticError(msg, kernel)
    scalars = [v for v in uses.vars if v not in uses.defined and v not in buffers]
    return list(buffers.values()), scalars


class _Uses(StmtExprVisitor):
    """Variables and buffers used in a kernel, and the variables it defines itself."""

    def __init__(self) -> None:
        self.vars: dict[Var, None] = {}
        self.buffers: list[Buffer] = []
        self.defined: set[Var] = set()

    def visit_var_(self, var: Var) -> None:
        if var.dtype != "handle":
            self.vars.setdefault(var, None)

    def visit_for_(self, loop: For) -> None:
        self.defined.add(loop.loop_var)
        self.visit_stmt_(loop)

    def visit_let_stmt_(self, let: LetStmt) -> None:
        self.defined.add(let.var)
        self.visit_stmt_(let)

    def visit_let_(self, let: Let) -> None:
        self.defined.add(let.var)
        self.visit_prim_expr_(let)

    def visit_allocate_(self, alloc: Allocate) -> None:
        self.defined.add(alloc.buffer.data)
        self.visit_stmt_(alloc)

    def visit_buffer_load_(self, load: BufferLoad) -> None:
        self.buffers.append(load.buffer)
        for index in load.indices:
            self.visit_expr(index)

    def visit_buffer_store_(self, store: BufferStore) -> None:
        self.buffers.append(store.buffer)
        self.visit_expr(store.value)
        for index in store.indices:
            self.visit_expr(index)
