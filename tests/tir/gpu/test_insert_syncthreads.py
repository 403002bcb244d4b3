"""`InsertSyncthreads`: barriers between cross-thread shared writes and reads, loop-carried too."""

from unity import tir
from unity.ir.module import IRModule
from unity.ir.structural import assert_structural_equal
from unity.tir.transform.gpu import InsertSyncthreads
from unity.tir.transform.gpu.intrinsics import syncthreads


def _kernel(make_body):
    A = tir.decl_buffer((64,), "float32", "A")
    C = tir.decl_buffer((16,), "float32", "C")
    S = tir.decl_buffer((16,), "float32", "A_shared", scope="shared")
    tx, k0 = tir.Var("threadIdx_x"), tir.Var("k0")
    load = tir.BufferStore(S, A[k0 * 16 + tx], (tx,))
    use = tir.BufferStore(C, C[tx] + S[15 - tx], (tx,))
    loop = tir.For(k0, tir.const(0), tir.const(4), tir.ForKind.SERIAL, make_body(load, use))
    nest = tir.For(tx, tir.const(0), tir.const(16), tir.ForKind.THREAD_BINDING,
                   tir.Allocate(S, loop), thread_binding="threadIdx.x")
    return IRModule({"main": tir.PrimFunc((A, C), nest)})


def test_barriers_before_the_read_and_for_the_next_iteration():
    before = _kernel(lambda load, use: tir.SeqStmt((load, use)))
    expected = _kernel(lambda load, use: tir.SeqStmt((syncthreads(), load, syncthreads(), use)))
    assert_structural_equal(InsertSyncthreads()(before), expected)


def test_nothing_to_do_without_shared_memory():
    A = tir.decl_buffer((16,), "float32", "A")
    tx = tir.Var("threadIdx_x")
    nest = tir.For(tx, tir.const(0), tir.const(16), tir.ForKind.THREAD_BINDING,
                   tir.BufferStore(A, A[tx] * 2.0, (tx,)), thread_binding="threadIdx.x")
    mod = IRModule({"main": tir.PrimFunc((A,), nest)})
    assert InsertSyncthreads()(mod) is mod


def test_no_barrier_inside_thread_dependent_control_flow():
    A = tir.decl_buffer((32,), "float32", "A")
    S = tir.decl_buffer((32,), "float32", "S", scope="shared")
    tx = tir.Var("threadIdx_x")

    def nest(body):
        return tir.For(tx, tir.const(0), tir.const(32), tir.ForKind.THREAD_BINDING,
                       tir.Allocate(S, body), thread_binding="threadIdx.x")

    write = tir.BufferStore(S, A[tx], (tx,))
    guarded = tir.IfThenElse(tx < 16, tir.BufferStore(A, S[tx + 16], (tx,)))
    before = IRModule({"main": tir.PrimFunc((A,), nest(tir.SeqStmt((write, guarded))))})
    expected = IRModule({"main": tir.PrimFunc(
        (A,), nest(tir.SeqStmt((write, syncthreads(), guarded))))})  # before the `if`, not in it
    assert_structural_equal(InsertSyncthreads()(before), expected)
