"""`NarrowIndexDtype`: int64 kernels of static shapes run in int32, kernels of symbolic sizes
get an int32 twin launched while the sizes are in bounds, int64 data keeps int64."""

import numpy as np

import unity
from unity import te, tir
from unity.ir.module import IRModule
from unity.schedule.default_gpu import apply_default_gpu_schedules
from unity.tir.functor import post_order_visit
from unity.tir.gpu_emulator import HostRunner, emulate
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


def test_int64_data_keeps_int64():
    lowered = _pool((6, 300), "int64")  # the data is int64: its values are unknown
    (kernel,) = [f for f in lowered.functions.values() if is_kernel(f)]
    assert _int64_nodes(kernel)


def test_a_symbolic_size_gets_an_int32_twin_that_launches_while_in_bounds():
    n = tir.SizeVar("n", "int64")
    lowered = _pool((n, 300))
    kernels = {gv.name_hint: f for gv, f in lowered.functions.items() if is_kernel(f)}
    assert set(kernels) == {"main_kernel0", "main_kernel0_i32"}
    assert _int64_nodes(kernels["main_kernel0"]) and not _int64_nodes(kernels["main_kernel0_i32"])
    host = lowered["main"].script()  # n * 300 elements fit in int32 for n up to 2^20
    assert "if n <= T.int64(1048576):" in host and host.index('"main_kernel0_i32"') < host.index('"main_kernel0",')
    launched = []
    for rows, want in ((5, "main_kernel0_i32"), (1 << 21, "main_kernel0")):  # the host's choice
        env = {p.data: None for p in lowered["main"].buffer_params()} | {n: rows}
        HostRunner(lowered, env, lambda name, *_: launched.append(name)).run(lowered["main"].body)
        assert launched[-1] == want
    x = np.random.default_rng(0).standard_normal((5, 300)).astype("float32")
    y = np.zeros(5, np.float32)
    emulate(lowered, x, y)
    np.testing.assert_allclose(y, x.sum(1), rtol=1e-5)


def test_one_size_may_grow_further_while_the_others_stay_small():
    """Rows of batch x seq x 3072 (the fused row ``i`` read at ``i * 3072``: flattening
    merges ``i // s, i % s`` over dims of extent s): both sizes up to 512 together, or
    either up to 2^16 while the other is at most 8 (a union of boxes, each proven)."""
    b, s = tir.SizeVar("b", "int64"), tir.SizeVar("s", "int64")
    lowered = _pool((b, s, 3072))
    host = lowered["main"].script()
    assert "s <= T.int64(512) and b <= T.int64(512) or" in host
    launched = []
    for sizes, want in (((1, 60000), "main_kernel0_i32"), ((300, 300), "main_kernel0_i32"),
                        ((8, 65536), "main_kernel0_i32"), ((9, 60000), "main_kernel0"),
                        ((60000, 3), "main_kernel0_i32"), ((0, 5), "main_kernel0_i32")):
        env = {p.data: None for p in lowered["main"].buffer_params()} | dict(zip((b, s), sizes))
        HostRunner(lowered, env, lambda name, *_: launched.append(name)).run(lowered["main"].body)
        assert launched[-1] == want, sizes
    x = np.random.default_rng(0).standard_normal((2, 3, 3072)).astype("float32")
    y = np.zeros((2, 3), np.float32)
    emulate(lowered, x, y)
    np.testing.assert_allclose(y, x.sum(2), rtol=1e-4)


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
