from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir import For, ForKind
from unity.tir.transform import LowerThreadBindingCPU

from ._workloads import loop, module


def test_docstring_example():
    @T.prim_func
    def before(A: T.Buffer((4, 8, 2), "float32"), B: T.Buffer((4, 8, 2), "float32")):
        for i in T.parallel(4):
            for j in T.parallel(8):
                for t in T.thread_binding(2, thread="threadIdx.x"):
                    B[i, j, t] = A[i, j, t]

    @T.prim_func
    def expected(A: T.Buffer((4, 8, 2), "float32"), B: T.Buffer((4, 8, 2), "float32")):
        for i in T.parallel(4):
            for j in T.serial(8):
                for t in T.serial(2):
                    B[i, j, t] = A[i, j, t]

    after = LowerThreadBindingCPU()(module(before))
    assert_structural_equal(after["main"], expected)


def _nest(kinds: tuple[ForKind, ForKind, ForKind]) -> tir.PrimFunc:
    A = tir.decl_buffer((4, 8, 2), "float32", "A")
    i, j, t = tir.Var("i"), tir.Var("j"), tir.Var("t")
    store = tir.BufferStore(A, tir.const(1.0), (i, j, t))
    bound = "threadIdx.x" if kinds[2] is ForKind.THREAD_BINDING else None
    inner = For(t, tir.const(0), tir.const(2), kinds[2], store, thread_binding=bound)
    return tir.PrimFunc((A,), loop(i, 4, loop(j, 8, inner, kinds[1]), kinds[0]))


def test_keeps_only_outermost_parallel_and_serializes_thread_bindings():
    P, S, TB = ForKind.PARALLEL, ForKind.SERIAL, ForKind.THREAD_BINDING
    after = LowerThreadBindingCPU()(module(_nest((P, P, TB))))
    assert_structural_equal(after["main"], _nest((P, S, S)))
    assert after["main"].body.body.body.thread_binding is None


def test_nothing_to_do_returns_same_module():
    mod = module(_nest((ForKind.SERIAL, ForKind.PARALLEL, ForKind.SERIAL)))
    assert LowerThreadBindingCPU()(mod) is mod
