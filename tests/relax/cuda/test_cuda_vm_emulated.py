"""The VM on a CUDA device, with the stand-in driver that runs kernels in the GPU emulator.

Device memory is host memory there, but everything else is what a GPU run does: inputs
copied to the device, constants uploaded once, planned storage allocated on the device,
each kernel launched from its host plan with grid sizes computed from the input shapes.
"""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import relax
from unity.runtime.cuda.device_api import use_driver
from unity.runtime.cuda.emulated import EmulatedDriver
from unity.runtime.cuda.host_plan import evaluate
from unity.runtime.cuda.tensor import CUDATensor

from .cuda_models import cnn, mlp, mlp_fp16

rng = np.random.default_rng(1)


@pytest.fixture(scope="module")
def mlp_pair():
    mod = mlp()
    return unity.compile(mod, target="cuda"), unity.compile(mod, target="llvm")


@pytest.fixture
def emulated():
    with use_driver(EmulatedDriver()) as drv:
        yield drv


def _cpu(ex, x):
    return relax.VirtualMachine(ex, unity.cpu())["main"](x).numpy()


def test_mlp_matches_cpu_for_every_batch_size(mlp_pair, emulated):
    gpu, cpu = mlp_pair
    vm = relax.VirtualMachine(gpu, unity.cuda())
    launches = []
    for n in (1, 3, 37):  # the grid follows the symbolic batch
        x = rng.standard_normal((n, 16)).astype("float32")
        before = emulated.launches
        out = vm["main"](x)
        launches.append(emulated.launches - before)
        assert isinstance(out, CUDATensor) and out.device == unity.cuda() and out.shape == (n, 10)
        np.testing.assert_allclose(out.numpy(), _cpu(cpu, x), rtol=1e-5, atol=1e-5)
    assert min(launches) >= 2


def test_mlp_takes_and_chains_device_tensors(mlp_pair, emulated):
    gpu, cpu = mlp_pair
    vm = relax.VirtualMachine(gpu, unity.cuda())
    x = rng.standard_normal((4, 16)).astype("float32")
    xd = unity.runtime.tensor(x, unity.cuda())
    out = vm["main"](xd)
    np.testing.assert_allclose(out.numpy(), _cpu(cpu, x), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(xd.numpy(), x)  # the input is untouched


def test_small_cnn_matches_cpu(emulated):
    mod = cnn()
    x = rng.standard_normal((1, 3, 8, 8)).astype("float32")
    out = relax.VirtualMachine(unity.compile(mod, target="cuda"), unity.cuda())["main"](x)
    np.testing.assert_allclose(out.numpy(), _cpu(unity.compile(mod, target="llvm"), x),
                               rtol=1e-5, atol=1e-6)


def test_bad_input_names_the_parameter(mlp_pair, emulated):
    vm = relax.VirtualMachine(mlp_pair[0], unity.cuda())
    with pytest.raises(ValueError, match="parameter 0 'x'.*dim 1 must be 16"):
        vm["main"](np.zeros((2, 15), "float32"))
    with pytest.raises(ValueError, match="expected dtype float32, got float64"):
        vm["main"](np.zeros((2, 16)))
    with pytest.raises(ValueError, match="expected 1 inputs"):
        vm["main"]()


def test_export_and_load_a_cuda_executable(mlp_pair, emulated, tmp_path):
    gpu, cpu = mlp_pair
    path = str(tmp_path / "mlp_cuda.so")
    gpu.export_library(path)
    loaded = unity.runtime.load_module(path)
    assert loaded.program == gpu.program and loaded.kernels.plans == gpu.kernels.plans
    assert loaded.kernels.source == gpu.kernels.source
    from unity.codegen.cuda_build import nvcc_path

    assert (loaded.kernels.ptx is not None) == (nvcc_path() is not None)  # PTX embedded
    for a, b in zip(loaded.constants, gpu.constants, strict=True):
        np.testing.assert_array_equal(a, b)
    x = rng.standard_normal((5, 16)).astype("float32")
    out = relax.VirtualMachine(loaded, unity.cuda())["main"](x)  # TIR found by its source
    np.testing.assert_allclose(out.numpy(), _cpu(cpu, x), rtol=1e-5, atol=1e-5)


def test_tensor_round_trips_and_copies(emulated):
    a = rng.standard_normal((3, 4)).astype("float32")
    t = unity.runtime.tensor(a, unity.cuda())
    assert (t.shape, t.dtype, t.device) == ((3, 4), "float32", unity.cuda(0))
    np.testing.assert_array_equal(t.numpy(), a)
    e = unity.runtime.empty((3, 4), "float32", unity.cuda())
    np.testing.assert_array_equal(e.copyfrom(t).numpy(), a)
    host = t.copyto(unity.cpu())
    assert host.device == unity.cpu() and np.array_equal(host.numpy(), a)
    with pytest.raises(ValueError, match="does not match"):
        e.copyfrom(np.zeros((4, 3), "float32"))
    unity.cuda().sync()


def test_a_scalar_keeps_its_rank_on_the_host_and_the_device(emulated):
    """np.ascontiguousarray makes a 0-d array 1-d: a scalar input (a scale, a rate) was
    refused by the CUDA VM as "expected rank 0, got rank 1"."""
    for device in (unity.cpu(), unity.cuda()):
        t = unity.runtime.tensor(np.array(2.5, "float32"), device)
        assert t.shape == () and t.numpy().shape == () and float(t.numpy()) == 2.5


def test_cuda_device_without_pycuda_or_stand_in_says_what_is_missing(mlp_pair):
    from unity.runtime.cuda import CudaUnavailableError, is_available

    if is_available():
        pytest.skip("a GPU is present")
    assert unity.cuda(0) == unity.runtime.Device("cuda", 0) and not unity.cuda().exist
    with pytest.raises(CudaUnavailableError, match="CUDA is not available"):
        unity.runtime.tensor(np.zeros(2, "float32"), unity.cuda())
    with pytest.raises(CudaUnavailableError, match="CUDA is not available"):
        relax.VirtualMachine(mlp_pair[0], unity.cuda())
    with pytest.raises(ValueError, match="non-negative int"):
        unity.cuda(-1)


@pytest.mark.parametrize(
    ("expr", "value"),
    [(["/", -7, 2], -3), (["%", -7, 2], -1), (["//", -7, 2], -4), (["fmod", -7, 2], 1),
     (["sel", ["<", ["v", 0], 3], ["max", 1, 2], 9], 2), (["cast", "int32", ["f", 2.7]], 2),
     (["and", ["not", 0], [">=", ["v", 0], 2]], True)],
)  # fmt: skip
def test_host_plan_expressions_follow_tir_semantics(expr, value):
    assert evaluate(expr, {0: 2}) == value


def test_launch_grids_are_symbolic_in_the_batch(mlp_pair):
    plans = mlp_pair[0].kernels.plans
    grids = [s[2] for plan in plans.values() for s in _walk(plan["body"]) if s[0] == "launch"]
    assert any("v" in str(g) for g in grids)  # computed from n at run time
    code = mlp_pair[0].program["functions"]["main"]["code"]
    assert "storage" in [ins[0] for ins in code]  # memory planning places the hidden layer


def test_emulating_kernels_of_another_process_is_a_clear_error():
    with pytest.raises(RuntimeError, match="not compiled in this process"):
        EmulatedDriver().load_module("__global__ void k() {}")


def _walk(stmt):
    yield stmt
    if stmt[0] == "seq":
        for s in stmt[1]:
            yield from _walk(s)
    elif stmt[0] in ("for", "let", "assert", "alloc"):
        yield from _walk(stmt[-1])
    elif stmt[0] == "if":  # a kernel's int32 twin, or the kernel
        yield from _walk(stmt[2])
        yield from _walk(stmt[3])


def test_tuple_results_and_cross_thread_reductions(emulated):
    from unity.relax import op

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 100), "float32"))  # 100: across threads
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(op.exp(x))
            out = bb.emit_output(relax.Tuple([a, bb.emit(op.sum(a, axis=[1]))]))
        bb.emit_func_output(out)
    x = rng.standard_normal((5, 100)).astype("float32")
    ex = unity.compile(bb.get(), target="cuda")
    assert "__shfl_down_sync" in ex.kernels.get_source("cuda")
    a, s = relax.VirtualMachine(ex, unity.cuda())["main"](x)
    np.testing.assert_allclose(a.numpy(), np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(s.numpy(), np.exp(x).sum(1), rtol=1e-5)


@pytest.mark.slow
def test_resnet50_kernels_at_full_size_have_no_races_or_out_of_bounds_accesses():
    """Every launch of ResNet-50 on the emulated GPU, two blocks each (the first and the
    last, whose tiles are the ragged ones): the emulator raises on a data race, an
    out-of-bounds access or a divergent barrier (the results are only partly computed)."""
    from .cuda_models import resnet50, resnet50_input

    ex = unity.compile(resnet50(), target="cuda")
    with use_driver(EmulatedDriver(sample_blocks=2)) as drv:
        out = relax.VirtualMachine(ex, unity.cuda())["main"](resnet50_input())
        assert drv.launches >= 60 and out.shape == (1, 1000)


@pytest.mark.slow
def test_float16_resnet50_on_the_tensor_cores_has_no_races_misaligned_or_out_of_bounds_tiles():
    """ResNet-50 in float16: its convs and dense layer become tensor-core kernels (strided,
    1x1, 7x7, ragged tiles padded), every kernel compiles with nvcc, and every launch at
    full size, emulated on two blocks, raises no race, no out-of-bounds or misaligned
    tile and no divergent barrier or warp call."""
    from unity.codegen.cuda_build import nvcc_path

    from .cuda_models import resnet50_fp16, resnet50_input

    ex = unity.compile(resnet50_fp16(), target="cuda")
    src = ex.kernels.get_source("cuda")
    assert src.count("nvcuda::wmma::mma_sync") >= 20
    if nvcc_path() is not None:
        assert ex.kernels.get_source("ptx").count(".entry") == src.count("__global__")
    with use_driver(EmulatedDriver(sample_blocks=2)) as drv:
        out = relax.VirtualMachine(ex, unity.cuda())["main"](resnet50_input().astype("float16"))
        assert drv.launches >= 30 and out.shape == (1, 1000)


def test_float16_mlp_runs_its_gemms_on_the_tensor_cores(emulated):
    mod, (w1, b1, w2) = mlp_fp16()
    ex = unity.compile(mod, target="cuda")
    src = ex.kernels.get_source("cuda")  # two kernels: the matmul, matmul + bias + relu
    assert src.count("nvcuda::wmma::mma_sync") == 2 and src.count("__global__") == 2
    x = rng.standard_normal((64, 128)).astype("float16")
    out = relax.VirtualMachine(ex, unity.cuda())["main"](x).numpy()
    h = np.maximum(x.astype("float32") @ w1.T.astype("float32") + b1, 0).astype("float16")
    ref = h.astype("float32") @ w2.T.astype("float32")
    assert out.dtype == np.float16
    np.testing.assert_allclose(out.astype("float32"), ref, rtol=2e-2, atol=5e-2)


def test_profile_times_every_kernel_launch(mlp_pair, emulated):
    gpu, _ = mlp_pair
    vm = relax.VirtualMachine(gpu, unity.cuda())
    x = rng.standard_normal((3, 16)).astype("float32")
    before = emulated.launches
    report = vm.profile("main", x, repeat=2)
    launches = (emulated.launches - before) // 3  # a warm-up run and two timed ones
    assert sum(row.calls for row in report.rows) == launches >= 2
    assert all(row.name.endswith(tuple("0123456789")) for row in report.rows)  # kernel names
    assert report.kernel_seconds <= report.total_seconds * 1.01
    assert "total (per run)" in report.table(top=1)
