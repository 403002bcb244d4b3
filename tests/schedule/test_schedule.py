"""The `Schedule` facade: mod, show, copy, and the user-story matmul schedule."""

import numpy as np
import pytest
from schedule_workloads import check_same_result, elementwise, run

from unity import te
from unity.ir.module import IRModule
from unity.schedule import Schedule
from unity.tir.stmt import ForKind


def test_schedule_of_a_module_does_not_change_the_module():
    func = elementwise()
    mod = IRModule({"main": func})
    sch = Schedule(mod)
    sch.compute_inline(sch.get_block("B"))
    assert mod["main"] is func
    assert sch.mod["main"] is not func


def test_copy_is_independent_and_keeps_handles():
    sch = Schedule(elementwise())
    i, _ = sch.get_loops(sch.get_block("B"))
    other = sch.copy()
    other.parallel(i)  # the handle works in the copy
    assert sch.get(i).kind is ForKind.SERIAL
    assert other.get(i).kind is ForKind.PARALLEL
    assert len(other.trace.insts) == len(sch.trace.insts) + 1


def test_show_prints_the_module(capsys):
    sch = Schedule(elementwise())
    sch.show()
    assert 'with T.block("B")' in capsys.readouterr().out


def test_user_story_matmul_schedule():
    """The hand schedule of USER-STORIES.md section 2, at a size the interpreter runs fast.

    How to schedule a matmul by hand: take the block, split `i` by 8 and `j` by 32,
    put the reduction loop between the tiles, vectorize the innermost loop,
    parallelize the outermost and move the init out of the reduction loop.
    """
    n = 64
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    func = te.create_prim_func([A, B, C])

    sch = Schedule(func)
    blk = sch.get_block("C")
    i, j, kk = sch.get_loops(blk)
    io, ii = sch.split(i, factors=[None, 8])
    jo, ji = sch.split(j, factors=[None, 32])
    sch.reorder(io, jo, kk, ii, ji)
    sch.vectorize(ji)
    sch.parallel(io)
    sch.decompose_reduction(blk, kk)
    assert "sch.decompose_reduction(block=b0, loop=l3)" in sch.trace.show()

    a, b, c = run(sch.mod)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    check_same_result(func, sch.mod)


def test_packed_and_cached_matmul_builds_for_llvm():
    """B packed into 32-wide panels, a local accumulator per 8x32 tile, written back per tile."""
    unity = pytest.importorskip("unity")
    n = 64
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = Schedule(te.create_prim_func([A, B, C]))
    blk = sch.get_block("C")
    packed = sch.cache_read(blk, 1, "global")
    sch.transform_layout(packed, ("write", 0), lambda k, j: (j // 32, k, j % 32))
    acc = sch.cache_write(blk, 0, "local")
    i, j, kk = sch.get_loops(blk)
    io, ii = sch.split(i, factors=[None, 8])
    jo, ji = sch.split(j, factors=[None, 32])
    sch.reorder(io, jo, kk, ii, ji)
    sch.reverse_compute_at(acc, jo)
    sch.vectorize(ji)
    sch.parallel(io)
    sch.decompose_reduction(blk, kk)

    lib = unity.build(sch.mod, target="llvm")
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    c = np.empty((n, n), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
