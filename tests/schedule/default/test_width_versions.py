"""A depthwise conv over a symbolic image size: one version per range of output widths."""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import te, tir, topi
from unity.schedule.default import RuleContext, schedule_primfunc
from unity.schedule.default.width_versions import WIDTH_TILES, merge_versions, width_versions
from unity.schedule.tree import walk
from unity.tir.stmt import Allocate, For, ForKind, IfThenElse
from unity.tir.transform.pipeline import lower
from unity.topi.testing import conv2d_python

AVX512 = RuleContext(lanes=16, num_cores=2)


def _depthwise(c: int, k: int, stride: int) -> tir.PrimFunc:
    h, w = tir.SizeVar("h", "int32"), tir.SizeVar("w", "int32")
    x = te.placeholder((1, c, h, w), name="x")
    wt = te.placeholder((c, 1, k, k), name="wt")
    y = topi.nn.conv2d(x, wt, stride, k // 2, 1, c)
    return te.create_prim_func([x, wt, y])


def _vector_extents(stmt: object) -> set[int]:
    return {
        int(s.extent.value) for s in walk(stmt)
        if isinstance(s, For) and s.kind is ForKind.VECTORIZED and isinstance(s.extent, tir.IntImm)
    }  # fmt: skip


def test_a_symbolic_width_gets_a_version_per_tile_widest_first() -> None:
    func = _depthwise(24, 3, 1)
    versions = width_versions(func, AVX512)
    assert versions is not None
    conds = [str(cond) for cond, _ in versions]
    assert conds == ["w >= 16", "w >= 8", "None"]
    assert [dict(ctx.knobs)["conv.width"] for _, ctx in versions] == list(WIDTH_TILES)
    scheduled = schedule_primfunc(func, AVX512)
    outer = scheduled.body.block.body
    assert isinstance(outer, IfThenElse) and isinstance(outer.else_case, IfThenElse)
    # each version's columns tile: 16, 8 and 4 columns in the vector
    tiles = [outer.then_case, outer.else_case.then_case, outer.else_case.else_case]
    assert [max(_vector_extents(t)) for t in tiles] == [16, 8, 4]


def test_versions_are_not_made_for_static_widths_or_fixed_tiles() -> None:
    from dataclasses import replace

    from default_workloads import conv

    assert width_versions(conv(1, 24, 14, 14, 24, 3, pad=1, groups=24), AVX512) is None
    fixed = replace(AVX512, knobs=(("conv.tile", (4, 7)),))
    assert width_versions(_depthwise(24, 3, 1), fixed) is None


def test_each_version_keeps_its_tile_buffers_inside_its_branch() -> None:
    lowered = lower(schedule_primfunc(_depthwise(24, 3, 1), AVX512))["main"]
    top = lowered.body
    while not isinstance(top, IfThenElse):  # past the hoisted shape arithmetic
        top = top.body
    branches = [top.then_case, top.else_case.then_case, top.else_case.else_case]
    allocs = [[s.buffer for s in walk(b) if isinstance(s, Allocate)] for b in branches]
    assert all(allocs)
    assert len({id(buf.data) for group in allocs for buf in group}) == sum(map(len, allocs))


@pytest.mark.parametrize("stride", [1, 2])
def test_every_version_matches_the_reference(stride: int) -> None:
    c, k = 24, 3
    built = unity.build(schedule_primfunc(_depthwise(c, k, stride), AVX512))
    rng = np.random.default_rng(stride)
    wt = rng.standard_normal((c, 1, k, k)).astype("float32")
    # every version, the last tile of a row moved back
    for h, w in ((3, 2), (5, 5), (4, 9), (6, 16), (3, 21), (2, 37)):
        x = rng.standard_normal((1, c, h, w)).astype("float32")
        want = conv2d_python(x, wt, (stride, stride), (k // 2,) * 4, groups=c)
        got = np.zeros(want.shape, "float32")
        built["main"](x, wt, got)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_merge_versions_needs_an_unconditional_last_version() -> None:
    func = schedule_primfunc(_depthwise(8, 3, 1), RuleContext(lanes=16, knobs=(("conv.width", 4),)))
    merged = merge_versions([(tir.SizeVar("n", "int32") >= 2, func), (None, func)])
    assert isinstance(merged.body.block.body, IfThenElse)
    with pytest.raises(ValueError, match="only the last version"):
        merge_versions([(None, func), (None, func)])


def test_a_grouped_conv_with_a_window_gets_versions_of_14_and_7_columns() -> None:
    """RegNet-Y's grouped 3x3 conv (groups of 8 channels, a vector of output channels per
    column) over a symbolic size: tiles of 14 columns where the output is that wide, of 7
    below (one version of 7 left the FMA units waiting: 0.151 -> 0.114 ms at 28 x 28);
    a pointwise conv is not versioned.  Each width matches the reference."""
    from unity.schedule.default.width_versions import CHANNEL_WIDTH_TILES

    h, w = tir.SizeVar("h", "int32"), tir.SizeVar("w", "int32")
    x = te.placeholder((1, 32, h, w), name="x")
    wt = te.placeholder((32, 8, 3, 3), name="wt")
    func = te.create_prim_func([x, wt, topi.nn.conv2d(x, wt, 1, 1, 1, 4)])
    versions = width_versions(func, AVX512)
    assert versions is not None
    assert [str(cond) for cond, _ in versions] == ["w >= 14", "None"]
    assert [dict(ctx.knobs)["conv.width"] for _, ctx in versions] == list(CHANNEL_WIDTH_TILES)
    pointwise = te.placeholder((32, 8, 1, 1), name="wt")
    assert width_versions(te.create_prim_func([x, pointwise, topi.nn.conv2d(x, pointwise, 1, 0, 1, 4)]), AVX512) is None
    built = unity.build(schedule_primfunc(func, AVX512))
    rng = np.random.default_rng(5)
    weights = rng.standard_normal((32, 8, 3, 3)).astype("float32")
    for hh, ww in ((3, 5), (4, 7), (2, 14), (3, 23)):
        data = rng.standard_normal((1, 32, hh, ww)).astype("float32")
        want = conv2d_python(data, weights, padding=(1, 1, 1, 1), groups=4)
        out = np.zeros(want.shape, "float32")
        built["main"](data, weights, out)
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
