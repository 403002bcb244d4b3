"""Tensor-core calls on one warp: lowering, CUDA C, and the emulator's checks."""

import numpy as np
import pytest

import unity
from unity import tir
from unity.codegen.cuda_build import compile_ptx, nvcc_path
from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import IRModule
from unity.tir.gpu_emulator import EmulatorError, emulate
from unity.tir.transform.gpu import lower_cuda, wmma

needs_nvcc = pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not installed")


def _one_tile(a_col=0, guard=False, a_scope="wmma.matrix_a", lane_index=False, acc_rows=16, fills=()):
    """C = A[:, a_col:a_col + 16] @ B by one warp: fill, two loads, one mma, one store."""
    A = tir.decl_buffer((16, 32), "float16", "A")
    B = tir.decl_buffer((16, 16), "float16", "B")
    C = tir.decl_buffer((16, 16), "float32", "C")
    fa = tir.decl_buffer((16, 16), "float16", "Fa", scope=a_scope)
    fb = tir.decl_buffer((16, 16), "float16", "Fb", scope="wmma.matrix_b")
    fc = tir.decl_buffer((acc_rows, 16), "float32", "Fc", scope="wmma.accumulator")
    tx = tir.Var("tx")
    col = (tx // 16) * 16 if lane_index else tir.const(a_col)
    fill_row = 0
    body = tir.SeqStmt((
        *(wmma.fill(fc[row, 0], 1.0) for row in fills),  # other accumulator tiles
        wmma.fill(fc[fill_row, 0], 0.0),
        wmma.load(fa[0, 0], A[0, col]),
        wmma.load(fb[0, 0], B[0, 0]),
        wmma.mma(fc[fill_row, 0], fa[0, 0], fb[0, 0], fc[fill_row, 0]),
        wmma.store(C[0, 0], fc[fill_row, 0]),
    ))
    if guard:
        body = tir.IfThenElse(tx < 16, body)
    body = tir.Allocate(fa, tir.Allocate(fb, tir.Allocate(fc, body)))
    loop = tir.For(tx, tir.const(0), tir.const(32), tir.ForKind.THREAD_BINDING, body,
                   thread_binding="threadIdx.x")
    return IRModule({"main": tir.PrimFunc((A, B, C), loop)})


def _inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 32)).astype("float16")
    b = rng.standard_normal((16, 16)).astype("float16")
    return a, b, np.zeros((16, 16), "float32")


@pytest.mark.parametrize("col", [0, 16])
def test_one_warp_multiplies_a_tile_in_the_emulator(col):
    a, b, c = _inputs()
    emulate(lower_cuda(_one_tile(col)), a, b, c)
    np.testing.assert_allclose(c, a[:, col:col + 16].astype("float32") @ b.astype("float32"), rtol=1e-5, atol=1e-5)


def test_lowered_calls_name_fragments_by_index_and_tiles_by_stride():
    lowered = lower_cuda(_one_tile(16))
    text = lowered["main_kernel0"].script()
    assert 'T.call_intrin("int32", "tir.cuda.wmma_load", Fa.data, 0, A[16], 32)' in text
    assert 'T.call_intrin("int32", "tir.cuda.wmma_mma", Fc.data, 0, Fa.data, 0, Fb.data, 0, Fc.data, 0)' in text
    assert 'T.call_intrin("int32", "tir.cuda.wmma_store", C[0], 16, Fc.data, 0)' in text


def test_cuda_source_declares_fragments_and_calls_nvcuda_wmma():
    src = unity.build(_one_tile(16), "cuda -arch=sm_90").get_source("cuda")
    for line in (
        "#include <mma.h>",
        "nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> Fa[1];",
        "nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> Fc[1];",
        "nvcuda::wmma::fill_fragment(Fc[0], 0.0f);",
        "nvcuda::wmma::load_matrix_sync(Fa[0], &A[16], 32);",
        "nvcuda::wmma::mma_sync(Fc[0], Fa[0], Fb[0], Fc[0]);",
        "nvcuda::wmma::store_matrix_sync(&C[0], Fc[0], 16, nvcuda::wmma::mem_row_major);",
    ):
        assert line in src, line


def test_kernels_without_tensor_cores_do_not_include_mma_h():
    A = tir.decl_buffer((32,), "float32", "A")
    tx = tir.Var("tx")
    loop = tir.For(tx, tir.const(0), tir.const(32), tir.ForKind.THREAD_BINDING,
                   tir.BufferStore(A, tir.const(1.0), (tx,)), thread_binding="threadIdx.x")
    assert "mma.h" not in unity.build(tir.PrimFunc((A,), loop), "cuda").get_source("cuda")


@needs_nvcc
def test_wmma_source_compiles_with_nvcc():
    ptx = compile_ptx(unity.build(_one_tile(16), "cuda -arch=sm_90").get_source("cuda"), "sm_90")
    assert "wmma.mma.sync" in ptx


def test_misaligned_tile_is_reported():
    with pytest.raises(EmulatorError, match=r"the tile of A at element 8 \(row stride 32\) is not 32-byte aligned"):
        emulate(lower_cuda(_one_tile(8)), *_inputs())


def test_call_reached_by_half_a_warp_is_reported():
    with pytest.raises(EmulatorError, match="a full-mask warp wmma_fill is reached by 16 of 32 lanes"):
        emulate(lower_cuda(_one_tile(guard=True)), *_inputs())


def test_lanes_disagreeing_on_a_tile_are_reported():
    with pytest.raises(EmulatorError, match="the lanes of the warp make different tensor-core calls"):
        emulate(lower_cuda(_one_tile(lane_index=True)), *_inputs())


def test_lowering_refuses_a_wrong_scope_and_tiles_off_the_grid():
    with pytest.raises(DiagnosticError, match="wmma_load wants a fragment in scope wmma.matrix_a or "
                       "wmma.matrix_b, got wmma.accumulator"):
        lower_cuda(_one_tile(a_scope="wmma.accumulator"))
    with pytest.raises(DiagnosticError, match=r"fragment buffer Fc of shape \(24, 16\) is not made of 16 x 16 tiles"):
        lower_cuda(_one_tile(acc_rows=48, fills=(8,)))
    with pytest.raises(DiagnosticError, match=r"wmma_fill tile of Fc at 8 is not on the 16-grid"):
        lower_cuda(_one_tile(acc_rows=48, fills=(8, 32)))


def test_fragments_of_several_tiles_are_indexed_row_major():
    a, b, c = _inputs()
    emulate(lower_cuda(_one_tile(acc_rows=48, fills=(16, 32))), a, b, c)  # Fc: three tiles
    np.testing.assert_allclose(c, a[:, :16].astype("float32") @ b.astype("float32"), rtol=1e-5, atol=1e-5)


def _staged_two_warps(lanes=32):
    """Warp `ty` of 2: C[ty] = 2 * (A[:, 16 ty:16 ty + 16] @ B), its product stored into
    its own `shared.warp` tile, then doubled by its lanes (8 elements each)."""
    A = tir.decl_buffer((16, 32), "float16", "A")
    B = tir.decl_buffer((16, 16), "float16", "B")
    C = tir.decl_buffer((2, 16, 16), "float32", "C")
    fa = tir.decl_buffer((16, 16), "float16", "Fa", scope="wmma.matrix_a")
    fb = tir.decl_buffer((16, 16), "float16", "Fb", scope="wmma.matrix_b")
    fc = tir.decl_buffer((16, 16), "float32", "Fc", scope="wmma.accumulator")
    stage = tir.decl_buffer((2, 16, 16), "float32", "S", scope="shared.warp")
    tx, ty, e = tir.Var("tx"), tir.Var("ty"), tir.Var("e")
    flat = tx * 8 + e
    lane_copy = tir.For(e, tir.const(0), tir.const(8), tir.ForKind.SERIAL, tir.BufferStore(
        C, stage[ty, flat // 16, flat % 16] * tir.const(2.0), (ty, flat // 16, flat % 16)))
    body = tir.SeqStmt((
        wmma.fill(fc[0, 0], 0.0),
        wmma.load(fa[0, 0], A[0, ty * 16]),
        wmma.load(fb[0, 0], B[0, 0]),
        wmma.mma(fc[0, 0], fa[0, 0], fb[0, 0], fc[0, 0]),
        wmma.store(stage[ty, 0, 0], fc[0, 0]),
        tir.IfThenElse(tx < 2, lane_copy) if lanes != 32 else lane_copy,
    ))
    body = tir.Allocate(fa, tir.Allocate(fb, tir.Allocate(fc, body)))
    inner = tir.For(tx, tir.const(0), tir.const(lanes), tir.ForKind.THREAD_BINDING, body,
                    thread_binding="threadIdx.x")
    outer = tir.For(ty, tir.const(0), tir.const(2), tir.ForKind.THREAD_BINDING, inner,
                    thread_binding="threadIdx.y")
    return IRModule({"main": tir.PrimFunc((A, B, C), tir.Allocate(stage, outer))})


def test_shared_warp_tiles_are_one_per_warp_and_a_store_is_fenced_before_the_lanes_read():
    lowered = lower_cuda(_staged_two_warps())
    text = lowered["main_kernel0"].script()
    assert 'T.allocate_buffer((512,), "float32", scope="shared.warp")' in text  # 2 warps x 16 x 16
    assert text.index("wmma_store") < text.index("syncthreads", text.index("wmma_store"))
    a, b, _ = _inputs()
    c = np.zeros((2, 16, 16), "float32")
    emulate(lowered, a, b, c)
    for w in range(2):
        want = 2 * a[:, 16 * w:16 * w + 16].astype("float32") @ b.astype("float32")
        np.testing.assert_allclose(c[w], want, rtol=1e-5, atol=1e-5)


def test_shared_warp_needs_warps_of_32_lanes():
    with pytest.raises(DiagnosticError, match="buffer S in scope 'shared.warp' needs threadIdx.x of extent 32"):
        lower_cuda(_staged_two_warps(lanes=16))


def test_lanes_reading_a_stored_tile_without_a_barrier_race():
    from unity.ir.transform import Sequential
    from unity.tir.transform.gpu import InsertSyncthreads, gpu_lowering_passes

    passes = [p for p in gpu_lowering_passes() if not isinstance(p, InsertSyncthreads)]
    unfenced = Sequential(passes, name="no_sync")(_staged_two_warps())
    a, b, _ = _inputs()
    with pytest.raises(EmulatorError, match=r"data race on shared S\[\d+\]: read after thread 0 wrote it"):
        emulate(unfenced, a, b, np.zeros((2, 16, 16), "float32"))


def test_a_warp_buffer_is_one_copy_per_warp_its_lanes_read_each_other():
    """Lane i writes W[i], then reads W[31 - i]: per-thread copies would read garbage."""
    A = tir.decl_buffer((64,), "float32", "A")
    B = tir.decl_buffer((64,), "float32", "B")
    W = tir.decl_buffer((32,), "float32", "W", scope="warp")
    tx, ty = tir.Var("tx"), tir.Var("ty")
    body = tir.SeqStmt((tir.BufferStore(W, A[ty * 32 + tx], (tx,)),
                        tir.BufferStore(B, W[31 - tx], (ty * 32 + tx,))))
    inner = tir.For(tx, tir.const(0), tir.const(32), tir.ForKind.THREAD_BINDING, body,
                    thread_binding="threadIdx.x")
    outer = tir.For(ty, tir.const(0), tir.const(2), tir.ForKind.THREAD_BINDING, inner,
                    thread_binding="threadIdx.y")
    lowered = lower_cuda(tir.PrimFunc((A, B), tir.Allocate(W, outer)))
    text = lowered["main_kernel0"].script()
    assert 'T.allocate_buffer((64,), "float32", scope="shared.warp")' in text and "syncthreads" in text
    a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    emulate(lowered, a, b)
    np.testing.assert_array_equal(b, np.r_[a[31::-1], a[:31:-1]])
