from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir import ForKind, IfThenElse
from unity.tir.transform import ConvertBlocksToLoops, HoistReductionInit, LowerInitBlock

from ._workloads import assert_same_results, collect, loop, matmul, module


def test_docstring_example():
    @T.prim_func
    def before(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 8):
            if k == 0:
                C[i] = T.float32(0)
            C[i] = C[i] + A[i, k]

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
        for i in T.serial(4):
            C[i] = T.float32(0)
            for k in T.serial(8):
                C[i] = C[i] + A[i, k]

    after = HoistReductionInit()(module(before))
    assert_structural_equal(after["main"], expected)
    assert_same_results(module(before), after)


def _row_sum(hoisted: bool, kind: ForKind = ForKind.SERIAL) -> tir.PrimFunc:
    A = tir.decl_buffer((4, 8), "float32", "A")
    C = tir.decl_buffer((4,), "float32", "C")
    i, k = tir.Var("i"), tir.Var("k")
    init = tir.BufferStore(C, tir.const(0.0), (i,))
    update = tir.BufferStore(C, C[i] + A[i, k], (i,))
    if hoisted:
        return tir.PrimFunc((A, C), loop(i, 4, tir.seq(init, loop(k, 8, update))))
    body = loop(k, 8, tir.seq(IfThenElse(tir.eq(k, 0), init), update), kind)
    return tir.PrimFunc((A, C), loop(i, 4, body))


def test_moves_first_iteration_init_in_front_of_the_loop():
    before = module(_row_sum(hoisted=False))
    after = HoistReductionInit()(before)
    assert_structural_equal(after["main"], _row_sum(hoisted=True))
    assert_same_results(before, after)


def test_nested_reduce_loops_hoist_step_by_step():
    before = ConvertBlocksToLoops()(LowerInitBlock()(module(matmul())))
    after = HoistReductionInit()(before)
    assert not collect(after["main"].body, IfThenElse)
    assert_same_results(before, after)


def test_nothing_to_do_returns_same_module():
    mod = module(_row_sum(hoisted=True))
    assert HoistReductionInit()(mod) is mod
    parallel = module(_row_sum(hoisted=False, kind=ForKind.PARALLEL))
    assert HoistReductionInit()(parallel) is parallel


def test_split_reduction_condition_is_hoisted_through_both_loops():
    A = tir.decl_buffer((4, 8), "float32", "A")
    C = tir.decl_buffer((4,), "float32", "C")
    i, ko, ki = tir.Var("i"), tir.Var("ko"), tir.Var("ki")
    k = ko * 4 + ki
    init = tir.BufferStore(C, tir.const(0.0), (i,))
    body = tir.seq(IfThenElse(tir.eq(k, 0), init), tir.BufferStore(C, C[i] + A[i, k], (i,)))
    before = module(tir.PrimFunc((A, C), loop(i, 4, loop(ko, 2, loop(ki, 4, body)))))
    after = HoistReductionInit()(before)
    assert not collect(after["main"].body, IfThenElse)
    assert_same_results(before, after)


def test_a_reduction_loop_that_may_run_no_iteration_is_hoisted_so_its_init_runs():
    """`for k in range(n)` with n = 0 at run time: the init must still run (a max over no
    rows is its init value); left inside the loop it never would."""

    @T.prim_func
    def before(a: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (T.int64(4), n), "float32")
        C = T.match_buffer(c, (T.int64(4),), "float32")
        for i in T.serial(T.int64(4)):
            for k in T.serial(n):
                if k == T.int64(0):
                    C[i] = T.float32(-1.0)
                C[i] = T.max(C[i], A[i, k])

    @T.prim_func
    def expected(a: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (T.int64(4), n), "float32")
        C = T.match_buffer(c, (T.int64(4),), "float32")
        for i in T.serial(T.int64(4)):
            C[i] = T.float32(-1.0)
            for k in T.serial(n):
                C[i] = T.max(C[i], A[i, k])

    after = HoistReductionInit()(module(before))
    assert_structural_equal(after["main"], expected)
    import numpy as np

    import unity

    run = unity.build(after, target="llvm")["main"]
    out = unity.runtime.tensor(np.full(4, 7.0, np.float32))
    run(unity.runtime.tensor(np.zeros((4, 0), np.float32)), out)
    np.testing.assert_array_equal(out.numpy(), [-1.0] * 4)
