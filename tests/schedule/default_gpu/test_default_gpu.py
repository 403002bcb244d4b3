"""Default GPU schedules: any TE function gets blocks x threads and runs right in the emulator."""

import numpy as np
import pytest

import unity
from unity import te, tir, topi
from unity.codegen.cuda_build import nvcc_path
from unity.ir.module import IRModule
from unity.schedule.default_gpu import apply_default_gpu_schedules
from unity.schedule.default_gpu.rules import reduction_threads
from unity.tir.gpu_emulator import emulate
from unity.tir.interpreter import interpret
from unity.tir.transform.gpu import lower_cuda
from unity.topi.testing import conv2d_nchw_python

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 100), dtype=np.float32)


def _softmax():
    x = te.placeholder((4, 100), name="x")
    e = np.exp(X - X.max(1, keepdims=True))
    return [x, topi.nn.softmax(x)], [X], e / e.sum(1, keepdims=True)


def _layer_norm():
    x, g, b = te.placeholder((4, 100), name="x"), te.placeholder((100,), name="g"), te.placeholder((100,), name="b")
    gv, bv = RNG.standard_normal(100, dtype=np.float32), RNG.standard_normal(100, dtype=np.float32)
    ref = (X - X.mean(1, keepdims=True)) / np.sqrt(X.var(1, keepdims=True) + 1e-5) * gv + bv
    return [x, g, b, topi.nn.layer_norm(x, g, b, axes=[1])], [X, gv, bv], ref


def _conv2d():
    x, w = te.placeholder((1, 3, 8, 8), name="X"), te.placeholder((4, 3, 3, 3), name="W")
    xv = RNG.standard_normal((1, 3, 8, 8), dtype=np.float32)
    wv = RNG.standard_normal((4, 3, 3, 3), dtype=np.float32)
    return [x, w, topi.nn.conv2d(x, w, strides=1, padding=1)], [xv, wv], conv2d_nchw_python(xv, wv, 1, 1)


def _matmul():
    a, b = te.placeholder((16, 24), name="A"), te.placeholder((24, 8), name="B")
    av, bv = RNG.standard_normal((16, 24), dtype=np.float32), RNG.standard_normal((24, 8), dtype=np.float32)
    return [a, b, topi.matmul(a, b)], [av, bv], av @ bv


@pytest.mark.parametrize("make", [_softmax, _layer_norm, _conv2d, _matmul])
def test_default_schedule_matches_numpy_emulated_built_and_interpreted(make):
    tensors, inputs, ref = make()
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func(tensors)}))
    assert mod["main"].attrs["tir.is_scheduled"]
    _matches_everywhere(mod, inputs, ref)


def _matches_everywhere(mod, inputs, ref):
    """The scheduled module matches `ref` emulated, built for llvm (threads as loops) and
    interpreted; nvcc (where installed) compiles its CUDA C."""
    for run in (lambda *a: emulate(lower_cuda(mod), *a), lambda *a: unity.build(mod, "llvm")["main"](*a),
                lambda *a: interpret(mod["main"], *a)):
        out = np.zeros(ref.shape, np.float32)
        run(*inputs, out)
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    if nvcc_path() is not None:
        unity.build(mod, "cuda -arch=sm_90").get_source("ptx")


def test_symbolic_reduction_extent():
    n = tir.SizeVar("n", "int32")
    x = te.placeholder((3, n), name="x")
    k = te.reduce_axis((0, n), name="k")
    y = te.compute((3,), lambda i: te.sum(x[i, k] * x[i, k], axis=k), name="y")
    lowered = lower_cuda(apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([x, y])})))
    for size in (1, 300):
        xv = RNG.random((3, size), dtype=np.float32)
        yv = np.zeros(3, np.float32)
        emulate(lowered, xv, yv)
        np.testing.assert_allclose(yv, (xv * xv).sum(1), rtol=1e-5)


def test_scheduled_functions_are_left_alone():
    a = te.placeholder((8,), name="a")
    mod = IRModule({"main": te.create_prim_func([a, te.compute((8,), lambda i: a[i] + 1.0, name="b")])})
    once = apply_default_gpu_schedules(mod)
    assert apply_default_gpu_schedules(once)["main"] is once["main"]


def test_reduction_thread_counts_are_powers_of_two():
    assert [reduction_threads(n) for n in (1, 3, 32, 100, 256, 5000)] == [1, 2, 32, 64, 256, 256]


def test_tile_divisible_matmul_gets_shared_and_register_tiles():
    a, b = te.placeholder((128, 64), name="A"), te.placeholder((64, 128), name="B")
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([a, b, topi.matmul(a, b)])}))
    src = unity.build(mod, "cuda").get_source()
    # 16 blocks of 32 x 32 (64 x 64 tiles would make only 4 thread blocks)
    assert "__shared__ __align__(16) float A_shared[256];" in src  # 32 x 8 tile
    assert "__align__(16) float T_matmul_local[4];" in src         # 2 x 2 per thread
    av, bv = RNG.standard_normal((128, 64), dtype=np.float32), RNG.standard_normal((64, 128), dtype=np.float32)
    out = np.zeros((128, 128), np.float32)
    emulate(lower_cuda(mod), av, bv, out)
    np.testing.assert_allclose(out, av @ bv, rtol=1e-4, atol=1e-4)


def _dense_ragged():
    a, w = te.placeholder((100, 20), name="A"), te.placeholder((72, 20), name="W")
    k = te.reduce_axis((0, 20), name="k")
    c = te.compute((100, 72), lambda i, j: te.sum(a[i, k] * w[j, k], axis=k), name="C")
    av, wv = RNG.standard_normal((100, 20), dtype=np.float32), RNG.standard_normal((72, 20), dtype=np.float32)
    return [a, w, c], [av, wv], av @ wv.T


def _batch_matmul():
    a, b = te.placeholder((3, 33, 20), name="A"), te.placeholder((3, 20, 40), name="B")
    av = RNG.standard_normal((3, 33, 20), dtype=np.float32)
    bv = RNG.standard_normal((3, 20, 40), dtype=np.float32)
    return [a, b, topi.matmul(a, b)], [av, bv], av @ bv


def _conv(n, ci, hw, co, stride):
    x, w = te.placeholder((n, ci, hw, hw), name="X"), te.placeholder((co, ci, 3, 3), name="W")
    xv = RNG.standard_normal((n, ci, hw, hw), dtype=np.float32)
    wv = RNG.standard_normal((co, ci, 3, 3), dtype=np.float32)
    ref = conv2d_nchw_python(xv, wv, stride, 1)
    return [x, w, topi.nn.conv2d(x, w, strides=stride, padding=1)], [xv, wv], ref


def _grouped_conv():
    """2 groups of 4 input and 16 output channels: a batch of 2 GEMMs over blockIdx.z."""
    x, w = te.placeholder((1, 8, 9, 9), name="X"), te.placeholder((32, 4, 3, 3), name="W")
    xv = RNG.standard_normal((1, 8, 9, 9), dtype=np.float32)
    wv = RNG.standard_normal((32, 4, 3, 3), dtype=np.float32)
    ref = np.concatenate([conv2d_nchw_python(xv[:, 4 * g:4 * g + 4], wv[16 * g:16 * g + 16], 1, 1)
                          for g in range(2)], axis=1)
    return [x, w, topi.nn.conv2d(x, w, strides=1, padding=1, groups=2)], [xv, wv], ref


@pytest.mark.parametrize("make", [
    _dense_ragged, _batch_matmul, lambda: _conv(2, 5, 9, 24, 1), lambda: _conv(1, 8, 12, 16, 2),
    _grouped_conv,
], ids=["dense_ragged", "batch_matmul", "conv_padded", "conv_strided", "conv_grouped"])
def test_gemm_shaped_blocks_get_shared_tiles_with_guards(make):
    """Dense, batch matmul and conv2d, grouped too (an implicit GEMM: the im2col matrix is
    never stored, its tiles are gathered into shared memory) get the tiled rule at sizes that do not
    divide into tiles; the emulator, an llvm build and the interpreter agree with numpy."""
    tensors, inputs, ref = make()
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func(tensors)}))
    scopes = {b.name: b.scope for b in _allocs(mod["main"])}
    assert sorted(s for s in scopes.values()) == ["local", "shared", "shared"], scopes
    _matches_everywhere(mod, inputs, ref)


def test_thin_gemms_stay_cross_thread_reductions():
    a, w = te.placeholder((1, 256), name="A"), te.placeholder((64, 256), name="W")
    k = te.reduce_axis((0, 256), name="k")
    c = te.compute((1, 64), lambda i, j: te.sum(a[i, k] * w[j, k], axis=k), name="C")
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([a, w, c])}))
    assert not _allocs(mod["main"]) and 'thread="threadIdx.x"' in mod.script()


def _allocs(func):
    from unity.schedule.tree import walk
    from unity.tir.stmt import Block

    return [b for s in walk(func.body) if isinstance(s, Block) for b in s.alloc_buffers]


def test_gemm_over_a_symbolic_sequence_is_tiled_and_guarded():
    """``[batch, seq, 24] x [24, 20]`` and attention's ``[batch, 2, seq, seq] x [batch, 2,
    seq, 16]``: symbolic rows (and a symbolic reduction) take the tiled rule; the shared
    tiles are sized per thread block, not per sequence."""
    b, s = tir.SizeVar("b", "int32"), tir.SizeVar("s", "int32")
    x, w = te.placeholder((b, s, 24), name="x"), te.placeholder((24, 20), name="w")
    k = te.reduce_axis((0, 24), name="k")
    y = te.compute((b, s, 20), lambda i, j, n: te.sum(x[i, j, k] * w[k, n], axis=k), name="y")
    p, v = te.placeholder((b, 2, s, s), name="p"), te.placeholder((b, 2, s, 16), name="v")
    r = te.reduce_axis((0, s), name="r")
    o = te.compute((b, 2, s, 16), lambda i, h, q, d: te.sum(p[i, h, q, r] * v[i, h, r, d], axis=r), name="o")
    for tensors, make in (([x, w, y], lambda n, m: [RNG.standard_normal((n, m, 24), dtype=np.float32),
                                                    RNG.standard_normal((24, 20), dtype=np.float32)]),
                          ([p, v, o], lambda n, m: [RNG.standard_normal((n, 2, m, m), dtype=np.float32),
                                                    RNG.standard_normal((n, 2, m, 16), dtype=np.float32)])):
        mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func(tensors)}))
        assert sorted(buf.scope for buf in _allocs(mod["main"])) == ["local", "shared", "shared"]
        lowered = lower_cuda(mod)
        for n, m in ((1, 3), (2, 70)):
            args = make(n, m)
            ref = args[0] @ args[1]
            out = np.zeros(ref.shape, np.float32)
            emulate(lowered, *args, out)
            np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
        if nvcc_path() is not None:
            assert "_shared[512]" in unity.build(mod, "cuda -arch=sm_90").get_source("cuda")


def test_short_reductions_run_serially_one_thread_per_output():
    """A 3x3 max-pool: 9 elements per output, one thread each (not a block of 8 threads
    per output); a long reduction keeps its threads."""
    x = te.placeholder((2, 3, 9, 9), name="x")
    y = topi.nn.max_pool2d(x, 3, strides=2, padding=1)
    xv = RNG.standard_normal((2, 3, 9, 9), dtype=np.float32)
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([x, y])}))
    lowered = lower_cuda(mod)
    (launch,) = [s for s in lowered.script().splitlines() if "tir.cuda.launch" in s]
    assert '"main_kernel0", 1, 1, 1, 150, 1, 1' in launch  # 2 * 3 * 5 * 5 outputs: one block of 150 threads
    out = np.zeros((2, 3, 5, 5), np.float32)
    emulate(lowered, xv, out)
    pad = np.pad(xv, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    ref = np.max([pad[:, :, i:i + 9:2, j:j + 9:2] for i in range(3) for j in range(3)], axis=0)
    np.testing.assert_allclose(out, ref)


def test_conv_epilogue_is_computed_in_the_write_back_and_copies_are_coalesced():
    """conv2d + bias + residual + ReLU is one kernel: the epilogue reads the accumulator
    from registers (the only guarded step: the tiles are padded).  The output channels are M, the pixels N (threadIdx.x writes
    consecutive pixels); the im2col tile is copied with the pixels fastest, the weight
    tile with k fastest (each along its source's contiguous dimension)."""
    x, w = te.placeholder((1, 4, 10, 10), name="X"), te.placeholder((20, 4, 3, 3), name="W")
    bias, res = te.placeholder((20, 1, 1), name="B"), te.placeholder((1, 20, 10, 10), name="R")
    c = topi.nn.conv2d(x, w, strides=1, padding=1)
    a = te.compute(c.shape, lambda n, o, h, q: c[n, o, h, q] + bias[o, 0, 0], name="add")
    r = te.compute(c.shape, lambda n, o, h, q: te.max(a[n, o, h, q] + res[n, o, h, q], te.const(0.0)),
                   name="relu")
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([x, w, bias, res, r])}))
    text = mod.script()
    assert 'T.block("relu")' not in text and 'T.block("add")' not in text
    assert "relu[0, v0_2, v1_2 // 10, v1_2 % 10] = T.max(T_conv2d_reindex_pad[v0_2, v1_2] + B[v0_2, 0, 0]" in text
    # 20 x 100 x 36 padded to whole tiles: zero-filled shared tiles, no guard on the FMAs
    assert "T.where" not in text.split('T.block("T_conv2d_update")')[1].split("T.block")[0]
    data_copy = text.split('T.block("T_pad_data_reindex_pad_shared")')[1].split("T.where")[0]
    weight_copy = text.split('T.block("W_reindex_pad_shared")')[1].split("T.where")[0]
    assert "fused_2)) % 32)" in data_copy.splitlines()[1] and "fused_2)) % 8)" in weight_copy.splitlines()[2]
    shapes = ((1, 4, 10, 10), (20, 4, 3, 3), (20, 1, 1), (1, 20, 10, 10))
    vals = [RNG.standard_normal(shape, dtype=np.float32) for shape in shapes]
    lowered = lower_cuda(mod)
    assert sum("tir.cuda.launch" in line for line in lowered.script().splitlines()) == 1
    out = np.zeros((1, 20, 10, 10), np.float32)
    emulate(lowered, *vals, out)
    ref = np.maximum(conv2d_nchw_python(vals[0], vals[1], 1, 1) + vals[2] + vals[3], 0)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("make", [_softmax, _layer_norm])
def test_row_reductions_and_their_use_are_one_kernel_per_row(make):
    """Softmax (max, sum of exp, normalize) and layer norm (sum, sum of squares,
    normalize): one kernel, a thread block per row, the per-row results in shared memory
    (the emulator checks the barriers between their writes and reads)."""
    tensors, inputs, ref = make()
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func(tensors)}))
    assert {b.scope for b in _allocs(mod["main"])} == {"shared"}
    lowered = lower_cuda(mod)
    assert sum("tir.cuda.launch" in line for line in lowered.script().splitlines()) == 1
    out = np.zeros(ref.shape, np.float32)
    emulate(lowered, *inputs, out)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_row_chain_over_symbolic_rows():
    n = tir.SizeVar("n", "int32")
    x = te.placeholder((n, 2, 40), name="x")
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([x, topi.nn.softmax(x)])}))
    lowered = lower_cuda(mod)
    for rows in (1, 3):
        xv = RNG.standard_normal((rows, 2, 40), dtype=np.float32)
        out = np.zeros_like(xv)
        emulate(lowered, xv, out)
        e = np.exp(xv - xv.max(-1, keepdims=True))
        np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_a_long_reduction_over_few_tiles_is_split_across_thread_blocks():
    """32 output channels x 16 pixels is one 32 x 32 tile; its K = 256 * 9 = 2304 is split
    in four parts (thread blocks over blockIdx.z, partial sums added by a second kernel).
    A shorter K (1152) is not split."""
    def conv(ci):
        x, w = te.placeholder((1, ci, 4, 4), name="X"), te.placeholder((32, ci, 3, 3), name="W")
        return IRModule({"main": te.create_prim_func([x, w, topi.nn.conv2d(x, w, strides=1, padding=1)])})

    assert "blockIdx.z" not in apply_default_gpu_schedules(conv(128)).script()
    mod = apply_default_gpu_schedules(conv(256))
    assert 'T.thread_binding(4, thread="blockIdx.z")' in mod.script()
    lowered = lower_cuda(mod)
    assert sum("tir.cuda.launch" in line for line in lowered.script().splitlines()) == 2
    xv = RNG.standard_normal((1, 256, 4, 4), dtype=np.float32)
    wv = RNG.standard_normal((32, 256, 3, 3), dtype=np.float32)
    out = np.zeros((1, 32, 4, 4), np.float32)
    emulate(lowered, xv, wv, out)
    np.testing.assert_allclose(out, conv2d_nchw_python(xv, wv, 1, 1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows", [4, 40])  # a short reduction (32 elements) and a long one
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_a_reduction_to_one_value_runs_in_one_thread_block(rows, dtype):
    shape = (tir.const(rows, dtype), tir.const(8, dtype))
    a = te.placeholder(shape, "float32", "a")
    k0, k1 = te.reduce_axis((tir.const(0, dtype), shape[0]), "k0"), te.reduce_axis((tir.const(0, dtype), shape[1]), "k1")
    out = te.compute((), lambda: te.max(a[k0, k1], axis=[k0, k1]), "out")
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([a, out])}))
    av = np.random.default_rng(rows).standard_normal((rows, 8)).astype("float32")
    _matches_everywhere(mod, [av], np.array(av.max(), "float32"))


def test_the_serial_fallback_of_a_reduction_to_one_value():
    from unity.schedule import Schedule
    from unity.schedule.default.analysis import block_infos
    from unity.schedule.default_gpu.rules import schedule_serial_reduction

    a = te.placeholder((12, 5), "float32", "a")
    k0, k1 = te.reduce_axis((0, 12), "k0"), te.reduce_axis((0, 5), "k1")
    out = te.compute((), lambda: te.sum(a[k0, k1], axis=[k0, k1]), "out")
    func = te.create_prim_func([a, out])
    sch = Schedule(func)
    schedule_serial_reduction(sch, block_infos(func)[0])
    av = np.random.default_rng(3).standard_normal((12, 5)).astype("float32")
    _matches_everywhere(sch.mod, [av], np.array(av.sum(), "float32"))


@pytest.mark.parametrize("reduction", ["add", "max", "mul"])
def test_a_scatter_reduction_is_reduced_across_threads(reduction):
    """ScatterND with a reduction: each output scans the updates under a hit test
    (``if index == i: B = B op u``); the guarded update reduces across threads with the
    combiner's identity where the test fails (it was rejected by LowerCrossThreadReduction)."""
    x = te.placeholder((6, 40), name="x")
    idx = te.placeholder((300, 1), "int64", name="idx")
    upd = te.placeholder((300, 40), name="upd")
    y = topi.scatter_nd(x, idx, upd, reduction)
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([x, idx, upd, y])}))
    rng = np.random.default_rng(7)
    xv, uv = rng.standard_normal((6, 40)).astype("float32"), rng.uniform(0.5, 1.5, (300, 40)).astype("float32")
    iv = rng.integers(0, 5, (300, 1)).astype("int64")  # row 5 is never hit; the others many times
    ref = xv.copy()
    op = {"add": np.add, "max": np.maximum, "mul": np.multiply}[reduction]
    for u in range(300):
        ref[iv[u, 0]] = op(ref[iv[u, 0]], uv[u])
    for run in (lambda *a: emulate(lower_cuda(mod), *a), lambda *a: unity.build(mod, "llvm")["main"](*a)):
        out = np.zeros((6, 40), np.float32)
        run(xv, iv, uv, out)
        np.testing.assert_allclose(out, ref, rtol=1e-4)
