"""Lower reductions whose reduce loop is bound to a thread axis into warp shuffles + shared memory.

Before (each thread of `threadIdx.x` takes every 32nd element of a row)::

    for k1 in T.thread_binding(32, thread="threadIdx.x"):
        for k0 in T.serial(4):
            with T.block("max"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(128, k0 * 32 + k1)
                with T.init():
                    M[vi] = T.float32("-inf")
                M[vi] = T.max(M[vi], X[vi, vk])

After ``LowerCrossThreadReduction()``::

    with T.allocate_buffer((32,), "float32", scope="local") as M_red:
        for k1 in T.thread_binding(32, thread="threadIdx.x"):      # in-thread partials
            M_red[k1] = T.float32("-inf")
            for k0 in T.serial(4):
                M_red[k1] = T.max(M_red[k1], X[i, k0 * 32 + k1])
        for t in T.thread_binding(32, thread="threadIdx.x"):       # the warp's tree
            M_red[t] = T.max(M_red[t], T.cuda_shfl_down(M_red[t], 16, 32))
            ...                                                     # offsets 8, 4, 2, 1
        for t in T.thread_binding(32, thread="threadIdx.x"):
            if t == 0:
                M[i] = T.max(T.float32("-inf"), M_red[t])

With more than 32 threads, lane 0 of each warp puts its partial in a `shared` array,
and after a barrier (`InsertSyncthreads`) the first lanes reduce those with a second
shuffle tree.  The result is written by thread 0 only: keep the reduction's output in
`shared` scope (`Schedule.set_scope`) when other threads read it, so the barrier pass
sees the dependence.  Runs on blocks, before `LowerInitBlock`; the result is SIMT code
(its meaning is the GPU's, not a sequential loop's), so it belongs to `lower_cuda` only.

Requirements (a `DiagnosticError` names the block otherwise): one thread-bound reduce
loop, outermost of the loops around the block that feed its reduce variables, of
constant extent that is a power of two up to 32, or a multiple of 32 giving a power of
two number of warps (then it must be `threadIdx.x` and the only thread axis reduced);
the body is `B[i] = B[i] op value` with `op` one of `+ * max min`.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.diagnostics import DiagnosticError
from unity.ir.structural import structural_equal
from unity.tir import expr as E
from unity.tir.buffer import Buffer, decl_buffer
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, substitute, uses_var
from unity.tir.op import max_value, min_value
from unity.tir.stmt import Allocate, BlockRealize, BufferStore, For, ForKind, IfThenElse, Stmt, seq
from unity.tir.transform._base import PrimFuncPass, with_body
from unity.tir.transform.gpu.intrinsics import shfl_down

_IDENTITY = {
    E.Add: lambda t: E.const(0, t), E.Mul: lambda t: E.const(1, t),
    E.Max: min_value, E.Min: max_value,
}  # fmt: skip
"""The identity of each combiner, by dtype."""


@dataclass(frozen=True)
class LowerCrossThreadReduction(PrimFuncPass):
    """Turn thread-bound reductions into per-thread partials plus a shuffle/shared-memory tree.

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
        >>> n = [type(p) for p in passes].index(LowerCrossThreadReduction)
        >>> before = Sequential(passes[:n])(mod)  # the passes that run first
        >>> after = LowerCrossThreadReduction()(before)
        >>> "shfl_down" in before.script(), "shfl_down" in after.script()
        (False, True)
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when no reduction is bound to threads).

        Example:
            >>> from unity import tir
            >>> f = tir.PrimFunc([], tir.Evaluate(tir.const(0)))
            >>> LowerCrossThreadReduction().transform_function(f) is f  # nothing to do
            True
        """
        return with_body(func, _Rewriter().visit_stmt(func.body))


def _combine(cls: type, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
    if cls is E.Max:
        return E.max_value_of(a, b)
    if cls is E.Min:
        return E.min_value_of(a, b)
    return a + b if cls is E.Add else a * b


class _Rewriter(StmtExprMutator):
    def visit_for_(self, loop: For) -> Stmt:
        if loop.kind is ForKind.THREAD_BINDING and (loop.thread_binding or "").startswith("threadIdx"):
            got = _rewrite(loop)
            if got is not None:
                return got
        return self._mutate_fields(loop)


def _rewrite(loop: For) -> Stmt | None:
    chain: list[For] = [loop]
    inner = loop.body
    while isinstance(inner, For):
        chain.append(inner)
        inner = inner.body
    if not isinstance(inner, BlockRealize) or inner.block.init is None:
        return None
    block = inner.block
    reduce_values = [v for iv, v in zip(block.iter_vars, inner.iter_values)
                     if iv.iter_type is E.IterType.REDUCE]
    if not any(uses_var(v, loop.loop_var) for v in reduce_values):
        return None
    vmap = {iv.var: v for iv, v in zip(block.iter_vars, inner.iter_values)}
    cls, out, index, value = _reduction(block.body, block)
    init = block.init
    if not isinstance(init, BufferStore) or init.buffer is not out:
        raise DiagnosticError(f"cross-thread reduction {block.name_hint}: the init must store to {out.name}", block)
    extent = _check_extent(loop, block)
    index = tuple(substitute(i, vmap) for i in index)
    for var in (lp.loop_var for lp in chain):
        if any(uses_var(i, var) for i in index):
            msg = f"cross-thread reduction {block.name_hint}: loop {var.name} feeds a spatial index"
            raise DiagnosticError(msg, block)
    return _lowered(loop, chain, inner, cls, out, index, substitute(value, vmap),
                    substitute(init.value, vmap), extent)


def _reduction(body: Stmt, block: object) -> tuple[type, Buffer, tuple[E.PrimExpr, ...], E.PrimExpr]:
    name = getattr(block, "name_hint", "?")
    if isinstance(body, IfThenElse) and body.else_case is None:  # a guarded update (a scatter's
        cls, out, index, value = _reduction(body.then_case, block)  # hit test): the identity else
        return cls, out, index, E.Select(body.condition, value, _IDENTITY[cls](out.dtype))
    if isinstance(body, BufferStore) and type(body.value) in _IDENTITY:
        node = body.value
        for mine, other in ((node.a, node.b), (node.b, node.a)):  # type: ignore[attr-defined]
            if (isinstance(mine, E.BufferLoad) and mine.buffer is body.buffer
                    and all(structural_equal(a, b) for a, b in zip(mine.indices, body.indices))):
                return type(node), body.buffer, body.indices, other
    msg = f"cross-thread reduction {name}: the body must be `B[i] = B[i] op value` (op: + * max min)"
    raise DiagnosticError(msg, block)  # type: ignore[arg-type]


def _check_extent(loop: For, block: object) -> int:
    ext = loop.extent
    name = getattr(block, "name_hint", "?")
    if not isinstance(ext, E.IntImm):
        raise DiagnosticError(f"cross-thread reduction {name}: the thread extent must be constant", loop)
    n = ext.value
    pow2 = n & (n - 1) == 0
    if n <= 32 and pow2:
        return n
    warps = n // 32
    if n % 32 == 0 and warps & (warps - 1) == 0 and warps <= 32 and loop.thread_binding == "threadIdx.x":
        return n
    msg = (f"cross-thread reduction {name}: {n} threads on {loop.thread_binding}; use a power of "
           "two up to 32, or a multiple of 32 (a power-of-two number of warps) on threadIdx.x")
    raise DiagnosticError(msg, loop)


def _thread_loop(template: For, body_of: object) -> For:
    var = E.Var(template.loop_var.name + "_r", template.loop_var.dtype)
    return For(var, E.const(0, var.dtype), template.extent, ForKind.THREAD_BINDING,
               body_of(var), thread_binding=template.thread_binding)  # type: ignore[operator]


def _tree(red: Buffer, t: E.Var, cls: type, width: int) -> list[Stmt]:
    stmts: list[Stmt] = []
    offset = width // 2
    while offset >= 1:
        cur = red[t]
        stmts.append(BufferStore(red, _combine(cls, cur, shfl_down(cur, offset, width)), (t,)))
        offset //= 2
    return stmts


def _lowered(loop: For, chain: list[For], realize: BlockRealize, cls: type, out: Buffer,
             index: tuple[E.PrimExpr, ...], value: E.PrimExpr, init: E.PrimExpr, extent: int) -> Stmt:
    dtype = out.dtype
    identity = _IDENTITY[cls](dtype)
    red = decl_buffer((extent,), dtype, f"{out.name}_red", scope="local")
    t0 = loop.loop_var
    update: Stmt = BufferStore(red, _combine(cls, red[t0], value), (t0,))
    outside: list[E.PrimExpr] = []  # the guards of a ragged spatial split: the write's too
    if not (isinstance(realize.predicate, E.IntImm) and realize.predicate.value):
        pred = substitute(realize.predicate, {iv.var: v for iv, v in
                                             zip(realize.block.iter_vars, realize.iter_values)})
        update = IfThenElse(pred, update)
        reduce_vars = [t0, *(lp.loop_var for lp in chain[1:])]
        outside = [c for c in E.conjuncts(pred) if not any(uses_var(c, v) for v in reduce_vars)]
    for lp in reversed(chain[1:]):
        update = lp.replace(body=update)
    partial = loop.replace(body=seq(BufferStore(red, identity, (t0,)), update))
    width = min(extent, 32)
    stages: list[Stmt] = [partial]
    shared: Buffer | None = None
    if extent <= 32:
        stages.append(_thread_loop(loop, lambda t: seq(*_tree(red, t, cls, width))))
    else:
        warps = extent // 32
        shared = decl_buffer((warps,), dtype, f"{out.name}_red_shared", scope="shared")
        sh = shared

        def first(t: E.Var) -> Stmt:
            keep = IfThenElse(E.eq(E.floormod(t, 32), 0), BufferStore(sh, red[t], (E.floordiv(t, 32),)))
            return seq(*_tree(red, t, cls, 32), keep)

        def second(t: E.Var) -> Stmt:
            load = IfThenElse(E.lt(t, warps), BufferStore(red, sh[t], (t,)), BufferStore(red, identity, (t,)))
            return seq(load, *_tree(red, t, cls, warps))

        stages += [_thread_loop(loop, first), _thread_loop(loop, second)]
    stages.append(_thread_loop(loop, lambda t: IfThenElse(
        E.conjoin([E.eq(t, 0), *outside]), BufferStore(out, _combine(cls, init, red[t]), index))))
    body: Stmt = seq(*stages)
    if shared is not None:
        body = Allocate(shared, body)
    return Allocate(red, body)
