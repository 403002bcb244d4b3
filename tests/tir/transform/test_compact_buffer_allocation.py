from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir import Allocate
from unity.tir.transform import CompactBufferAllocation

from ._workloads import assert_same_results, loop, module


def test_docstring_example():
    @T.prim_func
    def before(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
        with T.allocate_buffer((16, 16), "float32") as A:
            for j in T.serial(4):
                A[0, j + 2] = X[j] * T.float32(3)
                Y[j] = A[0, j + 2]

    @T.prim_func
    def expected(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
        with T.allocate_buffer((1, 4), "float32") as A:
            for j in T.serial(4):
                A[0, j] = X[j] * T.float32(3)
                Y[j] = A[0, j]

    after = CompactBufferAllocation()(module(before))
    assert_structural_equal(after["main"], expected)
    assert_same_results(module(before), after)


def _staged(shape: tuple[int, int], offset: int) -> tir.PrimFunc:
    X = tir.decl_buffer((4,), "float32", "X")
    Y = tir.decl_buffer((4,), "float32", "Y")
    A = tir.decl_buffer(shape, "float32", "A")
    j = tir.Var("j")
    col = j + offset if offset else j
    body = loop(j, 4, tir.seq(
        tir.BufferStore(A, X[j] * 3.0, (tir.const(0), col)),
        tir.BufferStore(Y, A[0, col], (j,)),
    ))  # fmt: skip
    return tir.PrimFunc((X, Y), Allocate(A, body))


def test_shrinks_buffer_to_the_accessed_box():
    before = module(_staged((16, 16), 2))
    after = CompactBufferAllocation()(before)
    assert_structural_equal(after["main"], _staged((1, 4), 0))
    assert_same_results(before, after)


def test_nothing_to_do_returns_same_module():
    mod = module(_staged((1, 4), 0))
    assert CompactBufferAllocation()(mod) is mod
