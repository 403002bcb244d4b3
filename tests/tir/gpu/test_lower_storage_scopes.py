"""`LowerStorageScopes`: shared tiles per block, local values per thread, placed in the kernel."""

import pytest
from gpu_workloads import matmul

from unity import tir
from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import IRModule
from unity.ir.transform import Sequential
from unity.tir.functor import post_order_visit
from unity.tir.stmt import Allocate
from unity.tir.transform.gpu import LowerStorageScopes, gpu_lowering_passes, lower_cuda


def _allocations(func):
    found = {}
    post_order_visit(func.body, lambda n: found.__setitem__(n.buffer.name, n.buffer)
                     if isinstance(n, Allocate) else None)
    return found


def test_matmul_tiles_shrink_to_one_tile_per_block_and_one_value_per_thread():
    lowered = lower_cuda(matmul(64, 64, 64, tile=16).sch.mod)
    allocs = _allocations(lowered["main_kernel0"])
    assert {k: (b.scope, [d.value for d in b.shape]) for k, b in allocs.items()} == {
        "A_shared": ("shared", [256]), "B_shared": ("shared", [256]), "C_local": ("local", [1]),
    }


def test_a_global_buffer_allocated_inside_a_kernel_is_an_error():
    A = tir.decl_buffer((32,), "float32", "A")
    G = tir.decl_buffer((32,), "float32", "G")  # scope "global", but inside the kernel
    t = tir.Var("t")
    body = tir.Allocate(G, tir.SeqStmt((tir.BufferStore(G, A[t], (t,)),
                                         tir.BufferStore(A, G[t], (t,)))))
    loop = tir.For(t, tir.const(0), tir.const(32), tir.ForKind.THREAD_BINDING, body,
                   thread_binding="threadIdx.x")
    passes = gpu_lowering_passes()
    passes = passes[: [type(p) for p in passes].index(LowerStorageScopes) + 1]
    with pytest.raises(DiagnosticError, match="buffer G in scope 'global' is allocated inside a kernel"):
        Sequential(passes)(IRModule({"main": tir.PrimFunc((A,), loop)}))
