"""merge_row_loops: parallel loops over the same rows become one loop when each stage
touches only its own row of what the stages write."""

from __future__ import annotations

import numpy as np
import pytest
from default_workloads import softmax

import unity
from unity import te, tir
from unity.schedule.default import RuleContext, schedule_primfunc
from unity.schedule.default.row_fusion import merge_row_loops
from unity.schedule.tree import walk
from unity.tir.stmt import For, ForKind

AVX2 = RuleContext(lanes=8, num_cores=2)


def _parallel_loops(func: tir.PrimFunc) -> int:
    return sum(isinstance(s, For) and s.kind is ForKind.PARALLEL for s in walk(func.body))


def _run(func: tir.PrimFunc, *inputs: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(out_shape, "float32")
    unity.build(func)["main"](*inputs, out)
    return out


@pytest.mark.parametrize("symbolic", [False, True])
def test_softmax_stages_run_in_one_parallel_loop_over_rows(symbolic: bool) -> None:
    """max, exp, sum and the division: four stages (six loops with the vector partial
    results), one parallel loop over the rows after the merge; the values do not change."""
    shape = (te.var("b", "int64"), 6, te.var("s", "int64"), 96) if symbolic else (2, 6, 64, 96)
    scheduled = schedule_primfunc(softmax(shape), AVX2)
    assert _parallel_loops(scheduled) == 1
    x = np.random.default_rng(0).standard_normal((2, 6, 64, 96)).astype("float32")
    want = np.exp(x - x.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    np.testing.assert_allclose(_run(scheduled, x, out_shape=x.shape), want, rtol=1e-5, atol=1e-6)


def test_a_stage_reading_another_row_keeps_its_own_loop() -> None:
    """``B[i] = exp(x)[n - 1 - i]`` (each stage's rows in parallel, by hand) reads the row
    that another iteration writes: the loops stay apart, and the result is right."""
    from unity.schedule import Schedule

    x = te.placeholder((64, 128), name="x")
    e = te.compute((64, 128), lambda i, j: te.exp(x[i, j]), name="e")
    flipped = te.compute((64, 128), lambda i, j: e[63 - i, j] * 2.0, name="flipped")
    sch = Schedule(te.create_prim_func([x, flipped]))
    for name in ("e", "flipped"):
        sch.parallel(sch.get_loops(sch.get_block(name))[0])
    scheduled = sch.mod["main"]
    assert _parallel_loops(scheduled) == 2
    assert merge_row_loops(scheduled) is scheduled
    xs = np.random.default_rng(1).standard_normal((64, 128)).astype("float32")
    got = _run(scheduled, xs, out_shape=(64, 128))
    np.testing.assert_allclose(got, np.exp(xs)[::-1] * 2, rtol=1e-5)


def test_stages_on_their_own_rows_merge_when_scheduled_by_hand() -> None:
    """The same two stages reading their own row merge into one loop."""
    from unity.schedule import Schedule

    x = te.placeholder((64, 128), name="x")
    e = te.compute((64, 128), lambda i, j: te.exp(x[i, j]), name="e")
    doubled = te.compute((64, 128), lambda i, j: e[i, j] * 2.0, name="doubled")
    sch = Schedule(te.create_prim_func([x, doubled]))
    for name in ("e", "doubled"):
        sch.parallel(sch.get_loops(sch.get_block(name))[0])
    merged = merge_row_loops(sch.mod["main"])
    assert _parallel_loops(merged) == 1
    xs = np.random.default_rng(2).standard_normal((64, 128)).astype("float32")
    np.testing.assert_allclose(_run(merged, xs, out_shape=(64, 128)), np.exp(xs) * 2, rtol=1e-5)
