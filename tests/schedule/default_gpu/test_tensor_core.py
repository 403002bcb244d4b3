"""The tensor-core GEMM rule: its loop structure, the default schedules choosing it for
float16 GEMMs, numbers in the emulator, and a planted missing barrier caught."""

import numpy as np
import pytest

import unity
from unity import te, tir, topi
from unity.ir.module import IRModule
from unity.schedule import Schedule, ScheduleError
from unity.schedule.default_gpu import apply_default_gpu_schedules
from unity.schedule.default_gpu.tensor_core import WmmaTile, pick_wmma_tile, schedule_matmul_wmma
from unity.tir.functor import StmtExprMutator
from unity.tir.gpu_emulator import EmulatorError, emulate
from unity.tir.stmt import Evaluate, Stmt
from unity.tir.transform.gpu import lower_cuda
from unity.tir.transform.gpu.intrinsics import is_syncthreads
from unity.topi.testing import conv2d_nchw_python

RNG = np.random.default_rng(0)


def _matmul(m, n, k, acc="float16", batch=None):
    lead = () if batch is None else (batch,)
    a = te.placeholder((*lead, m, k), "float16", name="A")
    b = te.placeholder((*lead, k, n), "float16", name="B")
    r = te.reduce_axis((0, k), name="k")

    def term(*idx):
        *q, i, j = idx
        x, y = a[(*q, i, r)], b[(*q, r, j)]
        return x * y if acc == "float16" else x.astype(acc) * y.astype(acc)

    c = te.compute((*lead, m, n), lambda *idx: te.sum(term(*idx), axis=r), name="C")
    av = RNG.standard_normal((*lead, m, k)).astype("float16")
    bv = RNG.standard_normal((*lead, k, n)).astype("float16")
    return te.create_prim_func([a, b, c]), [av, bv], av.astype("float32") @ bv.astype("float32")


def _check(mod, inputs, ref, dtype, tol):
    out = np.zeros(ref.shape, dtype)
    emulate(lower_cuda(mod), *inputs, out)
    np.testing.assert_allclose(out.astype("float32"), ref, rtol=tol, atol=tol)


def test_the_rule_gives_each_warp_fragments_and_the_block_shared_tiles():
    func, inputs, ref = _matmul(128, 128, 64)
    sch = Schedule(func)
    schedule_matmul_wmma(sch, "C", WmmaTile((2, 4), (4, 2)))
    lowered = lower_cuda(sch.mod)
    kernel = lowered["main_kernel0"].script()
    for piece in (
        '"tir.cuda.launch", "main_kernel0", 1, 1, 1, 32, 4, 2',  # 8 warps: 32 lanes x 4 x 2
        'T.allocate_buffer((2048,), "float16", scope="wmma.accumulator")',  # 64 x 32: 8 tiles per warp
        'T.allocate_buffer((1024,), "float16", scope="wmma.matrix_a")',  # a 64 x 16 strip
        'T.allocate_buffer((512,), "float16", scope="wmma.matrix_b")',  # a 16 x 32 strip
        'T.allocate_buffer((5120,), "float16", scope="shared")',  # A: 128 x 32, rows padded to 40
        'T.allocate_buffer((4352,), "float16", scope="shared")',  # B: 32 x 128, rows padded to 136
        "A_shared[threadIdx_z * 2560 + ax0_0 * 640 + k_1 * 16], 40)",  # wmma_load, row stride 40
        "tir.cuda.syncthreads",
    ):
        assert piece in lowered.script(), piece
    assert kernel.count("tir.cuda.wmma_mma") == 1 and kernel.count("tir.cuda.wmma_load") == 2
    src = unity.build(sch.mod, "cuda").get_source("cuda")  # the tile copies: 8 float16 at once
    assert "*reinterpret_cast<uint4*>(&A_shared[" in src and "reinterpret_cast<const uint4*>(&B[" in src
    _check(sch.mod, inputs, ref, "float16", 5e-2)


@pytest.mark.parametrize("m, n, k, acc, batch", [
    (256, 256, 128, "float16", None),  # 128 x 128 blocks
    (64, 96, 48, "float32", None),  # 32 x 32 blocks, k by 16
    (64, 64, 32, "float32", 3),  # a batch over blockIdx.z
])
def test_default_schedule_puts_float16_gemms_on_the_tensor_cores(m, n, k, acc, batch):
    func, inputs, ref = _matmul(m, n, k, acc, batch)
    mod = apply_default_gpu_schedules(IRModule({"main": func}))
    assert "tir.cuda.wmma_mma" in mod.script()
    _check(mod, inputs, ref, acc, 5e-2 if acc == "float16" else 1e-4)


def test_dense_with_bias_and_relu_is_one_kernel_the_epilogue_from_each_warps_shared_tile():
    x = te.placeholder((64, 128), "float16", name="X")
    w = te.placeholder((96, 128), "float16", name="W")
    bias = te.placeholder((96,), "float16", name="bias")
    d = topi.nn.dense(x, w)
    y = te.compute((64, 96), lambda i, j: te.max(d[i, j] + bias[j], te.const(0, "float16")), name="Y")
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([x, w, bias, y])}))
    lowered = lower_cuda(mod)
    assert "tir.cuda.wmma_mma" in lowered.script()
    assert sum(1 for gv in lowered.get_global_vars() if "kernel" in gv.name_hint) == 1
    text = lowered["main_kernel0"].script()  # 4 warps, a 16 x 16 float16 tile each:
    assert 'T.allocate_buffer((1024,), "float16", scope="shared.warp")' in text
    assert "tir.cuda.wmma_store" in text and "T.max(" in text
    xv, wv = RNG.standard_normal((64, 128)).astype("float16"), RNG.standard_normal((96, 128)).astype("float16")
    bv = RNG.standard_normal(96).astype("float16")
    ref = np.maximum(xv.astype("float32") @ wv.T.astype("float32") + bv, 0)
    _check(mod, [xv, wv, bv], ref, "float16", 5e-2)


@pytest.mark.parametrize("m, n, k, acc, batch", [
    (100, 64, 64, "float16", None),  # m padded to 128: an unpadding copy writes C
    (64, 64, 40, "float16", None),  # only k padded (to 48)
    (33, 47, 19, "float32", 2),
])
def test_sizes_off_the_tiles_are_zero_padded(m, n, k, acc, batch):
    func, inputs, ref = _matmul(m, n, k, acc, batch)
    mod = apply_default_gpu_schedules(IRModule({"main": func}))
    lowered = lower_cuda(mod)
    assert "tir.cuda.wmma_mma" in lowered.script()
    assert sum(1 for gv in lowered.get_global_vars() if "kernel" in gv.name_hint) == 1
    _check(mod, inputs, ref, acc, 5e-2 if acc == "float16" else 1e-4)


def test_float16_conv_with_bias_and_relu_is_one_tensor_core_kernel():
    x = te.placeholder((1, 16, 14, 14), "float16", name="X")
    w = te.placeholder((32, 16, 3, 3), "float16", name="W")
    b = te.placeholder((32, 1, 1), "float16", name="b")
    c = topi.nn.conv2d(x, w, strides=1, padding=1)  # M 32 x N 196 pixels x K 144
    y = te.compute(c.shape, lambda n, k, i, j: te.max(c[n, k, i, j] + b[k, 0, 0], te.const(0, "float16")),
                   name="Y")
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([x, w, b, y])}))
    lowered = lower_cuda(mod)
    assert "tir.cuda.wmma_mma" in lowered.script()
    assert sum(1 for gv in lowered.get_global_vars() if "kernel" in gv.name_hint) == 1
    xv = RNG.standard_normal((1, 16, 14, 14)).astype("float16")
    wv = (RNG.standard_normal((32, 16, 3, 3)) / 4).astype("float16")
    bv = RNG.standard_normal((32, 1, 1)).astype("float16")
    ref = np.maximum(conv2d_nchw_python(xv.astype("float32"), wv.astype("float32"), 1, 1) + bv, 0)
    _check(mod, [xv, wv, bv], ref, "float16", 5e-2)


def test_float32_gemms_stay_on_the_simt_rule():
    a, b = te.placeholder((64, 64), name="A"), te.placeholder((64, 64), name="B")
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([a, b, topi.matmul(a, b)])}))
    assert "wmma" not in mod.script() and "threadIdx" in mod.script()


def test_a_symbolic_sequence_length_is_padded_at_run_time():
    n = tir.SizeVar("n", "int64")
    a = te.placeholder((n, 64), "float16", name="A")
    w = te.placeholder((96, 64), "float16", name="W")
    bias = te.placeholder((96,), "float16", name="bias")
    d = topi.nn.dense(a, w)
    y = te.compute((n, 96), lambda i, j: d[i, j] + bias[j], name="Y")
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([a, w, bias, y])}))
    lowered = lower_cuda(mod)
    assert "tir.cuda.wmma_mma" in lowered.script()
    assert sum(1 for gv in lowered.get_global_vars() if "kernel" in gv.name_hint) == 1
    wv, bv = RNG.standard_normal((96, 64)).astype("float16"), RNG.standard_normal(96).astype("float16")
    for rows in (1, 37, 130):  # 1, 1 and 3 row tiles of 64
        av = RNG.standard_normal((rows, 64)).astype("float16")
        _check(mod, [av, wv, bv], av.astype("float32") @ wv.T.astype("float32") + bv, "float16", 5e-2)


def test_attention_scores_with_a_symbolic_sequence_on_both_sides():
    """Q @ K^T per head: m and n both the sequence length, K read transposed."""
    s = tir.SizeVar("s", "int64")
    q = te.placeholder((2, s, 32), "float16", name="Q")
    k = te.placeholder((2, s, 32), "float16", name="K")
    r = te.reduce_axis((0, 32), name="r")
    scores = te.compute((2, s, s), lambda h, i, j: te.sum(q[h, i, r] * k[h, j, r], axis=r), name="S")
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([q, k, scores])}))
    assert "tir.cuda.wmma_mma" in lower_cuda(mod).script()
    for length in (5, 70):
        qv = RNG.standard_normal((2, length, 32)).astype("float16")
        kv = RNG.standard_normal((2, length, 32)).astype("float16")
        ref = np.einsum("hid,hjd->hij", qv.astype("float32"), kv.astype("float32"))
        _check(mod, [qv, kv], ref, "float16", 5e-2)


def test_attention_values_with_a_symbolic_batch_and_sequence():
    """P @ V over (batch, heads, seq, seq) x (batch, heads, seq, 64): batch x heads fused
    onto blockIdx.z (`i // 3`, `i % 3` index the tiles), k the symbolic sequence."""
    batch, seq = tir.SizeVar("batch", "int64"), tir.SizeVar("seq", "int64")
    p = te.placeholder((batch, 3, seq, seq), "float16", name="P")
    v = te.placeholder((batch, 3, seq, 64), "float16", name="V")
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([p, v, topi.matmul(p, v)])}))
    assert "tir.cuda.wmma_mma" in lower_cuda(mod).script()
    for b, length in ((1, 5), (2, 20)):
        pv = RNG.standard_normal((b, 3, length, length)).astype("float16")
        vv = RNG.standard_normal((b, 3, length, 64)).astype("float16")
        _check(mod, [pv, vv], pv.astype("float32") @ vv.astype("float32"), "float16", 5e-2)


def test_pick_wmma_tile_fills_the_gpu_and_divides_the_sizes():
    assert pick_wmma_tile(1, 4096, 4096, 4096) == WmmaTile((2, 4), (4, 2), 32)
    assert pick_wmma_tile(1, 256, 256, 48) == WmmaTile((2, 2), (1, 1), 16)  # 64 blocks of 32 x 32
    assert pick_wmma_tile(8, 1024, 1024, 64).block == (128, 128)  # 512 blocks with the batch
    assert pick_wmma_tile(1, 100, 64, 40) == WmmaTile((2, 2), (1, 1), 16)  # to be padded
    assert pick_wmma_tile(1, None, 64, 64) == WmmaTile((2, 2), (2, 2), 32)  # a symbolic m


def test_the_rule_refuses_what_it_cannot_tile():
    a, b = te.placeholder((64, 64), name="A"), te.placeholder((64, 64), name="B")
    with pytest.raises(ScheduleError, match="is not a float16 GEMM"):
        schedule_matmul_wmma(Schedule(te.create_prim_func([a, b, topi.matmul(a, b)])), "T_matmul")


class _DropBarriers(StmtExprMutator):
    def visit_evaluate_(self, stmt: Evaluate) -> Stmt:
        return Evaluate(tir.const(0)) if is_syncthreads(stmt) else stmt


def test_planted_missing_barrier_before_the_fragment_loads_is_caught():
    func, inputs, _ = _matmul(64, 64, 64)
    sch = Schedule(func)
    schedule_matmul_wmma(sch, "C", WmmaTile((2, 2), (1, 1)))
    lowered = lower_cuda(sch.mod)
    broken = lowered.copy()
    broken["main_kernel0"] = lowered["main_kernel0"].replace(
        body=_DropBarriers().visit_stmt(lowered["main_kernel0"].body))
    with pytest.raises(EmulatorError, match=r"data race on shared (A|B)_shared\[\d+\].*\n  in: .*wmma_load"):
        emulate(broken, *inputs, np.zeros((64, 64), "float16"))
