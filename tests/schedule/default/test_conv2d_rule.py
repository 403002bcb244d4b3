"""The default conv2d rule: which loop the threads split, and its tiles' results."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from default_workloads import conv

import unity
from unity import tir
from unity.schedule.default import RuleContext, schedule_primfunc
from unity.schedule.tree import walk
from unity.tir.stmt import For, ForKind

AVX512 = RuleContext(lanes=16, num_cores=2)


def _parallel_extents(func: tir.PrimFunc) -> list[int]:
    return [
        int(s.extent.value) for s in walk(func.body)
        if isinstance(s, For) and s.kind is ForKind.PARALLEL
    ]  # fmt: skip


def _run(func: tir.PrimFunc) -> np.ndarray:
    rng = np.random.default_rng(0)
    args = [
        rng.standard_normal([int(d.value) for d in p.shape]).astype("float32")
        for p in func.buffer_params()
    ]
    unity.build(func)["main"](*args)
    return args[-1]


@pytest.mark.parametrize(
    ("knob", "extent"), [(None, 28), ("rows", 28), ("channels", 16)]
)  # fmt: skip
def test_parallel_knob_picks_rows_or_channel_blocks(knob: str | None, extent: int) -> None:
    # 1x1 16->64 at width 56 takes the whole-row tile (4 channels x 56 columns): by default
    # threads split the rows, so each keeps its input rows in cache over all channel blocks
    func = conv(1, 16, 28, 56, 64, 1)
    knobs = (("conv.parallel", knob),) if knob else ()
    scheduled = schedule_primfunc(func, replace(AVX512, knobs=knobs))
    assert _parallel_extents(scheduled) == [extent]
    expected = _run(schedule_primfunc(func, replace(AVX512, knobs=(("conv.variant", "channels"),))))
    np.testing.assert_allclose(_run(scheduled), expected, rtol=1e-5, atol=1e-5)
