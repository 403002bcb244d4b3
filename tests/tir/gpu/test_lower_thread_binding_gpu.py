"""`LowerThreadBindingGPU`: one canonical index per thread axis, guards, launch nest."""

import pytest

from unity import tir
from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import IRModule
from unity.ir.structural import assert_structural_equal
from unity.tir.transform.gpu import LowerThreadBindingGPU


def _bound(var, extent, tag, body):
    return tir.For(var, tir.const(0), tir.const(extent) if isinstance(extent, int) else extent,
                   tir.ForKind.THREAD_BINDING, body, thread_binding=tag)


def test_loops_of_one_axis_share_the_index_and_shorter_ones_get_a_guard():
    A, B, C = (tir.decl_buffer((256,), "float32", n) for n in "ABC")
    i, j, j2 = tir.Var("i"), tir.Var("j"), tir.Var("j2")
    before = _bound(i, 4, "blockIdx.x", tir.SeqStmt((
        _bound(j, 64, "threadIdx.x", tir.BufferStore(B, A[i * 64 + j], (i * 64 + j,))),
        _bound(j2, 32, "threadIdx.x", tir.BufferStore(C, tir.const(0.0), (i * 32 + j2,))),
    )))
    bx, tx = tir.Var("blockIdx_x"), tir.Var("threadIdx_x")
    expected = _bound(bx, 4, "blockIdx.x", _bound(tx, 64, "threadIdx.x", tir.SeqStmt((
        tir.BufferStore(B, A[bx * 64 + tx], (bx * 64 + tx,)),
        tir.IfThenElse(tx < 32, tir.BufferStore(C, tir.const(0.0), (bx * 32 + tx,))),
    ))))
    after = LowerThreadBindingGPU()(IRModule({"main": tir.PrimFunc((A, B, C), before)}))
    assert_structural_equal(after, IRModule({"main": tir.PrimFunc((A, B, C), expected)}))


def test_nothing_to_do_without_thread_bindings():
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i")
    loop = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, tir.BufferStore(A, tir.const(1.0), (i,)))
    mod = IRModule({"main": tir.PrimFunc((A,), loop)})
    assert LowerThreadBindingGPU()(mod) is mod


@pytest.mark.ill_formed
def test_symbolic_thread_count_is_an_error():
    n = tir.SizeVar("n")
    A = tir.decl_buffer((n,), "float32", "A")
    t = tir.Var("t")
    loop = _bound(t, n, "threadIdx.x", tir.BufferStore(A, tir.const(1.0), (t,)))
    with pytest.raises(DiagnosticError, match="binds threadIdx.x to a symbolic extent"):
        LowerThreadBindingGPU()(IRModule({"main": tir.PrimFunc((A,), loop)}))
