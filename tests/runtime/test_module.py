"""The runtime `Module`: argument checks, tensors, timing, export and load in a fresh process."""

from __future__ import annotations

import ctypes
import platform
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import unity
from unity import tir
from unity.runtime import Tensor, cache_flush, empty, tensor
from unity.runtime.cache_flush import flush_arrays
from unity.runtime.kernel_runs import Plan, failed_kernel


@pytest.fixture(scope="module")
def scale_lib() -> unity.runtime.Module:
    """`B[i, j] = A[i, j] * alpha` on `A: (n, 4) float32`, with an assert on `alpha`."""
    n = tir.SizeVar("n")
    A, B = tir.decl_buffer((n, 4), "float32", "A"), tir.decl_buffer((n, 4), "float32", "B")
    alpha = tir.Var("alpha", "float32")
    i, j = tir.Var("i"), tir.Var("j")
    store = tir.BufferStore(B, A[i, j] * alpha, (i, j))
    inner = tir.For(j, tir.const(0), tir.const(4), tir.ForKind.SERIAL, store)
    body = tir.AssertStmt(
        tir.ge(alpha, tir.const(0.0)),
        "alpha must be >= 0",
        tir.For(i, tir.const(0), n, tir.ForKind.PARALLEL, inner),
    )
    return unity.build(tir.PrimFunc((A, B, alpha), body), name="scale")


def test_numpy_and_tensor_arguments(scale_lib):
    a = np.arange(12, dtype="float32").reshape(3, 4)
    b = np.zeros((3, 4), "float32")
    scale_lib["scale"](a, b, 2.0)
    np.testing.assert_array_equal(b, a * 2)
    ta, tb = tensor(a, unity.cpu()), empty((3, 4), "float32", unity.cpu())
    scale_lib["scale"](ta, tb, 3)
    assert isinstance(tb, Tensor) and tb.shape == (3, 4) and tb.dtype == "float32"
    np.testing.assert_array_equal(tb.numpy(), a * 3)


def test_the_run_loop_calls_each_kernel_in_turn_and_stops_at_the_first_failure(scale_lib):
    """A library's run loop (`kernel_runs`) calls the packed entries of its plan in order,
    each on its own slots; the second of three failing (alpha < 0) returns its index and
    status, and the third does not run."""
    scale = scale_lib["scale"]
    assert scale.packed_format == "QQdq"  # A, B, alpha, n: 32 bytes of slots a call
    a = np.arange(12, dtype="float32").reshape(3, 4)
    b, c, d = (np.zeros((3, 4), "float32") for _ in range(3))
    slots = (ctypes.c_int64 * 12)()
    plan = Plan([(scale.packed_address, 0), (scale.packed_address, 32), (scale.packed_address, 64)])
    for alpha, expected in ((-1.0, (1, 1)), (3.0, None)):
        calls = [(a, b, 2.0), (b, c, alpha), (c, d, 5.0)]
        values = [v for src, dst, k in calls for v in (src.ctypes.data, dst.ctypes.data, k, 3)]
        struct.pack_into(scale.packed_format * 3, slots, 0, *values)
        code = scale_lib.run_kernels(plan.address, ctypes.addressof(slots))
        if expected is not None:
            assert failed_kernel(code) == expected
            np.testing.assert_array_equal(b, a * 2)
            assert not c.any() and not d.any()
        else:
            assert code == 0
            np.testing.assert_array_equal(d, a * 2 * 3 * 5)
    assert scale_lib.run_kernels(Plan([]).address, 0) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (np.zeros((3, 5), "float32"), np.zeros((3, 4), "float32"), 1.0),
            r"parameter 0 'A': expected a float32 array of shape \(n, 4\), got shape \(3, 5\)",
        ),
        (
            (np.zeros((3, 4), "float32"), np.zeros((2, 4), "float32"), 1.0),
            r"parameter 1 'B': expected a float32 array of shape \(n, 4\) "
            r"\(bound by earlier arguments: n = 3\), got shape \(2, 4\)",
        ),
        (
            (np.zeros((3, 4), "float64"), np.zeros((3, 4), "float32"), 1.0),
            r"parameter 0 'A': expected dtype float32, got float64",
        ),
        (
            (np.zeros(12, "float32"), np.zeros((3, 4), "float32"), 1.0),
            r"parameter 0 'A': expected rank 2 .*got rank 1 with shape \(12,\)",
        ),
        (
            (np.zeros((4, 3), "float32").T, np.zeros((3, 4), "float32"), 1.0),
            r"parameter 0 'A': expected a C-contiguous array",
        ),
        (
            (np.zeros((3, 4), "float32"), np.zeros((3, 4), "float32")),
            r"scale: expected 3 arguments \(A, B, alpha\), got 2",
        ),
        (
            (np.zeros((3, 4), "float32"), [[0.0] * 4] * 3, 1.0),
            r"parameter 1 'B': expected a float32 array of shape \(n, 4\), got list",
        ),
        (
            (np.zeros((3, 4), "float32"), np.zeros((3, 4), "float32"), "x"),
            r"parameter 2 'alpha': expected a float32 scalar, got str",
        ),
    ],
)
def test_bad_arguments_raise_value_error_naming_the_parameter(scale_lib, args, message):
    with pytest.raises(ValueError, match=message):
        scale_lib["scale"](*args)


def test_failed_assert_is_a_runtime_error(scale_lib):
    with pytest.raises(RuntimeError, match="scale: alpha must be >= 0"):
        scale_lib["scale"](np.zeros((2, 4), "float32"), np.zeros((2, 4), "float32"), -1.0)


def test_unknown_function_and_source_formats(scale_lib):
    with pytest.raises(KeyError, match="no function 'main'; it has \\['scale'\\]"):
        scale_lib["main"]
    assert "define i32 @scale(ptr noalias" in scale_lib.get_source("ll")
    assert "scale:" in scale_lib.get_source("asm")
    with pytest.raises(ValueError, match="unknown format"):
        scale_lib.get_source("cuda")


def test_time_evaluator_reports_positive_times(scale_lib):
    a, b = np.ones((64, 4), "float32"), np.zeros((64, 4), "float32")
    result = scale_lib.time_evaluator("scale", unity.cpu(), number=5, repeat=3)(a, b, 2.0)
    assert len(result.results) == 3 and result.mean > 0 and result.min <= result.mean
    longer = scale_lib.time_evaluator("scale", unity.cpu(), number=1, min_repeat_ms=2)(a, b, 2.0)
    assert len(longer.results) == 1 and longer.mean > 0
    np.testing.assert_array_equal(b, a * 2)


def test_time_evaluator_with_flushed_caches(scale_lib):
    a, b = np.ones((64, 4), "float32"), np.zeros((64, 4), "float32")
    timer = scale_lib.time_evaluator("scale", unity.cpu(), number=3, repeat=2, flush_cache=True)
    out = tensor(b)
    result = timer(a, out, 3.0)  # a Tensor and a scalar among the flushed arguments
    assert len(result.results) == 2 and result.min > 0
    np.testing.assert_array_equal(out.numpy(), a * 3)


def test_flush_arrays_keeps_the_values():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 70)).astype("float32")
    views = [x, x[::-1, ::3], x.T, x[:0], tensor(x), "not an array", None]
    copies = [np.array(v) for v in views[:3]]
    flush_arrays(views)
    for view, copy in zip(views, copies):
        np.testing.assert_array_equal(view, copy)
    if platform.machine().lower() in ("x86_64", "amd64", "aarch64", "arm64"):
        assert cache_flush._compiled_flush() is not None  # evicts by line, not by a sweep


def test_export_then_load_in_a_fresh_process(scale_lib, tmp_path: Path):
    path = tmp_path / "kernels.so"
    scale_lib.export_library(str(path))
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        import unity.runtime as rt
        lib = rt.load_module({str(path)!r})
        a = np.arange(20, dtype="float32").reshape(5, 4)
        b = np.zeros_like(a)
        lib["scale"](a, b, 0.5)
        assert np.array_equal(b, a * 0.5), b
        try:
            lib["scale"](a, np.zeros((5, 3), "float32"), 1.0)
        except ValueError as err:
            print("checked:", err)
        try:
            lib["scale"](a, b, -2.0)
        except RuntimeError as err:
            print("assert:", err)
        rt.set_num_threads(1)
        lib["scale"](a, b, 2.0)
        assert np.array_equal(b, a * 2)
        compiler = ("unity.codegen", "llvmlite.ir", "llvmlite.binding")
        compiler = [m for m in compiler if m in sys.modules]
        print("compiler modules:", compiler)
    """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr
    assert "checked: scale: parameter 1 'B'" in done.stdout
    assert "assert: scale: alpha must be >= 0" in done.stdout
    assert "compiler modules: []" in done.stdout


def test_loaded_module_reexports(scale_lib, tmp_path: Path):
    first, second = tmp_path / "a.so", tmp_path / "b.so"
    scale_lib.export_library(str(first))
    loaded = unity.runtime.load_module(str(first))
    loaded.export_library(str(second))
    again = unity.runtime.load_module(str(second))
    a, b = np.ones((2, 4), "float32"), np.zeros((2, 4), "float32")
    again["scale"](a, b, 4.0)
    np.testing.assert_array_equal(b, a * 4)
    with pytest.raises(ValueError, match="keeps no source"):
        loaded.get_source("ll")


def test_load_module_rejects_other_files(tmp_path: Path):
    bogus = tmp_path / "x.so"
    bogus.write_text("not a library")
    with pytest.raises(ValueError, match="cannot open"):
        unity.runtime.load_module(str(bogus))


def test_num_threads_setting():
    unity.runtime.set_num_threads(1)
    assert unity.runtime.get_num_threads() == 1
    unity.runtime.set_num_threads(0)
    assert unity.runtime.get_num_threads() >= 1
    with pytest.raises(ValueError, match="expected an int >= 0"):
        unity.runtime.set_num_threads(-1)


def test_cuda_device_without_a_gpu_is_a_clear_error_on_use():
    from unity.runtime.cuda import CudaUnavailableError, is_available

    assert unity.cuda() == unity.runtime.Device("cuda", 0)  # the device exists as a name
    if is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(CudaUnavailableError, match="CUDA is not available"):
        unity.runtime.tensor(np.zeros(2, "float32"), unity.cuda())


def test_shape_expressions_and_declared_strides():
    n, s = tir.SizeVar("n"), tir.SizeVar("s")
    A = tir.decl_buffer((n * 2,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    V = tir.decl_buffer((n, 2), "float32", "V", strides=(s, 1))  # a strided view is accepted
    i = tir.Var("i")
    flat_v = tir.decl_buffer((n * s,), "float32", "V_flat", data=V.data)
    body = tir.BufferStore(B, A[i * 2] + flat_v[i * s + 1], (i,))
    lib = unity.build(
        tir.PrimFunc((A, B, V), tir.For(i, tir.const(0), n, tir.ForKind.SERIAL, body))
    )
    a, b = np.arange(6, dtype="float32"), np.zeros(3, "float32")
    v = np.arange(15, dtype="float32").reshape(3, 5)[:, 1:3]
    lib["main"](a, b, v)
    np.testing.assert_array_equal(b, a[::2] + v[:, 1])
    with pytest.raises(
        ValueError, match=r"parameter 0 'A': expected a float32 array of shape \(\(n \* 2\),\)"
    ):
        lib["main"](np.zeros(5, "float32"), b, v)
