"""`parallel`, `vectorize`, `unroll`, `bind`: IR after, numbers unchanged, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise, matmul

from unity.schedule import Schedule, ScheduleError


def test_loop_kinds():
    func = elementwise(8, 6)
    sch = Schedule(func)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    sch.vectorize(j)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.unroll(i)
    sch.bind(j, "threadIdx.x")
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            B = T.alloc_buffer((8, 6), "float32")
            for i in T.parallel(8):
                for j in T.vectorized(6):
                    with T.block("B"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_i, v_j])
                        B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
            for i_1 in T.unroll(8):
                for j_1 in T.thread_binding(6, thread="threadIdx.x"):
                    with T.block("C"):
                        v_i_1, v_j_1 = T.axis.remap("SS", [i_1, j_1])
                        T.reads(B[v_i_1, v_j_1])
                        T.writes(C[v_i_1, v_j_1])
                        C[v_i_1, v_j_1] = B[v_i_1, v_j_1] + T.float32(1.0)
    """,
    )
    check_same_result(func, sch.mod)


def test_reduction_loops_cannot_be_parallel_vectorized_or_bound():
    sch = Schedule(matmul(4, 4, 4))
    _, _, k = sch.get_loops(sch.get_block("C"))
    before = sch.mod
    msg = "parallel: loop k is bound to a reduction iteration variable of block C"
    with pytest.raises(ScheduleError, match=msg):
        sch.parallel(k)
    with pytest.raises(ScheduleError, match="vectorize: loop k is bound to a reduction"):
        sch.vectorize(k)
    with pytest.raises(ScheduleError, match="bind: loop k is bound to a reduction"):
        sch.bind(k, "blockIdx.x")
    assert sch.mod is before
    sch.unroll(k)  # unrolling a reduction loop is fine


def test_bind_reduction_loop_to_thread_asks_for_cross_thread_reduction():
    sch = Schedule(matmul(4, 4, 4))
    i, _, k = sch.get_loops(sch.get_block("C"))
    sch.bind(k, "threadIdx.x")
    assert "threadIdx.x" in sch.trace.show()
    with pytest.raises(ScheduleError, match="bind: loop k is already thread_binding to threadIdx.x"):
        sch.bind(k, "threadIdx.y")
    sch.bind(i, "blockIdx.x")
    with pytest.raises(ScheduleError, match="bind: loop i is already thread_binding to blockIdx.x"):
        sch.bind(i, "threadIdx.x")


def test_bind_rejects_unknown_thread_axes_and_kind_changes():
    sch = Schedule(elementwise())
    i, _ = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="unknown thread axis 'threadIdx.w'"):
        sch.bind(i, "threadIdx.w")
    sch.parallel(i)
    with pytest.raises(ScheduleError, match="vectorize: loop i is already parallel"):
        sch.vectorize(i)


def test_unroll_of_a_vectorized_loop_is_refused():
    sch = Schedule(elementwise())
    _, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(j)
    with pytest.raises(ScheduleError, match="unroll: loop j is already vectorized"):
        sch.unroll(j)


def test_parallel_refuses_a_loop_whose_iterations_write_the_same_elements():
    """Every iteration of `i` rewrites all of B: serially the last one wins, in parallel
    the iterations would race."""
    from unity.script import tir as T

    @T.prim_func
    def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.serial(4):
            for j in T.serial(8):
                with T.block("B"):
                    v_j = T.axis.spatial(8, j)
                    B[v_j] = A[3, v_j]

    sch = Schedule(f)
    i, j = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="parallel: every iteration of loop i has block B write the same elements of B"):
        sch.parallel(i)
    sch.parallel(j)
