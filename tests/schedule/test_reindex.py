"""`reindex`: IR after, numbers unchanged (a conv brought to GEMM form), errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, conv2d, elementwise

from unity import te, topi
from unity.schedule import Schedule, ScheduleError


def _gathered():
    a = te.placeholder((4, 6), name="A")
    b = te.compute((24,), lambda i: a[i // 6, i % 6] * 2.0, name="B")
    return te.create_prim_func([a, b])


def test_read_and_write_become_points_of_the_block_variables():
    func = _gathered()
    sch = Schedule(func)
    sch.reindex(sch.get_block("B"), ("read", 0))
    copy = sch.reindex(sch.get_block("B"), ("write", 0))
    assert sch.get(copy).name_hint == "B_reindex"
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((4, 6), "float32"), B: T.Buffer((24,), "float32")):
            T.func_attr({"tir.noalias": True})
            A_reindex = T.alloc_buffer((24,), "float32")
            B_reindex = T.alloc_buffer((24,), "float32")
            for ax0 in T.serial(24):
                with T.block("A_reindex"):
                    v0 = T.axis.spatial(24, ax0)
                    T.reads(A[v0 // 6, v0 % 6])
                    T.writes(A_reindex[v0])
                    A_reindex[v0] = A[v0 // 6, v0 % 6]
            for i in T.serial(24):
                with T.block("B"):
                    v_i = T.axis.spatial(24, i)
                    T.reads(A_reindex[v_i])
                    T.writes(B_reindex[v_i])
                    B_reindex[v_i] = A_reindex[v_i] * T.float32(2.0)
            for ax0_1 in T.serial(24):
                with T.block("B_reindex"):
                    v0_1 = T.axis.spatial(24, ax0_1)
                    T.reads(B_reindex[v0_1])
                    T.writes(B[v0_1])
                    B[v0_1] = B_reindex[v0_1]
        """,
    )
    check_same_result(func, sch.mod)


def test_a_conv_becomes_a_matmul_over_im2col_and_back():
    func = conv2d(n=2, ci=3, hw=6, co=4, kk=3)
    sch = Schedule(func)
    y = sch.get_block("Y")
    sch.transform_block_layout(y, lambda b, c, h, x, rc, ry, rx: (b * 16 + h * 4 + x, c, rc * 9 + ry * 3 + rx))
    sch.reindex(y, ("read", 0))
    sch.reindex(y, ("read", 1))
    sch.reindex(y, ("write", 0))
    blk = sch.get(y)
    assert [r.buffer.name for r in blk.reads] == ["X_reindex", "W_reindex"]
    assert [tuple(r.buffer.shape[d].value for d in range(2)) for r in blk.reads] == [(32, 27), (4, 27)]
    assert ("Y_reindex[v_b_v_h_v_x, v_c] = Y_reindex[v_b_v_h_v_x, v_c] + X_reindex[v_b_v_h_v_x, "
            "v_rc_v_ry_v_rx] * W_reindex[v_c, v_rc_v_ry_v_rx]") in sch.mod.script()
    check_same_result(func, sch.mod)
    sch.compute_inline(sch.get_block("X_reindex"))  # the staging can be undone
    check_same_result(func, sch.mod)


def test_a_padded_read_is_staged_with_its_guard():
    x = te.placeholder((1, 2, 5, 5), name="X")
    w = te.placeholder((3, 2, 3, 3), name="W")
    y = topi.nn.conv2d(x, w, strides=1, padding=1)
    func = te.create_prim_func([x, w, y])
    sch = Schedule(func)
    sch.compute_inline(sch.get_block("T_pad_data"))  # the conv now reads X through if_then_else
    sch.reindex(sch.get_block("T_conv2d"), ("read", 0))
    text = sch.mod.script()
    assert "X_reindex[v0, v1, v2, v3, v4, v5] = T.if_then_else(" in text
    assert "T.if_then_else" not in text.split('T.block("T_conv2d")')[1]
    check_same_result(func, sch.mod)


def test_errors_name_the_problem():
    sch = Schedule(elementwise())
    with pytest.raises(ScheduleError, match=r"\('read', i\) or \('write', i\)"):
        sch.reindex(sch.get_block("B"), "A")
    with pytest.raises(ScheduleError, match="reads 1 buffers; index 3 is out of range"):
        sch.reindex(sch.get_block("B"), ("read", 3))
    a = te.placeholder((8,), name="A")
    b = te.compute((4,), lambda i: a[i] + a[i + 4], name="B")
    sch = Schedule(te.create_prim_func([a, b]))
    with pytest.raises(ScheduleError, match="accesses A at 2 different points"):
        sch.reindex(sch.get_block("B"), ("read", 0))


def test_a_read_produced_inside_the_same_loop_nest_is_refused():
    sch = Schedule(elementwise())
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    with pytest.raises(ScheduleError, match="block B writes B inside the loop nest of its reader C"):
        sch.reindex(sch.get_block("C"), ("read", 0))
