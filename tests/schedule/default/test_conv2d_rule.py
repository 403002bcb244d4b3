"""The default conv2d rule: which loop the threads split, and its tiles' results."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from default_workloads import conv

import unity
from unity import tir
from unity.schedule.default import RuleContext, schedule_primfunc
from unity.schedule.tree import find_path, walk
from unity.tir.expr import PrimExpr
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
    # 1x1 16->64 at width 56 takes a tile of 4 channels x 56 pixels (one row; `pointwise_tile`
    # on AVX-512): by default threads split the pixels, so each keeps its input rows in cache
    # over all channel blocks
    func = conv(1, 16, 28, 56, 64, 1)
    knobs = (("conv.parallel", knob),) if knob else ()
    scheduled = schedule_primfunc(func, replace(AVX512, knobs=knobs))
    assert _parallel_extents(scheduled) == [extent]
    expected = _run(schedule_primfunc(func, replace(AVX512, knobs=(("conv.variant", "channels"),))))
    np.testing.assert_allclose(_run(scheduled), expected, rtol=1e-5, atol=1e-5)


def _vector_extents(func: tir.PrimFunc) -> set[int]:
    return {
        int(s.extent.value) for s in walk(func.body)
        if isinstance(s, For) and s.kind is ForKind.VECTORIZED and isinstance(s.extent, tir.IntImm)
    }  # fmt: skip


def test_blocked_conv_puts_the_block_lanes_in_vectors() -> None:
    from default_workloads import conv_blocked

    from unity.schedule.default.prepack import PREPACK

    func = conv_blocked(16, 9, 9, 32, 3, pad=1, block=16, bias_relu=True)
    scheduled = schedule_primfunc(func, AVX512)
    recipes = [
        s.block.annotations[PREPACK] for s in walk(scheduled.body)
        if isinstance(s, tir.BlockRealize) and PREPACK in s.block.annotations
    ]  # fmt: skip
    assert recipes == ["oihw_blocked:16:32"]  # two output blocks per tile
    assert _vector_extents(scheduled) == {16, 32}  # lanes; the packing copies 32-wide rows
    names = [s.block.name_hint for s in walk(scheduled.body) if isinstance(s, tir.BlockRealize)]
    assert "T_relu" not in names and "T_add" not in names  # the epilogue is in the write-back
    np.testing.assert_allclose(_run(scheduled), _run(func), rtol=1e-4, atol=1e-4)


def test_blocked_conv_over_one_pixel_packs_its_weights() -> None:
    # a squeeze-and-excitation conv after a global pool (576 -> 144 at 1 x 1): its one
    # pixel cannot be flattened with rows, and had fallen to an unpacked kernel read with a
    # stride of 576 per lane (6x slower)
    from default_workloads import conv_blocked

    from unity.schedule.default.prepack import PREPACK

    scheduled = schedule_primfunc(conv_blocked(576, 1, 1, 144, 1, block=16, bias_relu=True), AVX512)
    recipes = [
        s.block.annotations[PREPACK] for s in walk(scheduled.body)
        if isinstance(s, tir.BlockRealize) and PREPACK in s.block.annotations
    ]  # fmt: skip
    assert recipes == ["oihw_blocked:16:48"]  # three output blocks per tile
    unscheduled = conv_blocked(576, 1, 1, 144, 1, block=16, bias_relu=True)
    np.testing.assert_allclose(_run(scheduled), _run(unscheduled), rtol=1e-4, atol=1e-4)


def _pad_parents(func: tir.PrimFunc) -> list[For]:
    """The parallel loops that hold the padding block."""
    return [
        s for s in walk(func.body)
        if isinstance(s, For) and s.kind is ForKind.PARALLEL
        and any(isinstance(b, tir.BlockRealize) and b.block.name_hint == "T_pad_data"
                for b in walk(s.body))
    ]  # fmt: skip


def test_blocked_depthwise_pads_inside_its_parallel_loop() -> None:
    from default_workloads import conv_blocked

    func = conv_blocked(32, 10, 10, 32, 3, pad=1, groups=32, block=16)
    scheduled = schedule_primfunc(func, AVX512)
    assert _parallel_extents(scheduled) == [2]  # one launch over the channel blocks
    assert len(_pad_parents(scheduled)) == 1
    np.testing.assert_allclose(_run(scheduled), _run(func), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("size", "k", "stride"), [(56, 3, 1), (57, 3, 2), (112, 5, 2)])
def test_blocked_depthwise_over_a_large_image_reads_through_its_padding(size, k, stride) -> None:
    """Most of its row tiles read only inside the image: no padded copy (the padding
    inlined, each tap checked), and after lowering the interior tiles' version loads
    without a check (`HoistPadChecks`); the reference's results either way."""
    from default_workloads import conv_blocked

    from unity.tir.expr import Select
    from unity.tir.functor import post_order_nodes
    from unity.tir.transform import lower

    func = conv_blocked(32, size, size, 32, k, stride, k // 2, groups=32, block=16)
    scheduled = schedule_primfunc(func, AVX512)
    assert _parallel_extents(scheduled) == [2]
    assert not _pad_parents(scheduled)
    blocks = [b.block.name_hint for b in walk(scheduled.body) if isinstance(b, tir.BlockRealize)]
    assert "T_pad_data" not in blocks
    versions = [s for s in walk(lower(scheduled)["main"].body) if isinstance(s, tir.IfThenElse)]
    checked = lambda s: any(isinstance(n, Select) for n in post_order_nodes(s))  # noqa: E731
    assert any(not checked(v.then_case) and checked(v.else_case) for v in versions)
    np.testing.assert_allclose(_run(scheduled), _run(func), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("channels", "parallel"), [(16, 56), (48, 56), (32, 2), (64, 4)])
def test_blocked_depthwise_splits_rows_where_its_channel_blocks_leave_a_core_idle(
    channels: int, parallel: int
) -> None:
    """A depthwise 3x3/2 conv 112 -> 56 reading through its padding: 1 or 3 channel blocks
    on 2 cores would leave one idle, so the threads split its 56 output rows (MnasNet's 48
    channels 0.067 -> 0.055 ms, MobileNet v3-small's 16 0.043 -> 0.031); 2 and 4 blocks
    keep a block per task.  The reference's results either way."""
    from default_workloads import conv_blocked

    func = conv_blocked(channels, 112, 112, channels, 3, 2, 1, groups=channels, block=16)
    scheduled = schedule_primfunc(func, AVX512)
    assert _parallel_extents(scheduled)[-1] == parallel  # after the weights' packing
    np.testing.assert_allclose(_run(scheduled), _run(func), rtol=1e-4, atol=1e-4)


def test_padded_window_counts_the_row_tiles_reading_inside_the_image() -> None:
    """3x3 at 56x56 in tiles of 8: 5 of 7 tiles and 54 of 56 rows inside; 5x5 at 28x28 in
    tiles of 7: 2 of 4 and 24 of 28; 3x3/2 112 -> 56: 7 of 8 and 55 of 56, four pixels
    copied per output; a whole row per tile: none."""
    from default_workloads import conv_blocked

    from unity.schedule.default.analysis import block_infos
    from unity.schedule.default.conv2d_blocked import PaddedWindow, padded_window

    def window(size: int, k: int, stride: int, tx: int) -> PaddedWindow | None:
        func = conv_blocked(32, size, size, 32, k, stride, k // 2, groups=32, block=16)
        pad, conv = block_infos(func)[:2]
        return padded_window(conv, pad.block, tx)

    assert window(56, 3, 1, 8) == PaddedWindow(pytest.approx(5 / 7 * 54 / 56), 9, 1)
    assert window(28, 5, 1, 7) == PaddedWindow(pytest.approx(2 / 4 * 24 / 28), 25, 1)
    assert window(112, 3, 2, 7) == PaddedWindow(pytest.approx(7 / 8 * 55 / 56), 9, 4)
    assert window(14, 3, 1, 14) == PaddedWindow(0.0, 9, 1)


@pytest.mark.parametrize("stride", [1, 2])
def test_nchw_depthwise_pads_its_channel_block_at_stride_one(stride: int) -> None:
    # 24 channels of 12x12, 3x3 depthwise: at stride 1 each channel block pads its own
    # channels inside the conv's one parallel loop; at stride 2 padding is a pass of its own
    func = conv(1, 24, 12, 12, 24, 3, stride, 1, groups=24)
    scheduled = schedule_primfunc(func, AVX512)
    assert _parallel_extents(scheduled) == [6]  # 24 channels in blocks of 4
    with_conv = [
        s for s in _pad_parents(scheduled)
        if any(isinstance(b, tir.BlockRealize) and b.block.name_hint == "T_conv2d_update"
               for b in walk(s.body))
    ]  # fmt: skip
    assert len(with_conv) == (1 if stride == 1 else 0)
    np.testing.assert_allclose(_run(scheduled), _run(func), rtol=1e-4, atol=1e-4)


def test_grouped_pointwise_conv_puts_pixels_of_several_rows_in_vectors() -> None:
    """A grouped 1x1 conv with 6 channels per group (no channel vector fits) is a matmul
    over the flattened pixels: its tile of 16 pixels spans rows of 6, the accumulator is
    ``[1, O, H*W]``, and the epilogue (bias, residual, relu) is in the write-back."""
    from default_workloads import conv_pointwise_grouped

    func = conv_pointwise_grouped(12, 8, 6, 18, 3)
    avx2 = RuleContext(lanes=8, num_cores=2)
    scheduled = schedule_primfunc(func, avx2)
    local = [b for b in scheduled.body.block.alloc_buffers if b.scope == "local"]
    assert [[int(d.value) for d in b.shape] for b in local] == [[1, 18, 48]]
    assert _vector_extents(scheduled) == {16}
    names = [s.block.name_hint for s in walk(scheduled.body) if isinstance(s, tir.BlockRealize)]
    assert "T_relu" not in names and "T_add" not in names  # the epilogue is in the write-back
    x, w, b, r = _inputs(func)
    groups = [x[:, 4 * g:4 * g + 4].reshape(4, 48) for g in range(3)]
    conv = np.concatenate([w[6 * g:6 * g + 6, :, 0, 0] @ groups[g] for g in range(3)])
    expected = np.maximum(conv.reshape(1, 18, 8, 6) + b + r, 0)
    np.testing.assert_allclose(_run(scheduled), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("knob", "extent"), [(None, 7), ("channels", 34)])
def test_grouped_pointwise_conv_splits_its_pixel_tiles_between_threads(
    knob: str | None, extent: int
) -> None:
    """ShuffleNet's kind of grouped 1x1 conv (34 channels per group: tiles of 2 channels
    x 28 of the 196 pixels): with at least two pixel tiles per core the threads split
    the 7 pixel tiles, each reading its own slice of the input, not the 34 channel tiles
    (every thread reading all of it); the ``conv.parallel`` knob still picks either."""
    from default_workloads import conv_pointwise_grouped

    func = conv_pointwise_grouped(68, 14, 14, 68, 2)
    knobs = (("conv.parallel", knob),) if knob else ()
    scheduled = schedule_primfunc(func, RuleContext(lanes=8, num_cores=2, knobs=knobs))
    assert _parallel_extents(scheduled) == [extent]
    x, w, b, r = _inputs(func)
    groups = [x[:, 34 * g:34 * g + 34].reshape(34, 196) for g in range(2)]
    conv = np.concatenate([w[34 * g:34 * g + 34, :, 0, 0] @ groups[g] for g in range(2)])
    expected = np.maximum(conv.reshape(1, 68, 14, 14) + b + r, 0)
    np.testing.assert_allclose(_run(scheduled), expected, rtol=1e-4, atol=1e-4)


def _inputs(func: tir.PrimFunc) -> list[np.ndarray]:
    """The inputs `_run` draws (the same seed)."""
    rng = np.random.default_rng(0)
    return [
        rng.standard_normal([int(d.value) for d in p.shape]).astype("float32")
        for p in func.buffer_params()
    ][:-1]


def _loops_above(func: tir.PrimFunc, name: str) -> list[int]:
    """Extents of the loops around block `name` (outermost first)."""
    path = find_path(
        func.body, lambda s: isinstance(s, tir.BlockRealize) and s.block.name_hint == name
    )
    return [int(s.extent.value) for s in path or [] if isinstance(s, For)]


def test_blocked_conv_with_large_weights_splits_the_reduction_per_row() -> None:
    """3x3 over 256 channels (8-lane blocks): one 16-channel tile's weights (147 KiB) would
    stream from L2 for every 4-pixel tile, so the rule takes the input channel blocks
    two at a time for the whole row, the row's 16 x 8 accumulators in a local buffer."""
    from default_workloads import conv_blocked

    from unity.schedule.default import conv2d_blocked
    from unity.schedule.default.analysis import block_infos

    avx2 = RuleContext(lanes=8, num_cores=2)
    func = conv_blocked(256, 10, 8, 16, 3, pad=1, bias_relu=True)
    info = next(b for b in block_infos(func) or [] if conv2d_blocked.applies(b))
    tiling = conv2d_blocked.blocked_tiling(info, avx2)
    assert tiling is not None
    assert (tiling.tile, tiling.in_blocks, tiling.rc_block) == ((16, 4), 32, 2)
    scheduled = schedule_primfunc(func, avx2)
    # rows / chunks of 2 blocks / tiles of 4 pixels / 2 blocks, 3 x 3 taps, 8 lanes / tile
    assert _loops_above(scheduled, "T_conv2d_update") == [10, 16, 2, 2, 3, 3, 8, 4, 2, 8]
    assert _loops_above(scheduled, "T_conv2d_init")[:2] == [10, 2]  # the row zeroed once
    whole = schedule_primfunc(func, replace(avx2, knobs=(("conv.rc_block", 0),)))
    assert _loops_above(whole, "T_conv2d_update") == [10, 2, 32, 3, 3, 8, 4, 2, 8]
    expected = _run(func)
    for candidate in (scheduled, whole):
        np.testing.assert_allclose(_run(candidate), expected, rtol=1e-4, atol=1e-4)
    few = conv2d_blocked.blocked_tiling(  # 128 channels (74 KiB of weights): one chunk
        next(b for b in block_infos(conv_blocked(128, 10, 8, 16, 3, pad=1)) or []
             if conv2d_blocked.applies(b)), avx2)  # fmt: skip
    assert few is not None and few.rc_block is None


def test_blocked_conv_with_a_window_tiles_pixels_across_rows() -> None:
    """3x3 over 64 channels at 16x16 (weights within a tile's L2 share): a row of 16
    would take tiles of 4 pixels, but tiles of the flattened pixels take 5 (one guarded
    tile per image, not per row); the weights of 256 channels need reduction chunks per
    row, so that conv keeps row tiles."""
    from default_workloads import conv_blocked

    from unity.schedule.default import conv2d_blocked
    from unity.schedule.default.analysis import block_infos

    avx2 = RuleContext(lanes=8, num_cores=2)

    def tiling(c: int):  # type: ignore[no-untyped-def]
        func = conv_blocked(c, 16, 16, 16, 3, pad=1, bias_relu=True)
        info = next(b for b in block_infos(func) or [] if conv2d_blocked.applies(b))
        return func, conv2d_blocked.blocked_tiling(info, avx2)

    func, small = tiling(64)
    assert small is not None
    assert (small.flatten, small.tile, small.rc_block) == (True, (16, 5), None)
    scheduled = schedule_primfunc(func, avx2)
    # 52 tiles of 5 of the 256 pixels / 8 blocks, 3 x 3 taps, 8 lanes / tile
    assert _loops_above(scheduled, "T_conv2d_update") == [52, 8, 3, 3, 8, 5, 2, 8]
    np.testing.assert_allclose(_run(scheduled), _run(func), rtol=1e-4, atol=1e-4)
    _, large = tiling(256)
    assert large is not None and (large.flatten, large.tile, large.rc_block) == (False, (16, 4), 2)


@pytest.mark.parametrize(
    ("o", "k", "tile"),
    [(120, 3, (24, 3)), (40, 1, (40, 2)), (56, 1, (16, 5)), (104, 3, (16, 6)), (104, 1, (16, 5))],
)
def test_blocked_conv_with_odd_channel_blocks_tiles_three_or_five_vectors(
    o: int, k: int, tile: tuple[int, int]
) -> None:
    """15 output channel blocks take tiles of 3 vectors x 3 pixels, 5 blocks 5 x 2 (one
    vector per tile left the FMA units waiting on broadcasts); a prime count of 7 or more
    (7, 13) takes 2 vectors, its last channel tile guarded."""
    from default_workloads import conv_blocked

    from unity.schedule.default import conv2d_blocked
    from unity.schedule.default.analysis import block_infos

    avx2 = RuleContext(lanes=8, num_cores=2)
    func = conv_blocked(16, 6, 6, o, k, pad=k // 2, bias_relu=True)
    info = next(b for b in block_infos(func) or [] if conv2d_blocked.applies(b))
    tiling = conv2d_blocked.blocked_tiling(info, avx2)
    assert tiling is not None and tiling.tile == tile
    np.testing.assert_allclose(
        _run(schedule_primfunc(func, avx2)), _run(func), rtol=1e-4, atol=1e-4
    )


def test_a_prime_count_of_channel_blocks_guards_its_last_tile() -> None:
    """1x1 16->104 (13 blocks) in tiles of 2 blocks: 7 channel tiles, the 7th of one
    block (the guard is hoisted: only the edge tiles' loop nest tests it), the weights
    packed per block; the 36 pixels' 8th tile of 5 moves back to end at the 36th (no
    guard); the output matches the unscheduled conv."""
    from default_workloads import conv_blocked

    from unity.tir import lower

    avx2 = RuleContext(lanes=8, num_cores=2)
    func = conv_blocked(16, 6, 6, 104, 1, pad=0, bias_relu=True)
    scheduled = schedule_primfunc(func, avx2)
    # 8 tiles of 5 of the 36 pixels / 7 channel tiles / 2 x 1 x 1 x 8 reduction / 5 x 2 x 8
    assert _loops_above(scheduled, "T_conv2d_update") == [8, 7, 2, 1, 1, 8, 5, 2, 8]
    packed = [b for b in scheduled.body.block.alloc_buffers if b.name.endswith("_global")]
    assert [tuple(int(d.value) for d in b.shape) for b in packed] == [(13, 2, 1, 1, 8, 8)]
    np.testing.assert_allclose(_run(scheduled), _run(func), rtol=1e-4, atol=1e-4)
    text = str(lower(unity.IRModule({"main": scheduled})))
    assert "< 6:" in text  # the hoisted test: not the last channel tile (6 whole tiles)
    assert "T.min(ax2_0 * 5, 31)" in text  # the last pixel tile's start
    assert text.count("< 13") == 2  # only the edge tiles' init and write-back test a block


def test_flattened_tiles_take_reduction_chunks_by_knob() -> None:
    """With ``conv.rc_block``, tiles of the flattened pixels sweep the whole image per chunk
    of input channel blocks: channel tiles in parallel, the image's accumulators kept in
    the write-back's buffer between chunks; the result does not change."""
    from default_workloads import conv_blocked

    avx2 = RuleContext(lanes=8, num_cores=2)
    func = conv_blocked(64, 7, 7, 32, 3, pad=1, bias_relu=True)
    chunked = schedule_primfunc(func, replace(avx2, knobs=(("conv.rc_block", 2),)))
    # 2 channel tiles / 4 chunks of 2 blocks / 10 tiles of 5 pixels / 2 blocks, 3 x 3, 8
    assert _loops_above(chunked, "T_conv2d_update") == [2, 4, 10, 2, 3, 3, 8, 5, 2, 8]
    assert _parallel_extents(chunked)[-1] == 2
    np.testing.assert_allclose(_run(chunked), _run(func), rtol=1e-4, atol=1e-4)


def test_half_precision_weights_need_reduction_chunks_at_twice_the_channels() -> None:
    """The chunks are sized by the weights' bytes: 3x3 over 256 channels takes chunks in
    float32 (147 KiB per 16-channel tile) but not in float16 (74 KiB), whose tiles then
    cross rows like any conv with small weights."""
    from unity import te, topi
    from unity.schedule.default import conv2d_blocked
    from unity.schedule.default.analysis import block_infos

    def tiling(dtype: str):  # type: ignore[no-untyped-def]
        x = te.placeholder((1, 32, 10, 8, 8), name="x", dtype=dtype)
        w = te.placeholder((16, 256, 3, 3), name="w", dtype=dtype)
        func = te.create_prim_func([x, w, topi.nn.conv2d(x, w, 1, 1, 1, 1, "NCHW8c", "OIHW")])
        info = next(b for b in block_infos(func) or [] if conv2d_blocked.applies(b))
        return conv2d_blocked.blocked_tiling(info, RuleContext(lanes=8, num_cores=2))

    single, half = tiling("float32"), tiling("float16")
    assert single is not None and (single.rc_block, single.flatten) == (2, False)
    assert half is not None and (half.rc_block, half.flatten, half.tile) == (None, True, (16, 5))


def _symbolic_width_conv(c, o, k, groups, block=None, stride=1):
    """A 1-D conv (height 1, kernel 1 x k, padded k // 2) over a symbolic width: NCHW or,
    with `block`, NCHW{block}c data."""
    from unity import te, topi

    w = tir.SizeVar("w", "int32")
    shape = (1, c, 1, w) if block is None else (1, c // block, 1, w, block)
    x = te.placeholder(shape, name="x")
    wt = te.placeholder((o, c // groups, 1, k), name="wt")
    layout = "NCHW" if block is None else f"NCHW{block}c"
    y = topi.nn.conv2d(x, wt, (1, stride), (0, k // 2, 0, k // 2), 1, groups, layout, "OIHW")
    return te.create_prim_func([x, wt, y])


def _run_at_width(func: tir.PrimFunc, x: np.ndarray, wt: np.ndarray, out_shape) -> np.ndarray:
    out = np.zeros(out_shape, "float32")
    unity.build(func)["main"](x, wt, out)
    return out


def test_grouped_conv_over_a_symbolic_width_takes_channel_tiles() -> None:
    """wav2vec2's positional conv: groups of 24 channels (no 16-lane block holds them) over
    a symbolic number of frames took the fallback rule (32.8 ms); now a channel tile of
    the 24 channels x 8 columns, the row's last tile guarded."""
    from unity.schedule.default import conv2d
    from unity.schedule.default.analysis import block_infos
    from unity.topi.testing import conv2d_python

    func = _symbolic_width_conv(48, 48, 9, groups=2)
    info = next(b for b in block_infos(func) or [] if conv2d.applies(b))
    tiling = conv2d.conv_tiling(info, 16)
    assert tiling is not None and (tiling.variant, tiling.tile, tiling.width) == ("channels", (24, 8), None)
    scheduled = schedule_primfunc(func, AVX512)
    assert 24 in _vector_extents(scheduled)
    rng = np.random.default_rng(0)
    wt = rng.standard_normal((48, 24, 1, 9)).astype("float32")
    for width in (5, 37):  # shorter than one tile; four tiles and a guarded one
        x = rng.standard_normal((1, 48, 1, width)).astype("float32")
        want = conv2d_python(x, wt, padding=(0, 4, 0, 4), groups=2)
        got = _run_at_width(scheduled, x, wt, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_blocked_conv_over_a_symbolic_width_takes_no_reduction_chunks() -> None:
    """A row of unknown length keeps its whole reduction in each tile: chunks keep a row's
    accumulators in a buffer between them, which for wav2vec2's rows of 1599 samples
    (512 -> 512 channels, k=3, s=2) streamed from L2 (32.7 ms; whole: 12.9 ms)."""
    from unity.schedule.default import conv2d_blocked
    from unity.schedule.default.analysis import block_infos
    from unity.topi.testing import conv2d_python

    avx2 = RuleContext(lanes=8, num_cores=2)
    func = _symbolic_width_conv(512, 32, 9, groups=1, block=8, stride=2)  # 288 KiB of weights a tile
    info = next(b for b in block_infos(func) or [] if conv2d_blocked.applies(b))
    tiling = conv2d_blocked.blocked_tiling(info, avx2)
    assert tiling is not None and tiling.width is None and tiling.rc_block is None
    scheduled = schedule_primfunc(func, avx2)
    rng = np.random.default_rng(1)
    wt = rng.standard_normal((32, 512, 1, 9)).astype("float32")
    x = rng.standard_normal((1, 512, 1, 29)).astype("float32")
    want = conv2d_python(x, wt, (1, 2), (0, 4, 0, 4))  # (1, 32, 1, 15)
    blocked = np.ascontiguousarray(x.reshape(1, 64, 8, 1, 29).transpose(0, 1, 3, 4, 2))
    got = _run_at_width(scheduled, blocked, wt, (1, 4, 1, 15, 8))
    np.testing.assert_allclose(got.transpose(0, 1, 4, 2, 3).reshape(want.shape), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("k", "channels"), [(1, (64, 96)), (3, (32, 32))])
def test_blocked_conv_over_a_symbolic_size_tiles_flat_pixels_or_rows(k: int, channels) -> None:
    """Over a symbolic height and width, a pointwise conv's tiles run over the flattened
    pixels ``y * W + x`` (crossing rows; only the image's last tile guarded), not along
    rows of unknown width (ResNet-50's 1x1 512 -> 2048 at 7x7: 1.85 -> 1.18 ms, static
    sizes 0.87).  A conv with a window tiles each row instead, with a tile chosen for
    the typical width, the last one moved back: its flattened pixels divided ``p`` by the
    width for every pixel (MobileNet v3's 3x3/2 stem 0.119 -> 0.069 ms, as static).
    Either way the result matches the reference at sizes below and above the tile."""
    from unity import te, topi
    from unity.schedule.default import conv2d_blocked
    from unity.schedule.default.analysis import block_infos
    from unity.topi.testing import conv2d_python

    c, o = channels
    h, w = tir.SizeVar("h", "int32"), tir.SizeVar("w", "int32")
    x = te.placeholder((1, c // 16, h, w, 16), name="x")
    wt = te.placeholder((o, c, k, k), name="wt")
    func = te.create_prim_func([x, wt, topi.nn.conv2d(x, wt, 1, k // 2, 1, 1, "NCHW16c", "OIHW")])
    info = next(b for b in block_infos(func) or [] if conv2d_blocked.applies(b))
    tiling = conv2d_blocked.blocked_tiling(info, AVX512)
    assert tiling is not None and tiling.flatten == (k == 1) and (tiling.rows is not None) == (k == 1)
    scheduled = schedule_primfunc(func, AVX512)
    flat = "h * w" in scheduled.script() or "w * h" in scheduled.script()  # the flattened pixels
    assert flat == (k == 1)
    built = unity.build(scheduled)
    rng = np.random.default_rng(3)
    weights = rng.standard_normal((o, c, k, k)).astype("float32")
    for hh, ww in ((7, 7), (3, 11), (1, 2), (2, 19)):
        data = rng.standard_normal((1, c, hh, ww)).astype("float32")
        want = conv2d_python(data, weights, padding=(k // 2,) * 4)
        blocked = np.ascontiguousarray(data.reshape(1, c // 16, 16, hh, ww).transpose(0, 1, 3, 4, 2))
        out = np.zeros((1, o // 16, hh, ww, 16), "float32")
        built["main"](blocked, weights, out)
        got = out.transpose(0, 1, 4, 2, 3).reshape(want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("symbolic_image", [False, True])
def test_a_pointwise_conv_over_a_symbolic_batch_splits_its_channel_tiles(symbolic_image) -> None:
    """A 1x1 192 -> 192 conv at 7 x 7 over a symbolic batch (a model compiled for a fixed
    image size) makes 6 channel tiles x 4 pixel tiles, neither the 8 tasks that would take
    a loop at once: the threads split the channel tiles, not the batch (which at batch 1
    had run the conv on one core; MnasNet's 1152 -> 192 at 7 x 7 0.16 -> 0.09 ms).  Over
    a symbolic image whose sides are ``(H - 1) // 32 + 1`` (7 at the typical 224) the same
    choice, not the symbolic pixel tiles (each thread then read all the weights: 0.107 ->
    0.089 ms).  In int64 (as a model's shapes), the kernel taps' int32 indices are cast
    (once not taken as linear: the rule did not apply).  The result matches the reference
    at batches 1 and 2."""
    from unity import te, topi
    from unity.topi.testing import conv2d_python

    n, height, width = (tir.SizeVar(v, "int64") for v in ("n", "H", "W"))
    side = [(v - 1) // 32 + 1 if symbolic_image else 7 for v in (height, width)]
    x = te.placeholder((n, 12, *side, 16), name="x")
    wt = te.placeholder((192, 192, 1, 1), name="wt")
    sizes = [height, width] if symbolic_image else []  # scalar parameters: not in a shape alone
    conv = topi.nn.conv2d(x, wt, 1, 0, 1, 1, "NCHW16c", "OIHW")
    func = te.create_prim_func([x, wt, conv, *sizes])
    scheduled = schedule_primfunc(func, AVX512)
    loops = [s for s in walk(scheduled.body) if isinstance(s, For)]
    parallel = [str(s.extent) for s in loops if s.kind is ForKind.PARALLEL]
    assert parallel == ["6", "6"], parallel  # the weights packed, then the conv
    built = unity.build(scheduled)
    rng = np.random.default_rng(5)
    weights = rng.standard_normal((192, 192, 1, 1)).astype("float32") / 14
    for batch in (1, 2):
        data = rng.standard_normal((batch, 192, 7, 7)).astype("float32")
        blocked = np.ascontiguousarray(data.reshape(batch, 12, 16, 7, 7).transpose(0, 1, 3, 4, 2))
        out = np.zeros((batch, 12, 7, 7, 16), "float32")
        built["main"](blocked, weights, out, *[224 for _ in sizes])
        got = out.transpose(0, 1, 4, 2, 3).reshape(batch, 192, 7, 7)
        np.testing.assert_allclose(got, conv2d_python(data, weights), rtol=1e-4, atol=1e-4)


def test_an_image_stem_over_a_symbolic_size_tiles_its_rows() -> None:
    """A 3x3 stride-2 conv of a 3-channel NCHW image written channel-blocked (a model's
    first conv after `AlterConvLayout`) over a symbolic size tiles its output rows, the
    last tile of each moved back, and matches the reference at several sizes."""
    from unity import te, topi
    from unity.schedule.analysis import used_vars
    from unity.topi.testing import conv2d_python

    h, w = tir.SizeVar("h", "int32"), tir.SizeVar("w", "int32")
    x = te.placeholder((1, 3, h, w), name="x")
    wt = te.placeholder((32, 3, 3, 3), name="wt")
    conv = topi.nn.conv2d(x, wt, 2, 1, 1, 1, "NCHW", "OIHW", out_layout="NCHW16c")
    scheduled = schedule_primfunc(te.create_prim_func([x, wt, conv]), AVX512)
    parallel = [s for s in walk(scheduled.body) if isinstance(s, For) and s.kind is ForKind.PARALLEL]
    assert {v.name for v in used_vars(parallel[-1].extent)} == {"h"}  # the output rows
    built = unity.build(scheduled)
    rng = np.random.default_rng(4)
    weights = rng.standard_normal((32, 3, 3, 3)).astype("float32")
    for hh, ww in ((9, 9), (4, 37), (3, 2)):
        data = rng.standard_normal((1, 3, hh, ww)).astype("float32")
        want = conv2d_python(data, weights, strides=(2, 2), padding=(1,) * 4)
        out = np.zeros((1, 2, *want.shape[2:], 16), "float32")
        built["main"](data, weights, out)
        np.testing.assert_allclose(out.transpose(0, 1, 4, 2, 3).reshape(want.shape), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("channels", "prefetched"), [(256, True), (32, True), (16, False)])
def test_blocked_conv_tiles_prefetch_large_weights(channels: int, prefetched: bool) -> None:
    """A 3x3 blocked conv whose output-channel tile reads 16 KiB of weights or more (256
    -> 256: 295 KiB per 32 channels; 32 -> 32: 36 KiB) prefetches them in its innermost
    reduction loop; a small one (16 -> 16: 9 KiB) does not.  Built, all match the
    reference."""
    from unity import te, topi
    from unity.topi.testing import conv2d_python

    x = te.placeholder((1, channels // 16, 5, 6, 16), name="x")
    wt = te.placeholder((channels, channels, 3, 3), name="wt")
    func = te.create_prim_func([x, wt, topi.nn.conv2d(x, wt, 1, 1, 1, 1, "NCHW16c", "OIHW")])
    scheduled = schedule_primfunc(func, AVX512)
    annotated = [s for s in walk(scheduled.body) if isinstance(s, For) and "software_prefetch" in s.annotations]
    assert len(annotated) == int(prefetched)
    lib = unity.build(scheduled)
    assert ("@llvm.prefetch" in lib.get_source("ll")) == prefetched
    rng = np.random.default_rng(7)
    data = rng.standard_normal((1, channels, 5, 6)).astype("float32")
    weights = rng.standard_normal((channels, channels, 3, 3)).astype("float32")
    want = conv2d_python(data, weights, padding=(1,) * 4)
    blocked = np.ascontiguousarray(data.reshape(1, channels // 16, 16, 5, 6).transpose(0, 1, 3, 4, 2))
    out = np.zeros((1, channels // 16, 5, 6, 16), "float32")
    lib["main"](blocked, weights, out)
    got = out.transpose(0, 1, 4, 2, 3).reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def _symbolic_pointwise(c: int, o: int, size: PrimExpr) -> tir.PrimFunc:
    """A 1x1 NCHW conv `c` -> `o` over a symbolic image whose side is `size` (of `h`)."""
    from unity import te, topi

    dims = [tir.IntImm("int64", d) for d in (1, c, o)]  # int64 as legalized from relax
    x = te.placeholder((dims[0], dims[1], size, size), name="x")
    wt = te.placeholder((dims[2], dims[1], dims[0], dims[0]), name="wt")
    return te.create_prim_func([x, wt, topi.nn.conv2d(x, wt, 1, 0, 1, 1, "NCHW", "OIHW")])


@pytest.mark.parametrize(("halvings", "variant"), [(2, "pixels"), (5, "channels")])
def test_pointwise_convs_over_a_symbolic_size_put_pixels_in_vectors_where_many(
    halvings: int, variant: str
) -> None:
    """RegNet-Y's 1x1 convs on NCHW data over a symbolic image: at 56 x 56 for a 224 x 224
    input the pixels fill the vectors (the channels tile ran ~2x slower); at 7 x 7 (five
    halvings), where every thread would read the whole weight, the channels do."""
    from unity.schedule.default import conv2d
    from unity.schedule.default.analysis import block_infos
    from unity.topi.testing import conv2d_python

    h = tir.SizeVar("h", "int64")
    side = (h - 1) // (1 << halvings) + 1
    func = _symbolic_pointwise(48, 104, side)
    info = next(b for b in block_infos(func) or [] if conv2d.applies(b))
    assert conv2d.typical_extent(info.loops[2].extent) == 224 // (1 << halvings)
    tiling = conv2d.conv_tiling(info, 16)
    assert tiling is not None and tiling.variant == variant
    assert tiling.pixel_tile == (4, 32)  # `pointwise_tile` within two vectors of pixels


def test_a_pointwise_conv_over_a_symbolic_size_matches_numpy() -> None:
    """The pixels-in-vector tile over a symbolic image (NCHW data: `AlterConvLayout`
    off), at sizes shorter than a tile and with a last partial one."""
    from unity import relax
    from unity.relax import op
    from unity.relax.struct_info import sym
    from unity.topi.testing import conv2d_python

    rng = np.random.default_rng(0)
    wt = rng.standard_normal((104, 48, 1, 1)).astype("float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 48, sym("h"), sym("w")), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(op.nn.conv2d(x, relax.Constant(wt)))
        bb.emit_func_output(out)
    with unity.transform.PassContext(opt_level=3, disabled_pass=["AlterConvLayout"]):
        vm = relax.VirtualMachine(unity.compile(bb.get()), unity.cpu())
    for h, w in ((3, 5), (37, 41)):
        data = rng.standard_normal((1, 48, h, w)).astype("float32")
        want = conv2d_python(data, wt)
        np.testing.assert_allclose(vm["main"](data).numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("c", "o", "size", "tile"), [(104, 104, 28, (4, 56)), (208, 208, 14, (4, 28))]
)
def test_pointwise_convs_put_pixels_in_vectors_with_avx512(c, o, size, tile) -> None:
    """RegNet-Y's 1x1 convs on NCHW data: pixels in vectors, 4 output channels x the most
    pixels whose input stays in L1 (the columns tile ran 1.3-2.5x slower); AVX2 keeps the
    tile it had (measured on Zen, not here)."""
    from unity.schedule.default import conv2d
    from unity.schedule.default.analysis import block_infos
    from unity.topi.testing import conv2d_python

    func = conv(1, c, size, size, o, 1)
    info = next(b for b in block_infos(func) or [] if conv2d.applies(b))
    tiling = conv2d.conv_tiling(info, 16)
    assert tiling is not None and (tiling.variant, tiling.pixel_tile) == ("pixels", tile)
    assert conv2d.conv_tiling(info, 8).variant != "pixels"
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, c, size, size)).astype("float32")
    wt = rng.standard_normal((o, c, 1, 1)).astype("float32")
    out = np.zeros((1, o, size, size), "float32")
    unity.build(schedule_primfunc(func, AVX512))["main"](x, wt, out)
    np.testing.assert_allclose(out, conv2d_python(x, wt), rtol=1e-4, atol=1e-4)
