"""Default schedules of a depthwise conv and its padding (issue 9).

A padding's clamped loads would be gathers in a vector loop (slower than scalar), so the
injective rule leaves that loop scalar; a depthwise conv takes one channel x its whole
row as the register tile, and stays serial when small.
"""

from __future__ import annotations

import numpy as np
from default_workloads import add_broadcast, conv

import unity
from unity import tir
from unity.schedule.default import RuleContext, schedule_primfunc
from unity.schedule.tree import children, walk
from unity.tir.stmt import BlockRealize, For, ForKind

EAGER = RuleContext(lanes=16, num_cores=2, parallel_min_work=0)


def _loop_kinds_of(func: tir.PrimFunc, block_name: str) -> list[ForKind]:
    """Kinds of the loops enclosing the block named `block_name` (outermost first)."""

    def rec(stmt, loops: list[ForKind]) -> list[ForKind] | None:
        if isinstance(stmt, For):
            loops = [*loops, stmt.kind]
        if isinstance(stmt, BlockRealize) and stmt.block.name_hint == block_name:
            return loops
        for child in children(stmt):
            found = rec(child, loops)
            if found is not None:
                return found
        return None

    found = rec(func.body, [])
    assert found is not None, f"no block {block_name}"
    return found


def _run(func: tir.PrimFunc) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([int(d.value) for d in p.shape]).astype(p.dtype)
            for p in func.buffer_params()]  # fmt: skip
    args[-1][...] = 0
    expected = [a.copy() for a in args]
    tir.interpret(func, *expected)
    unity.build(schedule_primfunc(func, EAGER))["main"](*args)
    return args[-1], expected[-1]


def test_padding_loop_stays_scalar_but_elementwise_is_vectorized() -> None:
    depthwise = schedule_primfunc(conv(1, 8, 10, 10, 8, 3, pad=1, groups=8), EAGER)
    pad_kinds = _loop_kinds_of(depthwise, "T_pad_data")
    assert ForKind.VECTORIZED not in pad_kinds and ForKind.PARALLEL in pad_kinds
    add = add_broadcast((1, 8, 6, 6), (1, 8, 1, 1))
    kinds = {s.kind for s in walk(schedule_primfunc(add, EAGER).body) if isinstance(s, For)}
    assert ForKind.VECTORIZED in kinds


def test_depthwise_tile_is_a_whole_row_and_small_ones_stay_serial() -> None:
    func = conv(1, 16, 12, 12, 16, 3, pad=1, groups=16)
    serial = schedule_primfunc(func, RuleContext(lanes=16, num_cores=2))
    kinds = _loop_kinds_of(serial, "T_conv2d_update")
    assert ForKind.PARALLEL not in kinds and kinds[-1] == ForKind.VECTORIZED
    vec = [s for s in walk(serial.body) if isinstance(s, For) and s.kind == ForKind.VECTORIZED]
    assert 12 in {int(s.extent.value) for s in vec}
    got, expected = _run(func)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
