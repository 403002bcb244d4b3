"""`LowerCrossThreadReduction`: thread-bound reductions become shuffle trees (+ shared memory)."""

import numpy as np
import pytest

from unity import te
from unity.ir.diagnostics import DiagnosticError
from unity.schedule import Schedule
from unity.tir.functor import post_order_visit
from unity.tir.gpu_emulator import emulate
from unity.tir.interpreter import interpret
from unity.tir.transform.gpu import LowerCrossThreadReduction, lower_cuda
from unity.tir.transform.gpu.intrinsics import shfl_down_op


def _row_reduce(rows, cols, threads, combiner="sum"):
    x = te.placeholder((rows, cols), name="x")
    k = te.reduce_axis((0, cols), name="k")
    reducer = te.sum if combiner == "sum" else te.max
    y = te.compute((rows,), lambda i: reducer(x[i, k], axis=k), name="y")
    sch = Schedule(te.create_prim_func([x, y]))
    i, kk = sch.get_loops(sch.get_block("y"))
    sch.bind(i, "blockIdx.x")
    k0, k1 = sch.split(kk, [None, threads])
    sch.reorder(k1, k0)
    sch.bind(k1, "threadIdx.x")
    return sch.mod


def _shuffles(mod):
    found = []
    post_order_visit(mod["main_kernel0"].body,
                     lambda n: found.append(n.args[1].value) if getattr(n, "op", None) is shfl_down_op else None)
    return found


@pytest.mark.parametrize(("threads", "offsets"), [(16, [8, 4, 2, 1]), (32, [16, 8, 4, 2, 1]),
                                                  (128, [16, 8, 4, 2, 1, 2, 1])])
def test_sum_over_threads_matches_numpy(threads, offsets):
    mod = _row_reduce(3, 256, threads)
    lowered = lower_cuda(mod)
    assert _shuffles(lowered) == offsets  # per warp, then (128 threads) over the 4 warps
    x = np.random.default_rng(0).standard_normal((3, 256), dtype=np.float32)
    for run in (lambda y: emulate(lowered, x, y), lambda y: interpret(mod["main"], x, y)):
        y = np.zeros(3, np.float32)
        run(y)
        np.testing.assert_allclose(y, x.sum(1), rtol=1e-5, atol=1e-5)


def test_max_over_threads_matches_numpy():
    lowered = lower_cuda(_row_reduce(2, 64, 32, "max"))
    x = np.random.default_rng(1).standard_normal((2, 64), dtype=np.float32)
    y = np.zeros(2, np.float32)
    emulate(lowered, x, y)
    np.testing.assert_array_equal(y, x.max(1))


def test_nothing_to_do_without_thread_bound_reductions():
    mod = _row_reduce(2, 64, 32)
    plain = Schedule(te.create_prim_func(_placeholders())).mod
    assert LowerCrossThreadReduction()(plain) is plain
    assert LowerCrossThreadReduction()(mod) is not mod


def _placeholders():
    x = te.placeholder((4, 8), name="x")
    k = te.reduce_axis((0, 8), name="k")
    return [x, te.compute((4,), lambda i: te.sum(x[i, k], axis=k), name="y")]


@pytest.mark.ill_formed
def test_thread_count_that_is_no_power_of_two_is_an_error():
    with pytest.raises(DiagnosticError, match="48 threads on threadIdx.x; use a power of two"):
        lower_cuda(_row_reduce(2, 96, 48))


def test_a_warp_per_row_with_a_ragged_last_block_writes_only_its_rows():
    """A GEMV with a warp per output, 8 outputs per block, 100 outputs: the last block's
    extra warps reduce nothing and must not write (their rows do not exist)."""
    from unity import topi

    x = te.placeholder((1, 512), name="x")
    w = te.placeholder((100, 512), name="W")
    sch = Schedule(te.create_prim_func([x, w, topi.nn.dense(x, w)]))
    i, j, k = sch.get_loops(sch.get_block("T_dense"))
    jo, ji = sch.split(j, [None, 8])
    ko, ki = sch.split(k, [None, 32])
    sch.reorder(i, jo, ji, ki, ko)
    sch.bind(jo, "blockIdx.x")
    sch.bind(ji, "threadIdx.y")
    sch.bind(ki, "threadIdx.x")
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((1, 512), dtype=np.float32), rng.standard_normal((100, 512), dtype=np.float32)
    out = np.zeros((1, 100), np.float32)
    emulate(lower_cuda(sch.mod), xv, wv, out)  # raised an out-of-bounds write of row 100
    np.testing.assert_allclose(out, xv @ wv.T, rtol=1e-4, atol=1e-4)
