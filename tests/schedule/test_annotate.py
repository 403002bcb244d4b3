"""`annotate` / `unannotate`: IR after, numbers unchanged, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise

from unity.schedule import Schedule, ScheduleError


def test_annotate_a_loop_and_a_block():
    func = elementwise(8, 6)
    sch = Schedule(func)
    block = sch.get_block("B")
    i, _ = sch.get_loops(block)
    sch.annotate(i, "pragma_unroll", 4)
    sch.annotate(block, "meta", "x")
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            B = T.alloc_buffer((8, 6), "float32")
            for i in T.serial(8, annotations={"pragma_unroll": 4}):
                for j in T.serial(6):
                    with T.block("B"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_i, v_j])
                        T.block_attr({"meta": "x"})
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
    sch.unannotate(i, "pragma_unroll")
    sch.unannotate(block, "meta")
    assert dict(sch.get(i).annotations) == {} and dict(sch.get(block).annotations) == {}


def test_unannotate_a_missing_key():
    sch = Schedule(elementwise())
    i, _ = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match=r"unannotate: no annotation 'x' here \(it has: none\)"):
        sch.unannotate(i, "x")


def test_annotate_needs_a_string_key():
    sch = Schedule(elementwise())
    with pytest.raises(
        ScheduleError, match="annotate: the annotation key must be a string, not int"
    ):
        sch.annotate(sch.get_block("B"), 3, 1)
