"""`NarrowIndexDtype`: int64 kernels of static shapes run in int32; others are left alone."""

import numpy as np

import unity
from unity import te, tir
from unity.ir.module import IRModule
from unity.schedule.default_gpu import apply_default_gpu_schedules
from unity.tir.functor import post_order_visit
from unity.tir.gpu_emulator import emulate
from unity.tir.transform.gpu import NarrowIndexDtype, lower_cuda
from unity.tir.transform.gpu.split_host_device import is_kernel


def _int64_nodes(func):
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, tir.PrimExpr)
                     and n.dtype.startswith("int64") else None)
    return found


def _pool(shape, dtype="float32"):
    """A row sum over int64 shapes (as ONNX imports them): int64 loops and indices."""
    x = te.placeholder(shape, dtype, name="x")
    k = te.reduce_axis((0, shape[-1]), name="k")
    y = te.compute(shape[:-1], lambda *i: te.sum(x[(*i, k)], axis=k), name="y")
    func = te.create_prim_func([x, y], index_dtype_override="int64")
    return lower_cuda(apply_default_gpu_schedules(IRModule({"main": func})))


def test_a_static_kernel_runs_in_int32_with_the_same_result():
    lowered = _pool((6, 300))
    (kernel,) = [f for f in lowered.functions.values() if is_kernel(f)]
    assert not _int64_nodes(kernel)
    x = np.random.default_rng(0).standard_normal((6, 300)).astype("float32")
    y = np.zeros(6, np.float32)
    emulate(lowered, x, y)
    np.testing.assert_allclose(y, x.sum(1), rtol=1e-5)


def test_symbolic_sizes_and_int64_data_keep_int64():
    n = tir.SizeVar("n", "int64")
    symbolic = _pool((n, 300))
    ints = _pool((6, 300), "int64")  # the data is int64: its values are unknown
    for lowered in (symbolic, ints):
        (kernel,) = [f for f in lowered.functions.values() if is_kernel(f)]
        assert _int64_nodes(kernel)


def test_values_beyond_int32_keep_int64():
    i = tir.Var("i", "int64")
    a = tir.decl_buffer((3 << 30,), "float32", "a")
    body = tir.For(i, tir.const(0, "int64"), tir.const(3 << 30, "int64"), tir.ForKind.SERIAL,
                   tir.BufferStore(a, tir.const(0.0), (i,)))
    kernel = tir.PrimFunc([a], body).with_attr("calling_conv", "cuda_kernel")
    assert NarrowIndexDtype().transform_function(kernel) is kernel


def test_narrowed_source_has_no_64_bit_index_arithmetic():
    x = te.placeholder((6, 300), name="x")
    k = te.reduce_axis((0, 300), name="k")
    y = te.compute((6,), lambda i: te.sum(x[i, k], axis=k), name="y")
    func = te.create_prim_func([x, y], index_dtype_override="int64")
    src = unity.build(apply_default_gpu_schedules(IRModule({"main": func})), "cuda").get_source()
    body = src.split("__global__")[1]
    assert "long long" not in body and "for (int k_0 = 0; k_0 < 2; ++k_0)" in body
