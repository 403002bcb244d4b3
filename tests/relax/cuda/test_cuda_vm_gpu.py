"""On a real GPU (skipped without a device and pycuda or cuda-python): models through the VM match the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import relax
from unity.runtime.cuda import is_available

from .cuda_models import mlp, mlp_fp16, resnet50, resnet50_input

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not is_available(), reason="needs a CUDA GPU and pycuda or cuda-python"),
]

rng = np.random.default_rng(2)


def test_tensor_round_trip_on_the_gpu():
    a = rng.standard_normal((257, 3)).astype("float32")
    t = unity.runtime.tensor(a, unity.cuda(0))
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(unity.runtime.empty(a.shape, "float32", unity.cuda()).copyfrom(t).numpy(), a)


def test_mlp_on_the_gpu_matches_the_cpu(tmp_path):
    mod = mlp()
    gpu, cpu = unity.compile(mod, target="cuda"), unity.compile(mod, target="llvm")
    vm = relax.VirtualMachine(gpu, unity.cuda())
    for n in (1, 33, 300):
        x = rng.standard_normal((n, 16)).astype("float32")
        want = relax.VirtualMachine(cpu, unity.cpu())["main"](x).numpy()
        np.testing.assert_allclose(vm["main"](x).numpy(), want, rtol=1e-4, atol=1e-4)
    path = str(tmp_path / "mlp.so")
    gpu.export_library(path)
    loaded = relax.VirtualMachine(unity.runtime.load_module(path), unity.cuda())
    np.testing.assert_allclose(loaded["main"](x).numpy(), want, rtol=1e-4, atol=1e-4)
    assert vm.time_evaluator("main", number=3)(x).mean > 0


def test_light_resnet50_on_the_gpu_matches_the_cpu():
    mod = resnet50()
    x = resnet50_input()
    want = relax.VirtualMachine(unity.compile(mod, target="llvm"), unity.cpu())["main"](x).numpy()
    got = relax.VirtualMachine(unity.compile(mod, target="cuda"), unity.cuda())["main"](x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_float16_mlp_on_the_tensor_cores_matches_numpy():
    mod, (w1, b1, w2) = mlp_fp16()
    vm = relax.VirtualMachine(unity.compile(mod, target="cuda"), unity.cuda())
    x = rng.standard_normal((64, 128)).astype("float16")
    h = np.maximum(x.astype("float32") @ w1.T.astype("float32") + b1, 0).astype("float16")
    want = h.astype("float32") @ w2.T.astype("float32")
    np.testing.assert_allclose(vm["main"](x).numpy().astype("float32"), want, rtol=2e-2, atol=5e-2)


def test_profile_on_the_gpu_names_the_kernels():
    vm = relax.VirtualMachine(unity.compile(mlp(), target="cuda"), unity.cuda())
    report = vm.profile("main", rng.standard_normal((8, 16)).astype("float32"))
    assert report.rows and 0 < report.kernel_seconds <= report.total_seconds
