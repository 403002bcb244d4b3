"""`fuse`: IR after, numbers unchanged, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise, matmul

from unity.schedule import Schedule, ScheduleError


def test_fuse_two_loops():
    func = elementwise(8, 6)
    sch = Schedule(func)
    i, j = sch.get_loops(sch.get_block("B"))
    fused = sch.fuse(i, j)
    assert sch.get(fused).extent.value == 48
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            B = T.alloc_buffer((8, 6), "float32")
            for i_j_fused in T.serial(48):
                with T.block("B"):
                    v_i = T.axis.spatial(8, i_j_fused // 6)
                    v_j = T.axis.spatial(6, i_j_fused % 6)
                    T.reads(A[v_i, v_j])
                    T.writes(B[v_i, v_j])
                    B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
            for i, j in T.grid(8, 6):
                with T.block("C"):
                    v_i_1, v_j_1 = T.axis.remap("SS", [i, j])
                    T.reads(B[v_i_1, v_j_1])
                    T.writes(C[v_i_1, v_j_1])
                    C[v_i_1, v_j_1] = B[v_i_1, v_j_1] + T.float32(1.0)
    """,
    )
    check_same_result(func, sch.mod)


def test_fuse_undoes_split():
    func = matmul(8, 4, 4)
    sch = Schedule(func)
    i, _, _ = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, factors=[2, 4])
    sch.fuse(io, ii)
    check_same_result(func, sch.mod)


def test_fuse_needs_directly_nested_loops():
    sch = Schedule(matmul(4, 4, 4))
    i, _, k = sch.get_loops(sch.get_block("C"))
    before = sch.mod
    with pytest.raises(
        ScheduleError, match="fuse: loop k is not the only statement directly in loop i"
    ):
        sch.fuse(i, k)
    assert sch.mod is before
