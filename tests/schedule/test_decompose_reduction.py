"""`decompose_reduction`: IR after, numbers unchanged, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise, matmul

from unity.schedule import Schedule, ScheduleError


def test_decompose_at_the_reduction_loop():
    func = matmul(4, 4, 4)
    sch = Schedule(func)
    block = sch.get_block("C")
    _, _, k = sch.get_loops(block)
    init = sch.decompose_reduction(block, k)
    assert sch.get(init).name_hint == "C_init"
    assert sch.get(block).name_hint == "C_update"  # the handle follows the renamed block
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
            T.func_attr({"tir.noalias": True})
            for i, j in T.grid(4, 4):
                with T.block("C_init"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    T.reads()
                    T.writes(C[v_i, v_j])
                    C[v_i, v_j] = T.float32(0.0)
                for k in T.serial(4):
                    with T.block("C_update"):
                        v_i_1, v_j_1, v_k = T.axis.remap("SSR", [i, j, k])
                        T.reads(A[v_i_1, v_k], B[v_k, v_j_1])
                        T.writes(C[v_i_1, v_j_1])
                        C[v_i_1, v_j_1] = C[v_i_1, v_j_1] + A[v_i_1, v_k] * B[v_k, v_j_1]
    """,
    )
    check_same_result(func, sch.mod)


def test_decompose_at_the_outermost_loop_copies_spatial_loops():
    func = matmul(4, 4, 4)
    sch = Schedule(func)
    block = sch.get_block("C")
    i, _, _ = sch.get_loops(block)
    init = sch.decompose_reduction(block, i)
    names = [sch.get(lp).loop_var.name for lp in sch.get_loops(init)]
    assert names == ["i_init", "j_init"]
    check_same_result(func, sch.mod)


def test_decompose_after_split_and_reorder_keeps_the_guard():
    func = matmul(6, 4, 5)
    sch = Schedule(func)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    io, ii = sch.split(i, factors=[None, 4])
    ko, ki = sch.split(k, factors=[None, 2])
    sch.reorder(io, ko, j, ki, ii)
    sch.decompose_reduction(block, ko)
    check_same_result(func, sch.mod)


def test_decompose_errors():
    sch = Schedule(elementwise())
    block = sch.get_block("B")
    i, _ = sch.get_loops(block)
    with pytest.raises(ScheduleError, match="decompose_reduction: block B has no init"):
        sch.decompose_reduction(block, i)
    sch = Schedule(matmul(4, 4, 4))
    sch2 = Schedule(elementwise())
    i2, _ = sch2.get_loops(sch2.get_block("C"))
    with pytest.raises(ScheduleError, match="is not a loop handle of this schedule"):
        sch.decompose_reduction(sch.get_block("C"), i2)


def test_decompose_inside_a_reduction_loop_is_refused():
    sch = Schedule(matmul(4, 4, 4))
    block = sch.get_block("C")
    _, _, k = sch.get_loops(block)
    _, ki = sch.split(k, factors=[2, 2])
    with pytest.raises(ScheduleError, match="loop k_1 is inside reduction loop k_0"):
        sch.decompose_reduction(block, ki)
