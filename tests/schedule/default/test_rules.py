"""Every default rule keeps the interpreter's result, on the shapes of the ONNX node
tests and the light models' layers (small versions), built with LLVM and interpreted."""

from __future__ import annotations

import numpy as np
import pytest
from default_workloads import WORKLOADS

import unity
from unity import tir
from unity.schedule.default import RuleContext, schedule_primfunc
from unity.schedule.tree import walk
from unity.tir.stmt import For, ForKind

EAGER = RuleContext(lanes=16, num_cores=2, parallel_min_work=0, parallel_min_copy=0)
"""Parallelize even tiny nests, so every rule's full schedule runs on small shapes."""

NARROW = RuleContext(lanes=8, num_cores=4, parallel_min_work=0, parallel_min_copy=0)
"""An AVX2-like target: other tile sizes."""


def _args(func: tir.PrimFunc, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for p in func.buffer_params():
        shape = [int(s.value) if isinstance(s, tir.IntImm) else 3 for s in p.shape]
        out.append(rng.standard_normal(shape).astype(p.dtype))
    out[-1][...] = 0
    return out


def _reference(func: tir.PrimFunc) -> list[np.ndarray]:
    args = _args(func)
    tir.interpret(func, *args)
    return args


def _kinds(func: tir.PrimFunc) -> set[ForKind]:
    return {s.kind for s in walk(func.body) if isinstance(s, For)}


def _matches_numpy_matmul(scheduled: tir.PrimFunc, a_shape: tuple, b_shape: tuple, seed: int) -> None:
    """Build `scheduled` (a matmul ``a @ b``) and compare its output with numpy's."""
    rng = np.random.default_rng(seed)
    x, w = (rng.standard_normal(shape).astype("float32") for shape in (a_shape, b_shape))
    out = np.zeros((x @ w).shape, "float32")
    unity.build(scheduled)["main"](x, w, out)
    np.testing.assert_allclose(out, x @ w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_interpreted_schedule_matches(name: str) -> None:
    func = WORKLOADS[name]()
    expected = _reference(func)
    for ctx in (EAGER, NARROW):
        scheduled = schedule_primfunc(func, ctx)
        got = _args(func)
        tir.interpret(scheduled, *got)
        np.testing.assert_allclose(got[-1], expected[-1], rtol=1e-4, atol=1e-4, err_msg=name)


@pytest.mark.parametrize(
    "name",
    ["conv3x3", "conv_depthwise", "conv3x3s2", "conv_bias_relu", "conv_grouped_vector",
     "conv1x1_prime_width", "conv1x1s2", "conv_grouped_odd", "conv1x1_grouped_pixels",
     "conv_blocked3x3",
     "conv_blocked1x1", "conv_blocked_grouped", "conv_blocked_depthwise_s2",
     "conv_image_to_blocked", "matmul_tiled",
     "dense_bias_relu", "gemv_kn", "matmul_unit_batch", "matmul_symbolic_columns",
     "dense_few_rows", "matmul_symbolic_batch", "softmax", "layer_norm", "max_pool3x3s2"],
)  # fmt: skip
def test_built_schedule_matches(name: str) -> None:
    func = WORKLOADS[name]()
    expected = _reference(func)
    scheduled = schedule_primfunc(func, EAGER)
    assert ForKind.PARALLEL in _kinds(scheduled) and ForKind.VECTORIZED in _kinds(scheduled)
    got = _args(func)
    unity.build(scheduled)["main"](*got)
    np.testing.assert_allclose(got[-1], expected[-1], rtol=1e-4, atol=1e-4)


def test_gemv_threads_split_the_packed_panels() -> None:
    """Few rows: the parallel loop runs over `B`'s column panels (each thread streams its
    own), not over the one row."""
    scheduled = schedule_primfunc(WORKLOADS["gemv_kn"](), EAGER)
    parallel = [s for s in walk(scheduled.body) if isinstance(s, For) and s.kind is ForKind.PARALLEL]
    assert [int(s.extent.value) for s in parallel] == [2, 2]  # packing copy, then the panels
    packed = [b for b in scheduled.body.block.alloc_buffers if b.scope == "global"]
    assert [tuple(int(d.value) for d in b.shape) for b in packed] == [(2, 96, 32)]


@pytest.mark.parametrize("seq", [3, 16, 37, 64])
def test_symbolic_length_rows_are_vectorized_with_a_guarded_tail(seq: int) -> None:
    """A softmax over rows of symbolic length: 16-lane partial sums, the last chunk of a
    row guarded; built, it matches numpy whether or not the length is a multiple of 16."""
    func = WORKLOADS["softmax_symbolic_length"]()
    scheduled = schedule_primfunc(func, EAGER)
    assert ForKind.VECTORIZED in _kinds(scheduled)
    x = np.random.default_rng(seq).standard_normal((5, seq)).astype("float32")
    out = np.zeros_like(x)
    unity.build(scheduled)["main"](x, out)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_softmax_rows_of_no_vector_multiple_sum_in_vectors_with_a_guarded_last_one() -> None:
    """ViT's softmax over rows of 197 (no multiple of 8 or 16) over a symbolic batch: max
    and sum in 16-lane partial vectors, the last one guarded, and the row's intermediates
    private to each task of the loop fused from batch, heads and rows (it ran the sums
    lane by lane into batch-sized buffers: 0.29 ms against 0.049); built, it matches numpy."""
    from unity import te, topi
    from unity.ir.module import IRModule
    from unity.ir.transform import Sequential
    from unity.tir.stmt import Allocate
    from unity.tir.transform import lowering_passes

    batch = tir.SizeVar("batch", "int64")
    x = te.placeholder((batch, *_i64(3, 5, 37)), name="x")
    func = te.create_prim_func([x, topi.nn.softmax(x, -1)])
    scheduled = schedule_primfunc(func, EAGER)
    assert _vector_extents(scheduled).count("T.int64(16)") == 4  # max and sum: init, update
    upto_compaction = _upto_compaction(lowering_passes())
    compact = Sequential(upto_compaction)(IRModule({"main": scheduled}))["main"]
    shapes = [[d.script() for d in s.buffer.shape] for s in walk(compact.body) if isinstance(s, Allocate)]
    assert all("batch" not in " ".join(shape) for shape in shapes), shapes
    data = np.random.default_rng(7).standard_normal((2, 3, 5, 37)).astype("float32")
    out = np.zeros_like(data)
    unity.build(scheduled)["main"](data, out)
    e = np.exp(data - data.max(-1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("seq", [5, 32, 45])
@pytest.mark.parametrize("name", ["attention_scores", "attention_values"])
def test_attention_matmuls_over_a_symbolic_sequence_are_register_tiled(
    name: str, seq: int
) -> None:
    """Q K^T (symbolic columns: two-vector tiles, the last one guarded) and P V (symbolic
    reduction) get the register tile, not the simple schedule, and match numpy whether or
    not the sequence is a multiple of the tile."""
    func = WORKLOADS[name]()
    scheduled = schedule_primfunc(func, NARROW)
    assert any(b.scope == "local" for b in scheduled.body.block.alloc_buffers)  # the tile
    rng = np.random.default_rng(seq)
    heads, dim = (2, 8) if name == "attention_scores" else (2, 32)
    shapes = [(1, heads, seq, dim), (1, heads, dim, seq)] if name == "attention_scores" else [
        (1, heads, seq, seq), (1, heads, seq, dim)]  # fmt: skip
    a, b = (rng.standard_normal(s).astype("float32") for s in shapes)
    out = np.zeros((1, heads, seq, b.shape[-1]), "float32")
    unity.build(scheduled)["main"](a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


def test_a_blocked_to_plain_reshape_moves_in_square_tiles() -> None:
    """NCHW16c -> NCHW (a transpose and a reshape, fused) reads ``x[n, c // 16, h, w, c %
    16]``: contiguous within each aligned tile of 16 channels, so it goes in tiles like a
    transpose (MobileNet v2's two, 144 and 96 channels at 56 x 56: 0.168 / 0.137 ms as
    gathers, 0.062 / 0.046 in tiles); built, it matches numpy."""
    from unity import te, topi

    n, h, w = _image_vars()
    x = te.placeholder((n, *_i64(9), h, w, *_i64(16)), name="x")
    y = topi.reshape(topi.transpose(x, (0, 1, 4, 2, 3)), (n, *_i64(144), h, w))
    func = schedule_primfunc(te.create_prim_func([x, y]), EAGER)
    loops = [s for s in walk(func.body) if isinstance(s, For)]
    assert loops[-1].kind is ForKind.UNROLLED and int(loops[-1].extent.value) == 16
    rng = np.random.default_rng(4)
    data = rng.standard_normal((2, 9, 5, 19, 16)).astype("float32")
    out = np.zeros((2, 144, 5, 19), "float32")
    unity.build(func)["main"](data, out)
    np.testing.assert_array_equal(out, data.transpose(0, 1, 4, 2, 3).reshape(2, 144, 5, 19))


@pytest.mark.parametrize("seq", [5, 16, 37])
def test_transposes_move_in_square_tiles(seq: int) -> None:
    """A copy whose output's contiguous loop strides through its source (K^T after a
    reshape, NHWC -> NCHW) goes in 16 x 16 tiles: the source's contiguous loop unrolled
    innermost, the output's loop split above it (guarded when the sequence is not a
    multiple of 16); built, it matches numpy."""
    rng = np.random.default_rng(seq)
    func = schedule_primfunc(WORKLOADS["reshape_transpose_symbolic"](), NARROW)
    loops = [s for s in walk(func.body) if isinstance(s, For)]
    assert loops[-1].kind is ForKind.UNROLLED and int(loops[-1].extent.value) == 16
    x = rng.standard_normal((seq, 96)).astype("float32")
    out = np.zeros((3, 32, seq), "float32")
    unity.build(func)["main"](x, out)
    np.testing.assert_array_equal(out, x.reshape(seq, 3, 32).transpose(1, 2, 0))
    func = schedule_primfunc(WORKLOADS["transpose_nhwc_nchw"](), NARROW)
    assert [s for s in walk(func.body) if isinstance(s, For)][-1].kind is ForKind.UNROLLED
    x = rng.standard_normal((1, 5, 7, 32)).astype("float32")
    out = np.zeros((1, 32, 5, 7), "float32")
    unity.build(func)["main"](x, out)
    np.testing.assert_array_equal(out, x.transpose(0, 3, 1, 2))


def test_unit_batch_matmul_gets_the_register_tile() -> None:
    """``[1, m, k] x [k, n]`` reads ``a[0, i, k]`` (broadcasting's index into the unit
    batch): still a matmul, its tile in registers (it was a scalar loop, 300x slower)."""
    scheduled = schedule_primfunc(WORKLOADS["matmul_unit_batch"](), EAGER)
    assert [b.scope for b in scheduled.body.block.alloc_buffers] == ["local"]  # the tile
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((1, 16, 24)).astype("float32"), rng.standard_normal((24, 64))
    out = np.zeros((1, 16, 64), "float32")
    unity.build(scheduled)["main"](a, b.astype("float32"), out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("ctx", [EAGER, NARROW], ids=["avx512", "avx2"])
@pytest.mark.parametrize("rows", [13, 197])
def test_a_prime_row_count_gets_the_register_tile_with_a_guarded_last_tile(ctx, rows: int) -> None:
    """ViT's 197 tokens divide by no row tile: the rows still go in register tiles, the
    last one guarded (it ran untiled, 3x slower than onnxruntime on a ViT)."""
    from unity import te, topi

    a = te.placeholder((1, rows, 32), name="a")
    b = te.placeholder((32, 96), name="b")
    func = te.create_prim_func([a, b, topi.matmul(a, b)])
    scheduled = schedule_primfunc(func, ctx)
    assert [buf.scope for buf in scheduled.body.block.alloc_buffers] == ["global", "local"]  # packed B, tile
    _matches_numpy_matmul(scheduled, (1, rows, 32), (32, 96), seed=rows)


@pytest.mark.parametrize("rows", [20, 50, 196])
def test_rows_of_no_eight_or_six_divisor_take_a_guarded_eight_row_tile_on_avx512(rows: int) -> None:
    """With 32 vector registers, 20, 50 (2 x 25) and 196 (4 x 49) rows go in 8-row tiles,
    the last one guarded, not in their 4- or 2-row divisors (ConvNeXt's 196 x 1536 x
    384 0.94 -> 0.60 ms); built, they match numpy."""
    from unity import te, topi

    a = te.placeholder((1, rows, 32), name="a")
    b = te.placeholder((32, 64), name="b")
    scheduled = schedule_primfunc(te.create_prim_func([a, b, topi.matmul(a, b)]), EAGER)
    unrolled = [s for s in walk(scheduled.body) if isinstance(s, For) and s.kind is ForKind.UNROLLED]
    assert {int(s.extent.value) for s in unrolled} == {8}
    _matches_numpy_matmul(scheduled, (1, rows, 32), (32, 64), seed=rows)


@pytest.mark.parametrize("rows", [5, 37, 200])
def test_symbolic_rows_over_few_panels_run_the_row_tiles_in_parallel(rows: int) -> None:
    """ConvNeXt's 3136 x 384 -> 96 over a symbolic image size: 3 column panels would
    leave 2 threads unbalanced, so the row tiles go in parallel (above the symbolic
    batch), the panels inside each; built, it matches numpy at any row count."""
    from unity import te, topi

    batch, length = tir.SizeVar("batch", "int64"), tir.SizeVar("length", "int64")
    a = te.placeholder((batch, length, *_i64(24)), name="a")
    b = te.placeholder(_i64(24, 96), name="b")
    scheduled = schedule_primfunc(te.create_prim_func([a, b, topi.matmul(a, b)]), EAGER)
    assert _parallel_extents(scheduled)[-1] == "(length + T.int64(7)) // T.int64(8)"
    _matches_numpy_matmul(scheduled, (2, rows, 24), (24, 96), seed=rows)


def test_columns_no_vector_width_divides_get_the_register_tile_its_last_moved_back() -> None:
    """ViT's attention scores, 197 x 64 x 197 per head: 37 columns here (no multiple of
    8) take 32-column tiles, the last one moved back to end at the 37th column; built, it
    matches numpy.  A 2-D weight read ``B[j, k]`` with such columns cannot be packed in
    panels: it keeps the untiled schedule."""
    from unity import te, topi
    from unity.tir import lower

    batch = tir.SizeVar("batch", "int64")
    a = te.placeholder((batch, *_i64(2, 13, 8)), name="a")
    b = te.placeholder((batch, *_i64(2, 8, 37)), name="b")
    scheduled = schedule_primfunc(te.create_prim_func([a, b, topi.matmul(a, b)]), EAGER)
    assert any(buf.scope == "local" for buf in scheduled.body.block.alloc_buffers)  # the tile
    assert "T.min(i3_0 * T.int64(32), T.int64(5))" in str(lower(unity.IRModule({"main": scheduled})))
    _matches_numpy_matmul(scheduled, (2, 2, 13, 8), (2, 2, 8, 37), seed=5)
    x2 = te.placeholder(_i64(16, 32), name="x")
    w2 = te.placeholder(_i64(37, 32), name="w")
    dense = schedule_primfunc(te.create_prim_func([x2, w2, topi.nn.dense(x2, w2)]), EAGER)
    assert not any(buf.scope == "local" for buf in dense.body.block.alloc_buffers)


def test_symbolic_rows_of_constant_batches_spread_the_batches_over_the_threads() -> None:
    """Winograd's products over a dynamic batch: 16 points x ``rows`` (symbolic) x one panel
    of 16 columns.  The threads take the points (the one panel left a thread idle)."""
    from unity import te, topi

    rows = tir.Var("rows", "int64")
    a = te.placeholder((16, rows, 32), name="a")
    b = te.placeholder((16, 32, 16), name="b")
    func = te.create_prim_func([a, b, topi.matmul(a, b)])
    scheduled = schedule_primfunc(func, NARROW)
    parallel = [s for s in walk(scheduled.body) if isinstance(s, For) and s.kind is ForKind.PARALLEL]
    assert [int(s.extent.value) for s in parallel] == [16]
    _matches_numpy_matmul(scheduled, (16, 9, 32), (16, 32, 16), seed=2)


def test_row_blocks_under_a_symbolic_batch_keep_the_tile_in_registers() -> None:
    """ConvNeXt's 3136 x 96 -> 384 over a dynamic batch: the rows split into blocks, and
    blocks x panels go above the symbolic batch loop as one parallel loop, so the tile
    compacts to registers (fused with the batch it stayed a batch x 3136 x 384 buffer in
    memory: 2.9 ms against 0.64 at batch 1)."""
    from unity import te, topi
    from unity.ir.module import IRModule
    from unity.ir.transform import Sequential
    from unity.tir.stmt import Allocate
    from unity.tir.transform import lowering_passes

    batch = tir.SizeVar("batch", "int64")
    a = te.placeholder((batch, *_i64(64, 24)), name="a")
    b = te.placeholder(_i64(24, 32), name="b")
    func = te.create_prim_func([a, b, topi.matmul(a, b)])
    scheduled = schedule_primfunc(func, EAGER)
    assert _parallel_extents(scheduled) == ["T.int64(1)", "T.int64(8)"]  # packing, blocks
    upto_compaction = _upto_compaction(lowering_passes())
    compact = Sequential(upto_compaction)(IRModule({"main": scheduled}))["main"]
    tiles = [s.buffer for s in walk(compact.body) if isinstance(s, Allocate) and s.buffer.scope == "local"]
    assert [tuple(d.script() for d in t.shape) for t in tiles] == [("T.int64(1)", "T.int64(8)", "T.int64(32)")]
    _matches_numpy_matmul(scheduled, (3, 64, 24), (24, 32), seed=3)


@pytest.mark.parametrize("batch", [1, "symbolic"])
def test_attention_scores_over_a_symbolic_sequence_run_the_heads_in_parallel(batch) -> None:
    """T5's Q K^T, ``(b, 6, s, 64) x (b, 6, 64, s)`` over a symbolic sequence: the threads
    take the heads, the column panels (symbolic) inside each, and the tile compacts to
    registers.  With a batch of 1 the panels were fused with the heads, so the tile stayed
    a 6 x s x s buffer in memory (1.25 ms against 0.044 for the static build at s = 100);
    with a symbolic batch the 4 panels alone ran in parallel (0.077 ms, now 0.043)."""
    from unity import te, topi
    from unity.ir.module import IRModule
    from unity.ir.transform import Sequential
    from unity.tir.stmt import Allocate
    from unity.tir.transform import lowering_passes

    seq = tir.SizeVar("seq", "int64")
    b = tir.SizeVar("batch", "int64") if batch == "symbolic" else tir.const(1, "int64")
    q = te.placeholder((b, *_i64(6), seq, *_i64(16)), name="q")
    k = te.placeholder((b, *_i64(6, 16), seq), name="k")
    scheduled = schedule_primfunc(te.create_prim_func([q, k, topi.matmul(q, k)]), EAGER)
    heads = "T.int64(6)" if batch == 1 else "T.int64(6) * batch"
    assert _parallel_extents(scheduled) == [heads]
    upto_compaction = _upto_compaction(lowering_passes())
    compact = Sequential(upto_compaction)(IRModule({"main": scheduled}))["main"]
    tiles = [s.buffer for s in walk(compact.body) if isinstance(s, Allocate) and s.buffer.scope == "local"]
    assert [tuple(d.script() for d in t.shape) for t in tiles] == [("T.int64(1)",) * 2 + ("T.int64(8)", "T.int64(32)")]
    n = 1 if batch == 1 else 2
    _matches_numpy_matmul(scheduled, (n, 6, 37, 16), (n, 6, 16, 37), seed=5)


@pytest.mark.parametrize(("rows", "columns", "prefetched"), [
    ("symbolic", 256, True), (1024, 256, False), ("symbolic", 1000, False),
])  # fmt: skip
def test_matmul_tiles_prefetch_their_panel_of_weights_over_few_rows(rows, columns, prefetched) -> None:
    """A matmul over a symbolic sequence prefetches its panel of packed weights 16 steps
    ahead in the reduction loop (the first row tile of each panel streams it from L3);
    not over 1024 rows (each panel serves 128 row tiles from L2), nor with panels of 8
    columns (32 bytes a row: a GEMV's classifier).  Built, the result matches numpy."""
    from unity import te, topi

    m = tir.SizeVar("rows", "int64") if rows == "symbolic" else tir.const(rows, "int64")
    a = te.placeholder((m, *_i64(48)), name="a")
    b = te.placeholder(_i64(48, columns), name="b")
    scheduled = schedule_primfunc(te.create_prim_func([a, b, topi.matmul(a, b)]), EAGER)
    annotated = [s.annotations["software_prefetch"] for s in walk(scheduled.body)
                 if isinstance(s, For) and "software_prefetch" in s.annotations]  # fmt: skip
    assert [ahead for _, ahead in annotated] == ([16] if prefetched else [])
    lib = unity.build(scheduled)
    assert ("@llvm.prefetch" in lib.get_source("ll")) == prefetched
    _matches_numpy_matmul(scheduled, (37 if rows == "symbolic" else rows, 48), (48, columns), seed=6)


@pytest.mark.parametrize(("rows", "tile"), [(49, 7), (28, 7), (196, 8), (56, 8), (52, 8)])
def test_matmul_rows_that_seven_divides_take_7_row_tiles_where_8_would_waste(rows, tile) -> None:
    """49 rows (a 7 x 7 image's pixels, Winograd's 49 tiles) in 8-row tiles compute 56:
    7-row tiles compute none past them (49 x 768 x 3072 and back 2.49 -> 2.21 ms); at 196
    the guarded 8-row tiles waste 2% and ran faster.  Built, the result matches numpy."""
    from unity import te, topi

    a = te.placeholder(_i64(rows, 64), name="a")
    b = te.placeholder(_i64(64, 64), name="b")
    scheduled = schedule_primfunc(te.create_prim_func([a, b, topi.matmul(a, b)]), EAGER)
    unrolled = {int(s.extent.value) for s in walk(scheduled.body)
                if isinstance(s, For) and s.kind is ForKind.UNROLLED}  # fmt: skip
    assert unrolled == {tile}
    _matches_numpy_matmul(scheduled, (rows, 64), (64, 64), seed=7)


def _upto_compaction(passes: list) -> list:
    """The lowering passes up to `CompactBufferAllocation`, included."""
    names = [type(p).__name__ for p in passes]
    return passes[: names.index("CompactBufferAllocation") + 1]


def _image_vars() -> tuple[tir.Var, tir.Var, tir.Var]:
    return tir.SizeVar("batch", "int64"), tir.SizeVar("height", "int64"), tir.SizeVar("width", "int64")


def _i64(*dims: int) -> tuple[tir.IntImm, ...]:
    """Constant dims as int64, as the ONNX importer's shapes (int32 channels with int64
    sizes leave casts in the indices that the conv rules do not read through)."""
    return tuple(tir.const(d, "int64") for d in dims)


def _vector_extents(func: tir.PrimFunc) -> list[str]:
    return [s.extent.script() for s in walk(func.body) if isinstance(s, For) and s.kind is ForKind.VECTORIZED]


def _parallel_extents(func: tir.PrimFunc) -> list[str]:
    return [s.extent.script() for s in walk(func.body) if isinstance(s, For) and s.kind is ForKind.PARALLEL]


@pytest.mark.parametrize("hw", [(7, 7), (3, 5), (14, 9)])
def test_a_global_mean_over_a_symbolic_image_size_vectorizes_its_lanes(hw) -> None:
    """An SE block's mean over ``H x W`` of NCHW16c data, both symbolic: the 16 lanes in a
    vector accumulated over the window, as for a constant size (it ran as one fused
    scalar loop, 10x slower inside EfficientNet)."""
    from unity import te

    n, h, w = _image_vars()
    x = te.placeholder((n, 4, h, w, 16), name="x")
    ry, rx = te.reduce_axis((0, h), name="ry"), te.reduce_axis((0, w), name="rx")
    s = te.compute((n, 4, 16), lambda b, c, l: te.sum(x[b, c, ry, rx, l], axis=[ry, rx]), name="s")
    scheduled = schedule_primfunc(te.create_prim_func([x, s]), EAGER)
    assert _vector_extents(scheduled) == ["16"] * 3  # init, window, write-back
    data = np.random.default_rng(0).standard_normal((1, 4, *hw, 16)).astype("float32")
    out = np.zeros((1, 4, 16), "float32")
    unity.build(scheduled)["main"](data, out)
    np.testing.assert_allclose(out, data.sum((2, 3)), rtol=1e-5, atol=1e-5)


def test_a_global_mean_over_a_large_static_image_vectorizes_its_lanes() -> None:
    """EfficientNet's squeeze-and-excitation mean over 112x112 of 2 blocks of 16 channels
    (a window of 12544): the lanes in a vector over the window, the threads over the
    blocks (it ran as 32 scalar sums, each reading every 16th float: 7x slower)."""
    from unity import te, topi

    x = te.placeholder((1, 2, 112, 112, 16), name="x")
    scheduled = schedule_primfunc(te.create_prim_func([x, topi.mean(x, [2, 3], True)]), EAGER)
    assert _vector_extents(scheduled) == ["16"] * 3  # init, window, write-back
    assert _parallel_extents(scheduled) == ["2"]
    data = np.random.default_rng(0).standard_normal((1, 2, 112, 112, 16)).astype("float32")
    out = np.zeros((1, 2, 1, 1, 16), "float32")
    unity.build(scheduled)["main"](data, out)
    np.testing.assert_allclose(out, data.mean((2, 3), keepdims=True), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("hw", [(56, 56), (14, 19), (4, 5)])
def test_a_max_pool_over_a_symbolic_image_size_vectorizes_its_rows(hw) -> None:
    """A 3x3 stride-2 max pool over a symbolic batch and size: the output row in vectors
    of 8 under the window, the threads over the channels (it ran as one fused scalar loop,
    10x slower inside ShuffleNet); matches numpy with rows that are whole vectors, a
    partial last one, and shorter than one."""
    from unity import te, topi

    n, h, w = _image_vars()
    x = te.placeholder((n, 24, h, w), name="x")
    scheduled = schedule_primfunc(te.create_prim_func([x, topi.nn.max_pool2d(x, 3, 2, 1)]), EAGER)
    assert _vector_extents(scheduled) == ["T.int64(8)"] * 3  # init, window, write-back
    assert _parallel_extents(scheduled) == ["24"]
    data = np.random.default_rng(1).standard_normal((1, 24, *hw)).astype("float32")
    oh, ow = (hw[0] - 1) // 2 + 1, (hw[1] - 1) // 2 + 1
    out = np.zeros((1, 24, oh, ow), "float32")
    unity.build(scheduled)["main"](data, out)
    padded = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    want = np.max([padded[:, :, i:i + 2 * oh:2, j:j + 2 * ow:2] for i in range(3) for j in range(3)], axis=0)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("hw", [(23, 23), (9, 14)])
def test_a_blocked_max_pool_over_a_symbolic_size_runs_its_rows_in_parallel(hw) -> None:
    """SqueezeNet's max pool (ceil mode) over 4 blocks of 16 channels, a symbolic batch and
    size: too few channel blocks for the threads, so they take the output rows (each
    sweeps whole rows; the columns, hoisted above the rows, ran 2x slower); matches numpy."""
    from unity import te, topi

    n, h, w = _image_vars()
    x = te.placeholder((n, *_i64(4), h, w, *_i64(16)), name="x")
    pool = topi.nn.max_pool2d(x, 3, 2, 0, ceil_mode=True, layout="NCHW16c")
    scheduled = schedule_primfunc(te.create_prim_func([x, pool]), EAGER)
    (parallel,) = _parallel_extents(scheduled)
    assert "height" in parallel and "width" not in parallel
    data = np.random.default_rng(2).standard_normal((1, 4, *hw, 16)).astype("float32")
    oh, ow = (-(-(hw[0] - 3) // 2) + 1, -(-(hw[1] - 3) // 2) + 1)
    out = np.zeros((1, 4, oh, ow, 16), "float32")
    unity.build(scheduled)["main"](data, out)
    padded = np.pad(data, ((0, 0), (0, 0), (0, 2), (0, 2), (0, 0)), constant_values=-np.inf)
    want = np.max([padded[:, :, i:i + 2 * oh:2, j:j + 2 * ow:2] for i in range(3) for j in range(3)], axis=0)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("hw", [(14, 14), (7, 7), (3, 5)])
def test_a_pointwise_conv_over_a_symbolic_image_size_tiles_its_flattened_pixels(hw) -> None:
    """ShuffleNet's 1x1 conv over 116 channels (no 16-channel blocks), batch and size
    symbolic: tiles of 2 vectors of the flattened pixels (rows crossed), the threads over
    the pixel tiles, not the batch, which is often 1 (it ran row tiles of 32 columns for
    rows of 14 and 7: 4x slower); matches numpy above and below one tile of pixels."""
    from unity import te, topi

    n, h, w = _image_vars()
    x = te.placeholder((n, *_i64(116), h, w), name="x")
    k = te.placeholder(_i64(116, 116, 1, 1), name="k")
    scheduled = schedule_primfunc(te.create_prim_func([x, k, topi.nn.conv2d(x, k)]), EAGER)
    assert _vector_extents(scheduled) == ["T.int64(32)"] * 3
    (parallel,) = _parallel_extents(scheduled)
    assert "height" in parallel and "batch" not in parallel
    rng = np.random.default_rng(2)
    data, weight = rng.standard_normal((1, 116, *hw)).astype("float32"), rng.standard_normal((116, 116, 1, 1)).astype("float32")
    out = np.zeros((1, 116, *hw), "float32")
    unity.build(scheduled)["main"](data, weight, out)
    np.testing.assert_allclose(out, np.einsum("nchw,oc->nohw", data, weight[:, :, 0, 0]), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("hw", [(7, 7), (14, 16), (3, 5), (9, 30)])
def test_a_depthwise_conv_over_a_symbolic_image_size_tiles_rows_by_their_width(hw) -> None:
    """A 3x3 depthwise NCHW conv over 116 channels with a symbolic size: a version per
    range of widths, columns in vectors of 16, 8 or 4 (`width_versions`; one version in
    vectors of 7 filled half of each AVX-512 vector); matches numpy in each."""
    from unity import te, topi

    n, h, w = _image_vars()
    x = te.placeholder((n, *_i64(116), h, w), name="x")
    k = te.placeholder(_i64(116, 1, 3, 3), name="k")
    conv = topi.nn.conv2d(x, k, padding=1, groups=116)
    scheduled = schedule_primfunc(te.create_prim_func([x, k, conv]), EAGER)
    assert {"T.int64(16)", "T.int64(8)", "T.int64(4)"} <= set(_vector_extents(scheduled))
    rng = np.random.default_rng(3)
    data, weight = rng.standard_normal((1, 116, *hw)).astype("float32"), rng.standard_normal((116, 1, 3, 3)).astype("float32")
    out = np.zeros((1, 116, *hw), "float32")
    unity.build(scheduled)["main"](data, weight, out)
    padded = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = sum(padded[:, :, i:i + hw[0], j:j + hw[1]] * weight[None, :, 0, i, j, None, None] for i in range(3) for j in range(3))
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_an_elementwise_nest_over_a_symbolic_image_size_keeps_its_rows_nested() -> None:
    """NCHW16c data over a symbolic batch and size: the threads take the fused batch,
    channel blocks and rows, each row's columns stay a loop inside (fusing them too made
    every vector recompute its position from `//` and `%`: SqueezeNet's concats 5.6x
    slower than static); matches numpy."""
    from unity import te

    n, h, w = _image_vars()
    x = te.placeholder((n, *_i64(8), h, w, *_i64(16)), name="x")
    y = te.compute(x.shape, lambda *i: x[i] + tir.const(1.0, "float32"), name="y")
    scheduled = schedule_primfunc(te.create_prim_func([x, y]), EAGER)
    loops = [s for s in walk(scheduled.body) if isinstance(s, For)]
    assert [lp.kind for lp in loops] == [ForKind.PARALLEL, ForKind.SERIAL, ForKind.VECTORIZED]
    assert loops[1].extent.script() == "width"
    data = np.random.default_rng(4).standard_normal((1, 8, 5, 7, 16)).astype("float32")
    out = np.zeros_like(data)
    unity.build(scheduled)["main"](data, out)
    np.testing.assert_array_equal(out, data + 1)


@pytest.mark.parametrize(("h", "w", "fused"), [(14, 14, True), (7, 9, True), (8, 32, False)])
def test_short_nchw_rows_are_vectorized_as_one_run(h, w, fused) -> None:
    """A squeeze-and-excitation scale of NCHW pixels: rows of 14 (or 9) that whole vectors
    do not cover go with the loop of rows into one contiguous vector loop (196 = 12 x 16
    + 4); rows of 32 stay; a per-row operand keeps the rows apart; matches numpy."""
    from unity import te, topi

    a = te.placeholder((1, 208, 1, 1), name="a")
    b = te.placeholder((1, 208, h, w), name="b")
    scheduled = schedule_primfunc(te.create_prim_func([a, b, topi.multiply(a, b)]), EAGER)
    assert _vector_extents(scheduled) == [str(h * w) if fused else str(w)]
    rng = np.random.default_rng(5)
    data_a = rng.standard_normal((1, 208, 1, 1)).astype("float32")
    data_b = rng.standard_normal((1, 208, h, w)).astype("float32")
    out = np.zeros_like(data_b)
    unity.build(scheduled)["main"](data_a, data_b, out)
    np.testing.assert_array_equal(out, data_a * data_b)
    r = te.placeholder((1, 208, h, 1), name="r")  # one value per row: no run across rows
    per_row = schedule_primfunc(te.create_prim_func([r, b, topi.multiply(r, b)]), EAGER)
    assert _vector_extents(per_row) == [str(w)]


@pytest.mark.parametrize(("hw", "vectors"), [((56, 56), 2), ((28, 28), 2), ((7, 7), 0)])
def test_an_nchw_global_mean_sums_its_rows_and_columns_as_one_run(hw, vectors) -> None:
    """RegNet's squeeze-and-excitation mean over NCHW pixels: rows and columns fused, each
    channel's sum accumulated in vectors of 16 (init and update vectorized) and reduced at
    the end; 7x7 stays one float at a time (the division's 1 x 1 row is the last vector
    loop either way); matches numpy."""
    from unity import te, topi

    x = te.placeholder((1, 48, *hw), name="x")
    scheduled = schedule_primfunc(te.create_prim_func([x, topi.mean(x, [2, 3], True)]), EAGER)
    assert _vector_extents(scheduled) == ["16"] * vectors + ["1"]
    data = np.random.default_rng(hw[0]).standard_normal((1, 48, *hw)).astype("float32")
    out = np.zeros((1, 48, 1, 1), "float32")
    unity.build(scheduled)["main"](data, out)
    np.testing.assert_allclose(out, data.mean((2, 3), keepdims=True), rtol=1e-4, atol=1e-5)


def test_an_nchw_global_mean_over_a_symbolic_size_sums_in_vectors() -> None:
    """The same over a symbolic batch and size: the fused run's bindings divide by the
    symbolic width, which `rfactor` takes for a shape, not a loop outside its scope (it
    refused, and the sum ran one float at a time); full vectors and a guarded last one;
    matches numpy below, at and off a vector."""
    from unity import te, topi

    n, h, w = _image_vars()
    x = te.placeholder((n, *_i64(48), h, w), name="x")
    scheduled = schedule_primfunc(te.create_prim_func([x, topi.mean(x, [2, 3], True)]), EAGER)
    assert _vector_extents(scheduled)[:2] == ["T.int64(16)"] * 2
    built = unity.build(scheduled)["main"]
    for b, rows, cols in [(1, 1, 1), (2, 5, 3), (1, 4, 4), (1, 9, 13), (1, 56, 56)]:
        data = np.random.default_rng(rows).standard_normal((b, 48, rows, cols)).astype("float32")
        out = np.zeros((b, 48, 1, 1), "float32")
        built(data, out)
        np.testing.assert_allclose(out, data.mean((2, 3), keepdims=True), rtol=1e-4, atol=1e-5)
