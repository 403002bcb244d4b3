"""Normalize loop kinds for the CPU: thread bindings run serially, parallelism is not nested.

Before::

    for i in T.parallel(4):
        for j in T.parallel(8):
            for t in T.thread_binding(2, thread="threadIdx.x"):
                B[i, j, t] = A[i, j, t]

After ``LowerThreadBindingCPU()``::

    for i in T.parallel(4):
        for j in T.serial(8):
            for t in T.serial(2):
                B[i, j, t] = A[i, j, t]

Only the outermost parallel loop on any path stays `PARALLEL` (codegen outlines its
body for the thread pool); GPU thread-bound loops mean the same as serial loops.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator
from unity.tir.stmt import For, ForKind, Stmt
from unity.tir.transform._base import PrimFuncPass, with_body


@dataclass(frozen=True)
class LowerThreadBindingCPU(PrimFuncPass):
    """Make `THREAD_BINDING` loops and parallel loops nested in parallel ones `SERIAL`.

    Example:
        >>> from unity import te
        >>> from unity.schedule.schedule import Schedule
        >>> from unity.tir.transform import ConvertBlocksToLoops
        >>> A = te.placeholder((64,), name="A")
        >>> B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
        >>> sch = Schedule(te.create_prim_func([A, B]))
        >>> i_0, i_1 = sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[None, 8])
        >>> sch.bind(i_0, "blockIdx.x")
        >>> sch.bind(i_1, "threadIdx.x")
        >>> func = ConvertBlocksToLoops().transform_function(sch.mod["main"])
        >>> out = LowerThreadBindingCPU()(IRModule({"main": func}))
        >>> "thread_binding" in out.script()
        False
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> from unity import te
            >>> from unity.schedule.schedule import Schedule
            >>> from unity.tir.transform import ConvertBlocksToLoops
            >>> A = te.placeholder((64,), name="A")
            >>> B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
            >>> sch = Schedule(te.create_prim_func([A, B]))
            >>> i_0, i_1 = sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[None, 8])
            >>> sch.bind(i_0, "blockIdx.x")
            >>> sch.bind(i_1, "threadIdx.x")
            >>> func = ConvertBlocksToLoops().transform_function(sch.mod["main"])
            >>> print(LowerThreadBindingCPU().transform_function(func).body.script())
            for i_0, i_1 in T.grid(8, 8):
                B[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] * T.float32(2.0)
        """
        return with_body(func, _KindNormalizer().visit_stmt(func.body))


class _KindNormalizer(StmtExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.in_parallel = False

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        from unity.ir.node import dispatch_table  # not memoized: the result depends on nesting

        return dispatch_table(type(self), type(stmt))(self, stmt)

    def visit_for_(self, loop: For) -> Stmt:
        kind = loop.kind
        serial = kind is ForKind.THREAD_BINDING or (kind is ForKind.PARALLEL and self.in_parallel)
        outer, self.in_parallel = self.in_parallel, self.in_parallel or kind is ForKind.PARALLEL
        try:
            body = self.visit_stmt(loop.body)
        finally:
            self.in_parallel = outer
        if serial:
            return loop.replace(kind=ForKind.SERIAL, thread_binding=None, body=body)
        return loop.replace(body=body)
