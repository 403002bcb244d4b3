"""`compute_at` / `reverse_compute_at`: IR after, numbers unchanged, errors."""

import numpy as np
import pytest
from schedule_workloads import (
    assert_ir,
    check_same_result,
    conv2d,
    elementwise,
    matmul_relu,
    softmax,
)

from unity import te
from unity.schedule import Schedule, ScheduleError
from unity.script import tir as T
from unity.tir.interpreter import interpret


def test_compute_at_a_split_loop_computes_one_tile():
    func = elementwise(8, 6)
    sch = Schedule(func)
    i, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, factors=[None, 4])
    sch.compute_at(sch.get_block("B"), io)
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            B = T.alloc_buffer((8, 6), "float32")
            for i_0 in T.serial(2):
                for ax0, ax1 in T.grid(4, 6):
                    with T.block("B"):
                        v_i = T.axis.spatial(8, i_0 * 4 + ax0)
                        v_j = T.axis.spatial(6, ax1)
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_i, v_j])
                        B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
                for i_1, j in T.grid(4, 6):
                    with T.block("C"):
                        v_i_1 = T.axis.spatial(8, i_0 * 4 + i_1)
                        v_j_1 = T.axis.spatial(6, j)
                        T.reads(B[v_i_1, v_j_1])
                        T.writes(C[v_i_1, v_j_1])
                        C[v_i_1, v_j_1] = B[v_i_1, v_j_1] + T.float32(1.0)
    """,
    )
    check_same_result(func, sch.mod)


def test_compute_at_with_a_sliding_window():
    a = te.placeholder((10,), name="A")
    b = te.compute((10,), lambda i: a[i] * 2.0, name="B")
    c = te.compute((8,), lambda i: b[i] + b[i + 2], name="C")
    func = te.create_prim_func([a, c])
    sch = Schedule(func)
    (i,) = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, factors=[None, 4])
    sch.compute_at(sch.get_block("B"), io)
    (_, ax0) = sch.get_loops(sch.get_block("B"))
    assert sch.get(ax0).extent.value == 6  # 4 outputs need 6 inputs
    check_same_result(func, sch.mod)


def test_compute_at_a_reduction_producer_and_a_softmax_stage():
    func = softmax()
    sch = Schedule(func)
    i, _ = sch.get_loops(sch.get_block("E"))
    sch.compute_at(sch.get_block("M"), i)
    check_same_result(func, sch.mod)


def test_reverse_compute_at_an_epilogue():
    func = matmul_relu()
    sch = Schedule(func)
    _, j, _ = sch.get_loops(sch.get_block("C"))
    sch.reverse_compute_at(sch.get_block("D"), j)
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 8), "float32"), D: T.Buffer((8, 8), "float32")):
            T.func_attr({"tir.noalias": True})
            C = T.alloc_buffer((8, 8), "float32")
            for i, j in T.grid(8, 8):
                for k in T.serial(4):
                    with T.block("C"):
                        v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                        T.reads(A[v_i, v_k], B[v_k, v_j])
                        T.writes(C[v_i, v_j])
                        with T.init():
                            C[v_i, v_j] = T.float32(0.0)
                        C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
                with T.block("D"):
                    v_i_1, v_j_1 = T.axis.remap("SS", [i, j])
                    T.reads(C[v_i_1, v_j_1])
                    T.writes(D[v_i_1, v_j_1])
                    D[v_i_1, v_j_1] = T.max(C[v_i_1, v_j_1], T.float32(0.0))
    """,
    )
    check_same_result(func, sch.mod)


def test_compute_at_a_conv_input_cache_takes_the_window():
    func = conv2d()
    sch = Schedule(func)
    cache = sch.cache_read(sch.get_block("Y"), 0, "local")
    _, _, h, _, _, _, _ = sch.get_loops(sch.get_block("Y"))
    sch.compute_at(cache, h)
    extents = [sch.get(lp).extent.value for lp in sch.get_loops(cache)[3:]]
    assert extents == [2, 3, 6]  # channels, the 3 rows of the window, the full width
    check_same_result(func, sch.mod)


def test_compute_at_errors_leave_the_schedule_unchanged():
    sch = Schedule(softmax())
    before = sch.mod
    i, _ = sch.get_loops(sch.get_block("S"))
    msg = "compute_at: consumer O of block E is not under loop i\n"
    with pytest.raises(ScheduleError, match=msg):
        sch.compute_at(sch.get_block("E"), i)
    sch = Schedule(matmul_relu())
    _, _, k = sch.get_loops(sch.get_block("C"))
    msg = r"reverse_compute_at: loop k \(or a loop above it\) is a reduction loop of producer C"
    with pytest.raises(ScheduleError, match=msg):
        sch.reverse_compute_at(sch.get_block("D"), k)
    i_c, _, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match="compute_at: block D has no consumer"):
        sch.compute_at(sch.get_block("D"), i_c)
    assert sch.mod is not before


def test_compute_at_a_reduction_into_its_epilogue_row_loop():
    func = matmul_relu()
    sch = Schedule(func)
    i_d, _ = sch.get_loops(sch.get_block("D"))
    sch.compute_at(sch.get_block("C"), i_d)
    assert [sch.get(lp).extent.value for lp in sch.get_loops(sch.get_block("C"))] == [8, 8, 4]
    check_same_result(func, sch.mod)


def test_compute_at_a_symbolic_split_keeps_the_guards():
    n = te.var("n")
    a = te.placeholder((n, 4), name="A")
    b = te.compute((n, 4), lambda i, j: a[i, j] * 2.0, name="B")
    c = te.compute((n, 4), lambda i, j: b[i, j] + 1.0, name="C")
    func = te.create_prim_func([a, c])
    sch = Schedule(func)
    i, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, factors=[None, 4])
    sch.compute_at(sch.get_block("B"), io)
    assert "n" in sch.get(io).extent.script()  # ceil(n / 4) tiles
    for rows in (1, 8, 10):  # 4 divides 8, not 1 or 10
        x = np.random.default_rng(rows).standard_normal((rows, 4)).astype("float32")
        out = np.zeros_like(x)
        interpret(sch.mod["main"], x, out)
        np.testing.assert_allclose(out, x * 2 + 1, rtol=1e-6)


def _row_max_then_shift(n: object) -> object:
    """`B[i, j] = A[i, j] - max_k A[i, k]` on rows of length `n`."""
    a = te.placeholder((4, n), name="A")
    k = te.reduce_axis((0, n), name="k")
    m = te.compute((4,), lambda i: te.max(a[i, k], axis=k), name="M")
    b = te.compute((4, n), lambda i, j: a[i, j] - m[i], name="B")
    return te.create_prim_func([a, b])


@pytest.mark.parametrize("n", [13, 16, "symbolic"])
def test_compute_at_keeps_the_guard_of_a_moved_blocks_own_split(n):
    # The row maximum, split by 8 (a guard `k_0 * 8 + k_1 < n` unless 8 divides n) and
    # factored into 8 lanes, then moved under the consumer's row loop: the guard must move
    # along, or the last vector of each row reads past its end (the next row's values).
    func = _row_max_then_shift(te.var("n") if n == "symbolic" else n)
    sch = Schedule(func)
    _, k1 = sch.split(sch.get_loops(sch.get_block("M"))[-1], [None, 8])
    rf = sch.rfactor(k1, factor_axis=1)
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.compute_at(sch.get_block("M"), i)
    sch.compute_at(rf, i)
    guarded = sch.get(sch.get_loops(rf)[-1]).body.predicate
    assert ("<" in guarded.script()) == (n != 16)
    for cols in (13, 16) if n == "symbolic" else (n,):
        x = np.random.default_rng(cols).standard_normal((4, cols)).astype("float32")
        x[:, -1] = 100.0 + np.arange(4)  # each row's maximum is its last element
        out = np.zeros_like(x)
        interpret(sch.mod["main"], x, out)
        np.testing.assert_allclose(out, x - x.max(1, keepdims=True), rtol=1e-6)


def test_compute_at_refuses_a_guard_over_loops_it_cannot_rebind():
    # A guard over the fused loop of two iteration variables has no single new value
    # to take: the move is refused, not done without the guard.
    func = _row_max_then_shift(13)
    sch = Schedule(func)
    i, k = sch.get_loops(sch.get_block("M"))
    fused = sch.fuse(i, k)
    sch.split(fused, [None, 8])
    before = sch.mod
    i_b, _ = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="predicate"):
        sch.compute_at(sch.get_block("M"), i_b)
    assert sch.mod is before


def test_compute_at_can_keep_unit_loops():
    func = matmul_relu()
    sch = Schedule(func)
    _, j, _ = sch.get_loops(sch.get_block("C"))
    sch.reverse_compute_at(sch.get_block("D"), j, preserve_unit_loops=True)
    extents = [sch.get(lp).extent.value for lp in sch.get_loops(sch.get_block("D"))]
    assert extents == [8, 8, 1, 1]
    check_same_result(func, sch.mod)


def test_reverse_compute_at_under_a_fused_loop_takes_one_tile():
    """The tile's indices use `f // 2` and `f % 2` of a fused outer loop: the epilogue
    still consumes just the tile (was: the whole output, in every iteration)."""
    func = matmul_relu()
    sch = Schedule(func)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 4])
    sch.reorder(i0, j0, i1, j1)
    f = sch.fuse(i0, j0)
    sch.reverse_compute_at(sch.get_block("D"), f)
    loops = sch.get_loops(sch.get_block("D"))
    assert [sch.get(lp).extent.value for lp in loops] == [4, 4, 4]  # f, then a 4x4 tile
    sch.parallel(f)  # each iteration writes its own tile: no race
    check_same_result(func, sch.mod)


def test_reverse_compute_at_refuses_a_tile_of_a_fused_row_loop():
    """A 1x1-conv-like tile over the fused pixels ``y * 7 + x`` split by 4 writes part of
    a row: the box around it spans whole rows, so the consumer would copy elements the
    tile has not computed (and, with the loop parallel, race with the next tile)."""
    func = matmul_relu(m=7, n=7, k=2)  # C[i, j], the epilogue D reads C
    sch = Schedule(func)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    p = sch.fuse(i, j)
    p0, _ = sch.split(p, [None, 4])
    with pytest.raises(ScheduleError, match=r"is not a box \(dimensions 0 and 1 both move with loop"):
        sch.reverse_compute_at(sch.get_block("D"), p0)
    check_same_result(func, sch.mod)  # the failed step left the schedule as it was


@T.prim_func
def _tiles_of_rows(a: T.handle, c: T.handle, h: T.int64, w: T.int64):
    A = T.match_buffer(a, (h * w,), "float32")
    C = T.match_buffer(c, (h * 4, w), "float32")
    B = T.alloc_buffer((h * w,), "float32")
    for p in T.serial(h * w):
        with T.block("B"):
            v = T.axis.spatial(h * w, p)
            B[v] = A[v] * T.float32(2)
    for y, x in T.grid(h * 4, w):
        with T.block("C"):
            vy = T.axis.spatial(h * 4, y)
            vx = T.axis.spatial(w, x)
            C[vy, vx] = B[vy // 4 * w + vx] + T.float32(1)


def test_compute_at_a_row_of_a_symbolic_width_computes_that_row():
    """The consumer reads ``B[y // 4 * w + x]`` (`w` a size): under the loop over rows
    of 4, the producer computes the one row of `w` they read, not all of `B` (a Winograd
    output transform over a symbolic image size read its tile rows so)."""
    sch = Schedule(_tiles_of_rows)
    y, _ = sch.get_loops(sch.get_block("C"))
    y0, _ = sch.split(y, [None, 4])
    sch.compute_at(sch.get_block("B"), y0)
    script = sch.mod["main"].script()
    assert "for ax0 in T.serial(w):" in script
    assert "v = T.axis.spatial(h * w, y_0 * w + ax0)" in script
    for h, w in ((1, 1), (2, 3), (3, 5)):
        a = np.arange(h * w, dtype="float32")
        c = np.zeros((h * 4, w), "float32")
        interpret(sch.mod, a, c, h, w)
        np.testing.assert_array_equal(c, np.repeat(a.reshape(h, w) * 2 + 1, 4, axis=0))
