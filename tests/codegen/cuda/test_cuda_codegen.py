"""CUDA C from lowered TIR: key lines, `nvcc -ptx` for every workload, float16, errors."""

import numpy as np
import pytest
from gpu_workloads import ALL, matmul, softmax, two_kernels

import unity
from unity import te, tir
from unity.codegen.cuda_build import CUDAModule, compile_ptx, nvcc_path
from unity.schedule import Schedule

needs_nvcc = pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not installed")


def _has_pycuda() -> bool:
    try:
        import pycuda  # noqa: F401
    except ImportError:
        return False
    return True


def test_matmul_source_has_shared_tiles_barriers_and_a_local_accumulator():
    src = unity.build(matmul(64, 64, 64).sch.mod, "cuda -arch=sm_90").get_source("cuda")
    for line in (
        ('extern "C" __global__ void __launch_bounds__(256) main_kernel0(float* __restrict__ A, '
        "float* __restrict__ B, float* __restrict__ C) {"),
        "const int threadIdx_y = (int)threadIdx.y;",
        "__shared__ __align__(16) float A_shared[256];",
        "__align__(16) float C_local[1];",
        "__syncthreads();",
        "for (int k_1 = 0; k_1 < 16; ++k_1) {",
    ):
        assert line in src, line


def test_softmax_source_uses_warp_shuffles_and_exp():
    src = unity.build(softmax().sch.mod, "cuda").get_source()
    assert "__shfl_down_sync(0xffffffffu, T_softmax_max_red[0], 16, 32)" in src
    assert "expf(" in src and "(-CUDART_INF_F)" in src


@needs_nvcc
@pytest.mark.parametrize("name", sorted(ALL))
def test_generated_cuda_compiles_with_nvcc(name):
    lib = unity.build(ALL[name]().sch.mod, "cuda -arch=sm_90")
    ptx = lib.get_source("ptx")
    assert ".entry main_kernel0" in ptx


def _half_kernel():
    a = te.placeholder((256,), "float16", name="a")
    b = te.compute((256,), lambda i: te.max(a[i] * a[i], te.const(0.5, "float16")), name="b")
    sch = Schedule(te.create_prim_func([a, b]))
    (i,) = sch.get_loops(sch.get_block("b"))
    bx, tx = sch.split(i, [None, 128])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return sch.mod


@needs_nvcc
def test_float16_kernel_compiles_and_emulates():
    mod = _half_kernel()
    lib = unity.build(mod, "cuda -arch=sm_90")
    assert "half* __restrict__ a" in lib.get_source() and "__hmax(" in lib.get_source()
    compile_ptx(lib.get_source(), "sm_90")
    a = np.linspace(-2, 2, 256).astype("float16")
    b = np.zeros(256, "float16")
    lib.emulate("main", a, b)
    np.testing.assert_array_equal(b, np.maximum(a * a, np.float16(0.5)))


@needs_nvcc
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_floormod_is_numpys_mod(dtype):
    a_t, b_t = te.placeholder((8,), dtype, name="a"), te.placeholder((8,), dtype, name="b")
    c_t = te.compute((8,), lambda i: tir.floormod(a_t[i], b_t[i]), name="c")
    sch = Schedule(te.create_prim_func([a_t, b_t, c_t]))
    sch.bind(sch.get_loops(sch.get_block("c"))[0], "threadIdx.x")
    lib = unity.build(sch.mod, "cuda -arch=sm_90")
    assert "unity_floormod(" in lib.get_source()
    compile_ptx(lib.get_source(), "sm_90")
    a = np.array([0.0, -3.0, 3.0, -1.0, 1.0, 5.5, -5.5, 7.0], dtype)
    b = np.array([-2.0, np.inf, np.inf, -np.inf, -np.inf, -2.0, 2.0, 7.0], dtype)
    c = np.zeros(8, dtype)
    lib.emulate("main", a, b, c)
    np.testing.assert_array_equal(c, np.mod(a, b))


@needs_nvcc
def test_nvcc_errors_are_reported():
    with pytest.raises(RuntimeError, match="nvcc -ptx failed"):
        compile_ptx("__global__ void k() { undefined_name; }", "sm_90")


def test_build_returns_a_cuda_module_that_also_emulates():
    work = matmul(32, 32, 32)
    lib = unity.build(work.sch.mod, "cuda")
    assert isinstance(lib, CUDAModule) and lib.host_names == ["main"]
    args = work.fresh_args()
    lib.emulate("main", *args)
    work.check(args)


@pytest.mark.skipif(_has_pycuda(), reason="pycuda is installed")
def test_calling_without_pycuda_is_a_clear_error():
    work = matmul(32, 32, 32)
    lib = unity.build(work.sch.mod, "cuda")
    with pytest.raises(RuntimeError, match="CUDA is not available: pycuda is not installed"):
        lib["main"](*work.fresh_args())


def _vectorized(offset: int):
    n = 1024
    a = te.placeholder((n + offset,), name="a")
    y = te.compute((n,), lambda i: te.max(a[i + offset] * 2.0, te.const(0.0, "float32")), name="y")
    sch = Schedule(te.create_prim_func([a, y]))
    (i,) = sch.get_loops(sch.get_block("y"))
    bx, tx, v = sch.split(i, [None, 64, 4])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    sch.vectorize(v)
    return sch.mod


@pytest.mark.parametrize("offset", [0, 1])
def test_vectorized_loops_use_float4_where_aligned_and_lanes_elsewhere(offset):
    lib = unity.build(_vectorized(offset), "cuda")
    src = lib.get_source()
    store = "*reinterpret_cast<float4*>(&y[((blockIdx_x * 256) + (threadIdx_x * 4))]) = make_float4("
    assert store in src
    assert ("const float4 " in src) == (offset == 0)  # a[i + 1] is not 16-byte aligned
    a = np.random.default_rng(0).standard_normal(1024 + offset, dtype=np.float32)
    y = np.zeros(1024, np.float32)
    lib.emulate("main", a, y)
    np.testing.assert_array_equal(y, np.maximum(a[offset:] * 2, 0))
    if nvcc_path() is not None:
        compile_ptx(src, "sm_90")


def test_float16_math_without_a_half_spelling_goes_through_float():
    """erf, tanh and pow have no `cuda_fp16.h` function: computed in float, rounded back."""
    a = te.placeholder((64,), "float16", name="a")
    b = te.compute((64,), lambda i: te.erf(a[i]) + te.tanh(a[i]) + te.power(a[i] * a[i], te.const(0.75, "float16")),
                   name="b")
    sch = Schedule(te.create_prim_func([a, b]))
    (i,) = sch.get_loops(sch.get_block("b"))
    bx, tx = sch.split(i, [None, 32])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    lib = unity.build(sch.mod, "cuda -arch=sm_90")
    src = lib.get_source("cuda")
    assert "__float2half(erff(__half2float(a[" in src and "__float2half(tanhf(__half2float(" in src
    assert "powf(__half2float(" in src
    if nvcc_path() is not None:
        compile_ptx(src, "sm_90")
    av = np.linspace(-2, 2, 64).astype("float16")
    out = np.zeros(64, "float16")
    lib.emulate("main", av, out)
    x = av.astype("float64")
    from math import erf

    want = np.array([erf(v) for v in x]) + np.tanh(x) + (x * x) ** 0.75
    np.testing.assert_allclose(out.astype("float64"), want, rtol=1e-2, atol=1e-2)


def test_bfloat16_kernels_are_nv_bfloat16_with_math_in_float():
    """bfloat16 had no C type ("no C type for dtype bfloat16": every bf16 model failed to
    build for cuda): `__nv_bfloat16`, math through float, casts through float."""
    import ml_dtypes

    from unity.schedule.default_gpu import apply_default_gpu_schedules

    a, b = te.placeholder((300,), "bfloat16", "a"), te.placeholder((300,), "bfloat16", "b")
    out = te.compute((300,), lambda i: te.exp(a[i]) * b[i] + te.max(a[i], b[i])
                     + a[i].astype("float16").astype("bfloat16"), "out")
    mod = apply_default_gpu_schedules(unity.IRModule({"main": te.create_prim_func([a, b, out])}))
    lib = unity.build(mod, "cuda -arch=sm_90")
    src = lib.get_source("cuda")
    assert "__nv_bfloat16* __restrict__ a" in src and "__float2bfloat16(expf(__bfloat162float(a[" in src
    assert "__hmax(" in src and "__float2half((float)(__bfloat162float(a[" in src
    if nvcc_path() is not None:
        for arch in ("sm_90", "sm_75"):
            compile_ptx(src, arch)
    bf16 = ml_dtypes.bfloat16
    av, bv = (np.random.default_rng(k).uniform(-2, 2, 300).astype(bf16) for k in (1, 2))
    got = np.zeros(300, bf16)
    lib.emulate("main", av, bv, got)
    x, y = av.astype("float32"), bv.astype("float32")
    want = np.exp(x).astype(bf16).astype("float32") * y
    want = (want.astype(bf16).astype("float32") + np.maximum(x, y)).astype(bf16).astype("float32") + x
    np.testing.assert_allclose(got.astype("float32"), want, rtol=2e-2, atol=2e-2)


def test_a_cpu_prefetch_hint_emits_no_cuda_and_emulates():
    """A `software_prefetch` annotation (a CPU rule's cache hint) left on a GPU kernel's
    loop: the CUDA lowering ignores it (no trace in the source), and the emulated result
    is the loop's."""
    a = te.placeholder((64, 8), name="a")
    k = te.reduce_axis((0, 8), name="k")
    b = te.compute((64,), lambda i: te.sum(a[i, k], axis=k), name="b")
    sch = Schedule(te.create_prim_func([a, b]))
    i, kk = sch.get_loops(sch.get_block("b"))
    bx, tx = sch.split(i, [None, 32])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    sch.annotate(kk, "software_prefetch", ("a", 4))
    lib = unity.build(sch.mod, "cuda -arch=sm_90")
    assert "prefetch" not in lib.get_source("cuda")
    av = np.random.default_rng(0).standard_normal((64, 8)).astype("float32")
    out = np.zeros(64, "float32")
    lib.emulate("main", av, out)
    np.testing.assert_allclose(out, av.sum(axis=1), rtol=1e-5, atol=1e-5)
