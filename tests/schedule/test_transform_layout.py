"""`transform_layout`: IR after, numbers unchanged, trace printing, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise, matmul

from unity.ir.structural import assert_structural_equal
from unity.schedule import Schedule, ScheduleError


def test_pack_a_cached_matrix_into_panels():
    func = matmul(4, 8, 2)
    sch = Schedule(func)
    packed = sch.cache_read(sch.get_block("C"), 1, "global")
    sch.transform_layout(packed, ("write", 0), lambda k, j: (j // 4, k, j % 4))
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((4, 2), "float32"), B: T.Buffer((2, 8), "float32"), C: T.Buffer((4, 8), "float32")):
            T.func_attr({"tir.noalias": True})
            B_global = T.alloc_buffer((2, 2, 4), "float32")
            for ax0, ax1 in T.grid(2, 8):
                with T.block("B_global"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(B[v0, v1])
                    T.writes(B_global[v1 // 4, v0, v1 % 4])
                    B_global[v1 // 4, v0, v1 % 4] = B[v0, v1]
            for i, j, k in T.grid(4, 8, 2):
                with T.block("C"):
                    v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                    T.reads(A[v_i, v_k], B_global[v_j // 4, v_k, v_j % 4])
                    T.writes(C[v_i, v_j])
                    with T.init():
                        C[v_i, v_j] = T.float32(0.0)
                    C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B_global[v_j // 4, v_k, v_j % 4]
    """,
    )
    check_same_result(func, sch.mod)
    assert "index_map=lambda k, j: (j // 4, k, j % 4))" in sch.trace.show()
    again = Schedule(func)
    exec(sch.trace.show(), {"sch": again})  # noqa: S102 - the printed trace is the API
    assert_structural_equal(again.mod, sch.mod)


def test_transpose_an_intermediate_by_name():
    func = elementwise(8, 6)
    sch = Schedule(func)
    sch.transform_layout(sch.get_block("C"), "B", lambda i, j: (j, i))
    assert [d.value for d in sch.mod["main"].body.block.alloc_buffers[0].shape] == [6, 8]
    check_same_result(func, sch.mod)


def test_transform_layout_errors():
    sch = Schedule(elementwise())
    before = sch.mod
    with pytest.raises(ScheduleError, match="transform_layout: A is a parameter of the function"):
        sch.transform_layout(sch.get_block("B"), ("read", 0), lambda i, j: (j, i))
    with pytest.raises(ScheduleError, match="the index map takes 1 indices; B has 2"):
        sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i: (i,))
    with pytest.raises(ScheduleError, match="cannot bound the new index"):
        sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i - 1, j))
    assert sch.mod is before


def test_a_symbolic_dimension_may_move_as_it_is():
    import numpy as np

    from unity import te, tir
    from unity.tir.interpreter import interpret

    n = tir.SizeVar("n", "int64")
    a = te.placeholder((n, 4), name="A")
    b = te.compute((n, 4), lambda i, j: a[i, j] * 2.0, name="B")
    c = te.compute((n, 4), lambda i, j: b[i, j] + 1.0, name="C")
    sch = Schedule(te.create_prim_func([a, c]))
    sch.transform_layout(sch.get_block("B"), "B", lambda i, j: (j, i))  # (n, 4) -> (4, n)
    assert 'B = T.alloc_buffer((4, n), "float32")' in sch.mod.script()
    av = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros((3, 4), np.float32)
    interpret(sch.mod["main"], av, out)
    np.testing.assert_array_equal(out, av * 2 + 1)
    with pytest.raises(ScheduleError, match="only its symbolic dimensions moved as they are"):
        sch.transform_layout(sch.get_block("B"), "B", lambda i, j: (i, j // 2, j % 2))
