"""`cache_read` / `cache_write` / `set_scope`: IR after, numbers unchanged, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise, matmul

from unity.schedule import Schedule, ScheduleError


def test_cache_read_of_an_input():
    func = elementwise(8, 6)
    sch = Schedule(func)
    cache = sch.cache_read(sch.get_block("B"), 0, "shared")
    assert sch.get(cache).name_hint == "A_shared"
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            B = T.alloc_buffer((8, 6), "float32")
            A_shared = T.alloc_buffer((8, 6), "float32", scope="shared")
            for ax0, ax1 in T.grid(8, 6):
                with T.block("A_shared"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(A[v0, v1])
                    T.writes(A_shared[v0, v1])
                    A_shared[v0, v1] = A[v0, v1]
            for i, j in T.grid(8, 6):
                with T.block("B"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    T.reads(A_shared[v_i, v_j])
                    T.writes(B[v_i, v_j])
                    B[v_i, v_j] = A_shared[v_i, v_j] * T.float32(2.0)
            for i_1, j_1 in T.grid(8, 6):
                with T.block("C"):
                    v_i_1, v_j_1 = T.axis.remap("SS", [i_1, j_1])
                    T.reads(B[v_i_1, v_j_1])
                    T.writes(C[v_i_1, v_j_1])
                    C[v_i_1, v_j_1] = B[v_i_1, v_j_1] + T.float32(1.0)
    """,
    )
    check_same_result(func, sch.mod)


def test_cache_read_of_an_intermediate_goes_after_its_producer():
    func = elementwise(8, 6)
    sch = Schedule(func)
    sch.cache_read(sch.get_block("C"), 0, "local")
    root = sch.get_block("root")
    assert [sch.get(b).name_hint for b in sch.get_child_blocks(root)] == ["B", "B_local", "C"]
    check_same_result(func, sch.mod)


def test_cache_write_of_a_reduction():
    func = matmul(4, 4, 4)
    sch = Schedule(func)
    sch.cache_write(sch.get_block("C"), 0, "local")
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
            T.func_attr({"tir.noalias": True})
            C_local = T.alloc_buffer((4, 4), "float32", scope="local")
            for i, j, k in T.grid(4, 4, 4):
                with T.block("C"):
                    v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                    T.reads(A[v_i, v_k], B[v_k, v_j])
                    T.writes(C_local[v_i, v_j])
                    with T.init():
                        C_local[v_i, v_j] = T.float32(0.0)
                    C_local[v_i, v_j] = C_local[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
            for ax0, ax1 in T.grid(4, 4):
                with T.block("C_local"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(C_local[v0, v1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_local[v0, v1]
    """,
    )
    check_same_result(func, sch.mod)


def test_set_scope_of_an_intermediate():
    func = elementwise(8, 6)
    sch = Schedule(func)
    sch.set_scope(sch.get_block("B"), 0, "shared")
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            B = T.alloc_buffer((8, 6), "float32", scope="shared")
            for i, j in T.grid(8, 6):
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


def test_cache_and_scope_errors():
    sch = Schedule(elementwise())
    before = sch.mod
    with pytest.raises(ScheduleError, match="cache_read: unknown storage scope 'texture'"):
        sch.cache_read(sch.get_block("B"), 0, "texture")
    with pytest.raises(
        ScheduleError, match="cache_read: block B reads 1 buffers; index 3 is out of range"
    ):
        sch.cache_read(sch.get_block("B"), 3, "local")
    with pytest.raises(
        ScheduleError, match="cache_write: block C writes 1 buffers; index 1 is out of range"
    ):
        sch.cache_write(sch.get_block("C"), 1, "local")
    with pytest.raises(ScheduleError, match="set_scope: C is a parameter of the function"):
        sch.set_scope(sch.get_block("C"), 0, "shared")
    assert sch.mod is before
