from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir import Buffer, IfThenElse
from unity.tir.transform import Simplify

from ._workloads import assert_same_results, loop, module


def test_docstring_example():
    @T.prim_func
    def before(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        for i0, i1 in T.grid(4, 32):
            B[(i0 * 32 + i1) // 32 * 32 + (i0 * 32 + i1) % 32] = A[i0 * 32 + i1 - 0]

    @T.prim_func
    def expected(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        for i0, i1 in T.grid(4, 32):
            B[i0 * 32 + i1] = A[i0 * 32 + i1]

    after = Simplify()(module(before))
    assert_structural_equal(after["main"], expected)
    assert_same_results(module(before), after)


def _split_copy(index_of):  # noqa: ANN001, ANN202
    A = tir.decl_buffer((128,), "float32", "A")
    B = tir.decl_buffer((128,), "float32", "B")
    i0, i1 = tir.Var("i0"), tir.Var("i1")
    store = tir.BufferStore(B, A[index_of(i0, i1)], (index_of(i0, i1),))
    return tir.PrimFunc((A, B), loop(i0, 4, loop(i1, 32, store)))


def test_simplifies_split_index_with_loop_bounds():
    messy = lambda i0, i1: (i0 * 32 + i1) // 32 * 32 + (i0 * 32 + i1) % 32  # noqa: E731
    before = module(_split_copy(messy))
    after = Simplify()(before)
    assert_structural_equal(after["main"], _split_copy(lambda i0, i1: i0 * 32 + i1))
    assert_same_results(before, after)


def test_prunes_provable_if_and_keeps_unknown_one():
    A = tir.decl_buffer((8,), "float32", "A")
    n = tir.Var("n")
    i = tir.Var("i")
    store = tir.BufferStore(A, tir.const(1.0), (i,))
    before = tir.PrimFunc((A, n), loop(i, 8, IfThenElse(i < 8, IfThenElse(i < n, store))))
    expected = tir.PrimFunc((A, n), loop(i, 8, IfThenElse(i < n, store)))
    assert_structural_equal(Simplify()(module(before))["main"], expected)


def test_drops_false_branch_and_unit_loop():
    A = tir.decl_buffer((8,), "float32", "A")
    i, j = tir.Var("i"), tir.Var("j")
    dead = IfThenElse(i >= 8, tir.BufferStore(A, tir.const(2.0), (i,)))
    live = tir.BufferStore(A, tir.const(1.0), (i + j,))
    before = tir.PrimFunc((A,), loop(i, 8, loop(j, 1, tir.seq(dead, live))))
    expected = tir.PrimFunc((A,), loop(i, 8, tir.BufferStore(A, tir.const(1.0), (i,))))
    assert_structural_equal(Simplify()(module(before))["main"], expected)


def test_nothing_to_do_returns_same_module():
    mod = module(_split_copy(lambda i0, i1: i0 * 32 + i1))
    assert Simplify()(mod) is mod
    assert isinstance(mod["main"].params[0], Buffer)
