"""The GPU emulator: barriers, data races, out-of-bounds accesses, shuffles, host launches."""

import numpy as np
import pytest
from gpu_workloads import matmul

from unity import tir
from unity.ir.module import IRModule
from unity.ir.transform import Sequential
from unity.tir.functor import StmtExprMutator
from unity.tir.gpu_emulator import EmulatorError, emulate
from unity.tir.stmt import Evaluate, Stmt
from unity.tir.transform.gpu import InsertSyncthreads, gpu_lowering_passes, lower_cuda
from unity.tir.transform.gpu.intrinsics import is_syncthreads


def _reverse_through_shared(n: int = 64) -> tir.PrimFunc:
    """B[t] = A[n - 1 - t], staged through a shared buffer (thread t reads what n-1-t wrote)."""
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    S = tir.decl_buffer((n,), "float32", "S", scope="shared")
    bx, tx = tir.Var("bx"), tir.Var("tx")
    body = tir.SeqStmt((
        tir.BufferStore(S, A[tx], (tx,)),
        tir.BufferStore(B, S[n - 1 - tx], (tx,)),
    ))
    inner = tir.For(tx, tir.const(0), tir.const(n), tir.ForKind.THREAD_BINDING, body,
                    thread_binding="threadIdx.x")
    outer = tir.For(bx, tir.const(0), tir.const(1), tir.ForKind.THREAD_BINDING, inner,
                    thread_binding="blockIdx.x")
    return tir.PrimFunc((A, B), tir.Allocate(S, outer))


def _lower_without_barriers(mod: IRModule) -> IRModule:
    passes = [p for p in gpu_lowering_passes() if not isinstance(p, InsertSyncthreads)]
    return Sequential(passes, name="no_sync")(mod)


class _DropBarriers(StmtExprMutator):
    def visit_evaluate_(self, stmt: Evaluate) -> Stmt:
        return Evaluate(tir.const(0)) if is_syncthreads(stmt) else stmt


def test_barrier_makes_the_shared_exchange_correct():
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    emulate(lower_cuda(_reverse_through_shared()), a, b)
    np.testing.assert_array_equal(b, a[::-1])


def test_missing_barrier_is_a_data_race_naming_buffer_and_statement():
    mod = _lower_without_barriers(IRModule({"main": _reverse_through_shared()}))
    a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    with pytest.raises(EmulatorError) as err:
        emulate(mod, a, b)
    assert str(err.value) == (
        "kernel main_kernel0, block (0, 0, 0), thread 32: data race on shared S[32]: written "
        "after thread 31 read it with no __syncthreads() between\n"
        "  in: S[threadIdx_x] = A[threadIdx_x]"
    )


def test_planted_missing_barrier_in_the_tiled_matmul_is_caught():
    work = matmul(32, 32, 32)
    lowered = lower_cuda(work.sch.mod)
    kernel = lowered["main_kernel0"]
    broken = lowered.copy()
    broken["main_kernel0"] = kernel.replace(body=_DropBarriers().visit_stmt(kernel.body))
    with pytest.raises(EmulatorError, match=r"data race on shared (A|B)_shared\[\d+\]"):
        emulate(broken, *work.fresh_args())
    args = work.fresh_args()
    emulate(lowered, *args)  # with the barriers: no race, right numbers
    work.check(args)


def test_out_of_bounds_global_access_names_the_statement():
    n = 32
    A = tir.decl_buffer((n,), "float32", "A")
    tx = tir.Var("tx")
    store = tir.BufferStore(A, tir.const(1.0), (tx + 1,))
    loop = tir.For(tx, tir.const(0), tir.const(n), tir.ForKind.THREAD_BINDING, store,
                   thread_binding="threadIdx.x")
    mod = lower_cuda(tir.PrimFunc((A,), loop))
    with pytest.raises(EmulatorError, match=r"out-of-bounds access A\[32\].*\n  in: A\[threadIdx_x \+ 1\]"):
        emulate(mod, np.zeros(n, "float32"))


def test_host_code_outside_kernels_is_refused_with_a_hint():
    A = tir.decl_buffer((4,), "float32", "A")
    mod = lower_cuda(tir.PrimFunc((A,), tir.BufferStore(A, tir.const(1.0), (tir.const(0),))))
    with pytest.raises(EmulatorError, match="host code may only launch kernels.*bind its loops"):
        emulate(mod, np.zeros(4, "float32"))


def test_warp_shuffle_reaches_lane_values_and_a_divergent_one_is_reported():
    from unity.tir.transform.gpu.intrinsics import shfl_down

    A = tir.decl_buffer((32,), "float32", "A")
    tx = tir.Var("tx")

    def kernel(guarded: bool):
        store = tir.BufferStore(A, shfl_down(A[tx], 1, 32), (tx,))
        body = tir.IfThenElse(tx < 16, store) if guarded else store
        return tir.PrimFunc((A,), tir.For(tx, tir.const(0), tir.const(32), tir.ForKind.THREAD_BINDING,
                                          body, thread_binding="threadIdx.x"))

    a = np.arange(32, dtype="float32")
    emulate(lower_cuda(kernel(False)), a)
    np.testing.assert_array_equal(a, np.r_[np.arange(1, 32), 31].astype("float32"))
    with pytest.raises(EmulatorError, match="shuffle is reached by 16 of 32 lanes; threads 16..31"):
        emulate(lower_cuda(kernel(True)), np.zeros(32, "float32"))


def test_barrier_under_a_thread_dependent_condition_is_reported():
    from unity.tir.transform.gpu.intrinsics import syncthreads

    A = tir.decl_buffer((64,), "float32", "A")
    tx = tir.Var("tx")
    body = tir.IfThenElse(tx < 32, tir.SeqStmt((syncthreads(), tir.BufferStore(A, tir.const(1.0), (tx,)))))
    func = tir.PrimFunc((A,), tir.For(tx, tir.const(0), tir.const(64), tir.ForKind.THREAD_BINDING,
                                      body, thread_binding="threadIdx.x"))
    with pytest.raises(EmulatorError, match=r"__syncthreads\(\) is reached by 32 of 64 threads"):
        emulate(lower_cuda(func), np.zeros(64, "float32"))


def test_sampled_blocks_run_the_first_the_last_and_evenly_between():
    """`run_grid(..., sample=3)` over 10 blocks of a copy kernel writes blocks 0, 4 and 9
    only: a bounds and race check for kernels too big to emulate whole."""
    from unity import te
    from unity.schedule import Schedule
    from unity.tir.gpu_emulator import _compiled, run_grid
    from unity.tir.transform.gpu.split_host_device import is_kernel

    a = te.placeholder((40,), name="a")
    b = te.compute((40,), lambda i: a[i] + 1.0, name="b")
    sch = Schedule(te.create_prim_func([a, b]))
    bx, tx = sch.split(sch.get_loops(sch.get_block("b"))[0], [None, 4])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    (kernel,) = [f for f in lower_cuda(sch.mod).functions.values() if is_kernel(f)]
    out = np.zeros(40, np.float32)
    run_grid(_compiled(kernel), "k", [np.arange(40, dtype=np.float32), out], [10, 1, 1], [4, 1, 1], sample=3)
    assert sorted({i // 4 for i in np.flatnonzero(out)}) == [0, 4, 9]
    np.testing.assert_array_equal(out[36:], np.arange(36, 40) + 1.0)
