"""`rfactor`: IR after, numbers unchanged, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise, matmul, softmax

from unity import te
from unity.schedule import Schedule, ScheduleError


def test_rfactor_a_row_sum():
    a = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), name="k")
    s = te.compute((4,), lambda i: te.sum(a[i, k], axis=k), name="S")
    func = te.create_prim_func([a, s])
    sch = Schedule(func)
    _, kk = sch.get_loops(sch.get_block("S"))
    rf = sch.rfactor(kk, 0)
    assert sch.get(rf).name_hint == "S_rf"
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), S: T.Buffer((4,), "float32")):
            T.func_attr({"tir.noalias": True})
            S_rf = T.alloc_buffer((8, 4), "float32")
            for i, k in T.grid(4, 8):
                with T.block("S_rf"):
                    vk_rf, v_i = T.axis.remap("SS", [k, i])
                    T.reads(A[v_i, vk_rf])
                    T.writes(S_rf[vk_rf, v_i])
                    with T.init():
                        S_rf[vk_rf, v_i] = T.float32(0.0)
                    S_rf[vk_rf, v_i] = S_rf[vk_rf, v_i] + A[v_i, vk_rf]
            for ax0, ax1 in T.grid(4, 8):
                with T.block("S"):
                    v_i_1, vk = T.axis.remap("SR", [ax0, ax1])
                    T.reads(S_rf[vk, v_i_1])
                    T.writes(S[v_i_1])
                    with T.init():
                        S[v_i_1] = T.float32(0.0)
                    S[v_i_1] = S[v_i_1] + S_rf[vk, v_i_1]
    """,
    )
    check_same_result(func, sch.mod)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_rfactor_of_an_inner_split_makes_it_parallel(axis):
    func = matmul(4, 6, 8)
    sch = Schedule(func)
    _, _, k = sch.get_loops(sch.get_block("C"))
    _, ki = sch.split(k, factors=[None, 4])
    rf = sch.rfactor(ki, axis)
    _, _, ko, ki = sch.get_loops(rf)
    sch.reorder(ki, ko)
    sch.parallel(ki)  # a reduction loop before rfactor, data parallel now
    check_same_result(func, sch.mod)


def test_rfactor_of_max_and_sum_in_softmax():
    func = softmax(3, 8)
    sch = Schedule(func)
    _, k = sch.get_loops(sch.get_block("S"))
    sch.rfactor(k, 0)
    _, k = sch.get_loops(sch.get_block("M"))
    ko, _ = sch.split(k, factors=[2, 4])
    sch.rfactor(ko, 1)
    check_same_result(func, sch.mod)


def test_rfactor_errors():
    sch = Schedule(matmul(4, 4, 4))
    i, _, _ = sch.get_loops(sch.get_block("C"))
    before = sch.mod
    with pytest.raises(ScheduleError, match="rfactor: loop i feeds spatial iteration variable v_i"):
        sch.rfactor(i)
    sch = Schedule(elementwise())
    i, _ = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="block B is not a reduction of the form"):
        sch.rfactor(i)
    assert before is not None
