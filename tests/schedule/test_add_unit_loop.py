"""`add_unit_loop`: IR after, numbers unchanged, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise

from unity.schedule import Schedule, ScheduleError


def test_add_unit_loop_above_a_block():
    func = elementwise(8, 6)
    sch = Schedule(func)
    u = sch.add_unit_loop(sch.get_block("B"))
    assert sch.get(u).extent.value == 1
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            B = T.alloc_buffer((8, 6), "float32")
            for i, j, u in T.grid(8, 6, 1):
                with T.block("B"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    T.reads(A[v_i, v_j])
                    T.writes(B[v_i, v_j])
                    B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
            for i_1, j_1 in T.grid(8, 6):
                with T.block("C"):
                    v_i_1, v_j_1 = T.axis.remap("SS", [i_1, j_1])
                    T.reads(B[v_i_1, v_j_1])
                    T.writes(C[v_i_1, v_j_1])
                    C[v_i_1, v_j_1] = B[v_i_1, v_j_1] + T.float32(1.0)
    """,
    )
    check_same_result(func, sch.mod)


def test_add_unit_loop_above_a_loop():
    func = elementwise(8, 6)
    sch = Schedule(func)
    i, _ = sch.get_loops(sch.get_block("C"))
    u = sch.add_unit_loop(i)
    assert sch.get(u).body is sch.get(i)
    check_same_result(func, sch.mod)


def test_add_unit_loop_refuses_the_root_block():
    sch = Schedule(elementwise())
    before = sch.mod
    with pytest.raises(
        ScheduleError, match="add_unit_loop: cannot add a loop above the root block"
    ):
        sch.add_unit_loop(sch.get_block("root"))
    assert sch.mod is before
