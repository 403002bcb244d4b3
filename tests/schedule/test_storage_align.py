"""`storage_align`: IR after, numbers unchanged, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise

from unity.schedule import Schedule, ScheduleError


def test_storage_align_annotates_the_block():
    func = elementwise(8, 6)
    sch = Schedule(func)
    sch.storage_align(sch.get_block("B"), 0, axis=0, factor=8, offset=1)
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            B = T.alloc_buffer((8, 6), "float32")
            for i, j in T.grid(8, 6):
                with T.block("B"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    T.reads(A[v_i, v_j])
                    T.writes(B[v_i, v_j])
                    T.block_attr({"buffer_dim_align": ((0, 0, 8, 1),)})
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


def test_storage_align_errors():
    sch = Schedule(elementwise())
    before = sch.mod
    with pytest.raises(ScheduleError, match="storage_align: C is a parameter of the function"):
        sch.storage_align(sch.get_block("C"), 0, 0, 8, 1)
    with pytest.raises(ScheduleError, match="axis 2 is out of range for B of rank 2"):
        sch.storage_align(sch.get_block("B"), 0, 2, 8, 1)
    with pytest.raises(ScheduleError, match="factor 0 is not positive"):
        sch.storage_align(sch.get_block("B"), 0, 0, 0, 1)
    assert sch.mod is before


def test_lowering_pads_the_aligned_stride():
    """The CPU lowering strides B's rows of 6 by 9 (the next 8 * k + 1)."""
    from unity.tir.transform.pipeline import lower

    func = elementwise(8, 6)
    sch = Schedule(func)
    sch.storage_align(sch.get_block("B"), 0, axis=0, factor=8, offset=1)
    text = lower(sch.mod)["main"].script()
    assert 'T.allocate_buffer((72,), "float32")' in text and "B[i * 9 + j]" in text
    assert "buffer_dim_align" not in text  # consumed
    check_same_result(func, sch.mod)


def test_gpu_lowering_pads_a_shared_tile():
    """The GPU lowering strides a 16 x 16 shared tile's rows by 17; same numbers."""
    import sys
    from pathlib import Path

    import numpy as np

    sys.path.insert(0, str(Path(__file__).parents[1] / "tir" / "gpu"))
    from gpu_workloads import matmul

    from unity.tir.gpu_emulator import emulate
    from unity.tir.transform.gpu import lower_cuda

    work = matmul(64, 64, 64)
    work.sch.storage_align(work.sch.get_block("A_shared"), 0, axis=0, factor=16, offset=1)
    lowered = lower_cuda(work.sch.mod).script()
    assert 'T.allocate_buffer((272,), "float32", scope="shared")' in lowered  # 16 rows of 17
    assert "A_shared[threadIdx_y * 17 + threadIdx_x]" in lowered
    args = work.fresh_args()
    emulate(lower_cuda(work.sch.mod), *args)
    work.check(args)
    assert np.any(args[2])
