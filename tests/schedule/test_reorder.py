"""`reorder`: IR after, numbers unchanged, errors."""

import numpy as np
import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise, matmul

from unity.schedule import Schedule, ScheduleError
from unity.script import tir as T
from unity.tir.interpreter import interpret


def test_reorder_reduction_loop_outermost():
    func = matmul(4, 4, 4)
    sch = Schedule(func)
    i, _, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(k, i)
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
            T.func_attr({"tir.noalias": True})
            for k, j, i in T.grid(4, 4, 4):
                with T.block("C"):
                    v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                    T.reads(A[v_i, v_k], B[v_k, v_j])
                    T.writes(C[v_i, v_j])
                    with T.init():
                        C[v_i, v_j] = T.float32(0.0)
                    C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
    """,
    )
    check_same_result(func, sch.mod)


def test_reorder_after_split_tiles_the_loops():
    func = matmul(8, 8, 4)
    sch = Schedule(func)
    i, j, k = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, factors=[None, 4])
    jo, ji = sch.split(j, factors=[None, 2])
    sch.reorder(io, jo, k, ii, ji)
    names = [sch.get(lp).loop_var.name for lp in sch.get_loops(sch.get_block("C"))]
    assert names == ["i_0", "j_0", "k", "i_1", "j_1"]
    check_same_result(func, sch.mod)


def test_reorder_rejects_loops_of_different_nests():
    sch = Schedule(elementwise())
    i, _ = sch.get_loops(sch.get_block("B"))
    i2, _ = sch.get_loops(sch.get_block("C"))
    before = sch.mod
    with pytest.raises(
        ScheduleError, match="reorder: loop i is not on the same loop nest as the others"
    ):
        sch.reorder(i2, i)
    with pytest.raises(ScheduleError, match="more than once"):
        sch.reorder(i, i)
    assert sch.mod is before


def test_reorder_needs_affine_bindings():
    @T.prim_func
    def square_index(A: T.Buffer((16,), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("A"):
                vi = T.axis.spatial(16, i * j)
                A[vi] = T.float32(1)

    sch = Schedule(square_index)
    i, j = sch.get_loops(sch.get_block("A"))
    msg = "reorder: block A binds vi to i \\* j, which is not an affine function of the loops"
    with pytest.raises(ScheduleError, match=msg):
        sch.reorder(j, i)


def test_reorder_takes_rows_of_a_symbolic_width():
    """``i * w + j``, `w` a size and not a reordered loop, is affine in the loops (the
    tiles of a Winograd transform over a symbolic image size are bound so)."""

    @T.prim_func
    def rows(a: T.handle, h: T.int64, w: T.int64):
        A = T.match_buffer(a, (h * w,), "int64")
        for i, j in T.grid(h, w):
            with T.block("A"):
                v = T.axis.spatial(h * w, T.Cast("int64", i) * w + j)
                A[v] = v

    sch = Schedule(rows)
    i, j = sch.get_loops(sch.get_block("A"))
    sch.reorder(j, i)
    assert [lp.loop_var.name for lp in (sch.get(x) for x in sch.get_loops(sch.get_block("A")))] == ["j", "i"]
    out = np.zeros(6, "int64")
    interpret(sch.mod, out, 2, 3)
    np.testing.assert_array_equal(out, np.arange(6))
