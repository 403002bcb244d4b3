"""`split`: IR after, numbers unchanged, guard for non-dividing factors, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise

from unity import tir
from unity.schedule import Schedule, ScheduleError


def test_split_with_inferred_outer_factor():
    func = elementwise(8, 6)
    sch = Schedule(func)
    i, _ = sch.get_loops(sch.get_block("B"))
    io, ii = sch.split(i, factors=[None, 4])
    assert [sch.get(lp).extent.value for lp in (io, ii)] == [2, 4]
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            B = T.alloc_buffer((8, 6), "float32")
            for i_0, i_1, j in T.grid(2, 4, 6):
                with T.block("B"):
                    v_i = T.axis.spatial(8, i_0 * 4 + i_1)
                    v_j = T.axis.spatial(6, j)
                    T.reads(A[v_i, v_j])
                    T.writes(B[v_i, v_j])
                    B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
            for i, j_1 in T.grid(8, 6):
                with T.block("C"):
                    v_i_1, v_j_1 = T.axis.remap("SS", [i, j_1])
                    T.reads(B[v_i_1, v_j_1])
                    T.writes(C[v_i_1, v_j_1])
                    C[v_i_1, v_j_1] = B[v_i_1, v_j_1] + T.float32(1.0)
    """,
    )
    check_same_result(func, sch.mod)


def test_split_that_does_not_divide_adds_a_guard():
    func = elementwise(10, 6)
    sch = Schedule(func)
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[None, 4])
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((10, 6), "float32"), C: T.Buffer((10, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            B = T.alloc_buffer((10, 6), "float32")
            for i_0, i_1, j in T.grid(3, 4, 6):
                with T.block("B"):
                    v_i = T.axis.spatial(10, i_0 * 4 + i_1)
                    v_j = T.axis.spatial(6, j)
                    T.where(i_0 * 4 + i_1 < 10)
                    T.reads(A[v_i, v_j])
                    T.writes(B[v_i, v_j])
                    B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
            for i, j_1 in T.grid(10, 6):
                with T.block("C"):
                    v_i_1, v_j_1 = T.axis.remap("SS", [i, j_1])
                    T.reads(B[v_i_1, v_j_1])
                    T.writes(C[v_i_1, v_j_1])
                    C[v_i_1, v_j_1] = B[v_i_1, v_j_1] + T.float32(1.0)
    """,
    )
    check_same_result(func, sch.mod)


def test_split_into_three_levels():
    func = elementwise(8, 6)
    sch = Schedule(func)
    _, j = sch.get_loops(sch.get_block("C"))
    loops = sch.split(j, factors=[1, None, 2])
    assert [sch.get(lp).extent.value for lp in loops] == [1, 3, 2]
    check_same_result(func, sch.mod)


def test_split_of_a_symbolic_extent_keeps_a_guard():
    n = tir.SizeVar("n")
    A = tir.decl_buffer((n,), "float32", "A")
    i, vi = tir.Var("i"), tir.Var("vi")
    block = tir.Block(
        (tir.IterVar(vi, tir.Range.from_min_extent(0, n)),),
        (),
        (),
        "B",
        tir.BufferStore(A, tir.const(1.0), (vi,)),
    )
    body = tir.For(
        i, tir.const(0), n, tir.ForKind.SERIAL, tir.BlockRealize((i,), tir.const(True), block)
    )
    sch = Schedule(tir.PrimFunc((A,), body))
    _, ii = sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[None, 8])
    realize = sch.get(ii).body
    assert isinstance(realize.predicate, tir.LT) and realize.predicate.b is n
    assert sch.get(ii).extent.value == 8


def test_split_errors_leave_the_schedule_unchanged():
    sch = Schedule(elementwise(8, 6))
    i, _ = sch.get_loops(sch.get_block("B"))
    before = sch.mod
    with pytest.raises(
        ScheduleError, match=r"split: the factors \[2, 3\] multiply to 6 < the loop extent 8"
    ):
        sch.split(i, factors=[2, 3])
    with pytest.raises(ScheduleError, match="at most one factor may be None"):
        sch.split(i, factors=[None, None])
    with pytest.raises(ScheduleError, match="factor 0 is not positive"):
        sch.split(i, factors=[None, 0])
    assert sch.mod is before
    assert len(sch.trace.insts) == 2  # get_block, get_loops
