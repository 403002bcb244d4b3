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
def test_default_schedule_matches_numpy_emulated_and_interpreted(make):
    tensors, inputs, ref = make()
    mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func(tensors)}))
    assert mod["main"].attrs["tir.is_scheduled"]
    for run in (lambda *a: emulate(lower_cuda(mod), *a), lambda *a: interpret(mod["main"], *a)):
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
    assert "__shared__ __align__(16) float A_shared[512];" in src  # 64 x 8 tile
    assert "__align__(16) float T_matmul_local[16];" in src        # 4 x 4 per thread
    av, bv = RNG.standard_normal((128, 64), dtype=np.float32), RNG.standard_normal((64, 128), dtype=np.float32)
    out = np.zeros((128, 128), np.float32)
    emulate(lower_cuda(mod), av, bv, out)
    np.testing.assert_allclose(out, av @ bv, rtol=1e-4, atol=1e-4)
