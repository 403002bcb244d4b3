"""`blockize`: IR after, numbers unchanged, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise, matmul

from unity.schedule import Schedule, ScheduleError


def test_blockize_the_inner_loop():
    func = elementwise(8, 6)
    sch = Schedule(func)
    _, j = sch.get_loops(sch.get_block("B"))
    outer = sch.blockize(j)
    assert sch.get(outer).name_hint == "B_o"
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            B = T.alloc_buffer((8, 6), "float32")
            for i in T.serial(8):
                with T.block("B_o"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A[vi, 0:6])
                    T.writes(B[vi, 0:6])
                    for j in T.serial(6):
                        with T.block("B"):
                            v_i = T.axis.spatial(8, vi)
                            v_j = T.axis.spatial(6, j)
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


def test_blockize_a_matmul_tile():
    func = matmul(8, 8, 8)
    sch = Schedule(func)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    io, ii = sch.split(i, factors=[None, 4])
    jo, ji = sch.split(j, factors=[None, 4])
    ko, ki = sch.split(k, factors=[None, 4])
    sch.reorder(io, jo, ko, ii, ji, ki)
    outer = sch.blockize(ii)
    kinds = [iv.iter_type.value for iv in sch.get(outer).iter_vars]
    assert kinds == ["spatial", "spatial", "reduce"]
    assert len(sch.get_loops(block)) == 3  # the loops inside the new block
    check_same_result(func, sch.mod)


def test_blockize_errors():
    sch = Schedule(matmul(4, 4, 4))
    _, j, k = sch.get_loops(sch.get_block("C"))
    f = sch.fuse(j, k)
    _, inner = sch.split(f, factors=[None, 4])
    msg = "blockize: loop j_k_fused_0 feeds both spatial and reduction iteration variables"
    with pytest.raises(ScheduleError, match=msg):
        sch.blockize(inner)
    sch = Schedule(elementwise())
    loops = sch.get_loops(sch.get_block("B"))
    sch2 = Schedule(matmul(4, 4, 4))
    with pytest.raises(ScheduleError, match="is not a loop handle of this schedule"):
        sch2.blockize(loops[0])


def test_inline_into_a_blockized_consumer_updates_the_outer_regions():
    func = elementwise(8, 6)
    sch = Schedule(func)
    _, j = sch.get_loops(sch.get_block("C"))
    outer = sch.blockize(j)
    sch.compute_inline(sch.get_block("B"))
    reads = sch.get(outer).reads
    assert [r.buffer.name for r in reads] == ["A"]
    assert [(r.min.script(), r.extent.script()) for r in reads[0].region] == [
        ("vi", "1"),
        ("0", "6"),
    ]
    check_same_result(func, sch.mod)
