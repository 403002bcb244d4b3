"""The thin CUDA launch layer: it imports without a backend and says what is missing, and
its cuda-python backend copies, launches and times through the driver calls (on fake
bindings over host memory, the kernels run by the GPU emulator)."""

import importlib.util

import numpy as np
import pytest
from fake_cuda_bindings import FakeBindings
from gpu_workloads import two_kernels

import unity
from unity import relax, tir
from unity.runtime.cuda import CudaUnavailableError, driver, is_available
from unity.runtime.cuda.driver_cuda_python import CudaPythonDriver

HAS_PYCUDA = importlib.util.find_spec("pycuda") is not None


@pytest.fixture
def entry_only_ptx(monkeypatch):
    """`compile_ptx` as a list of the kernels' `.entry` lines (all the fake driver reads),
    so that these tests need no nvcc."""
    import re

    import unity.codegen.cuda_build as cb

    kernel = re.compile(r"__global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(")

    def ptx(source, arch=None):
        return "".join(f".entry {name}(\n" for name in kernel.findall(source))

    monkeypatch.setattr(cb, "compile_ptx", ptx)


def test_is_available_answers_without_raising():
    assert is_available() in (True, False)


@pytest.mark.skipif(HAS_PYCUDA, reason="pycuda is installed")
def test_driver_without_a_gpu_names_each_backend_and_what_it_lacks():
    with pytest.raises(CudaUnavailableError, match="pycuda is not installed") as err:
        driver(0)
    assert "cuda-python" in str(err.value)  # not installed, or installed with no GPU


def test_cuda_python_backend_runs_a_module_copies_launches_and_times(monkeypatch, entry_only_ptx):
    import unity.runtime.cuda as rc

    lib = unity.build(two_kernels(tir.SizeVar("n", "int32")).mod, "cuda")
    fake = FakeBindings(lib.mod)
    drv = CudaPythonDriver(0, bindings=fake)
    monkeypatch.setattr(rc, "driver", lambda device_id=0: drv)
    av = np.arange(100, dtype="float32")
    cv = np.zeros(100, "float32")
    lib["main"](av, cv)
    np.testing.assert_array_equal(cv, (av + 1) * 3)
    assert fake.launches == [("main_kernel0", (4, 1, 1), (32, 1, 1)),
                             ("main_kernel1", (4, 1, 1), (32, 1, 1))]
    assert len(fake.modules) == 1  # the PTX, loaded once
    cv[...] = 0
    timing = lib.time_evaluator("main", number=2, repeat=2)(av, cv)
    assert len(timing.results) == 2 and all(t > 0 for t in timing.results)
    assert len(fake.launches) == 2 + 2 * (1 + 2 * 2)  # a warm-up call, then 2 x 2 timed ones
    np.testing.assert_array_equal(cv, (av + 1) * 3)  # the outputs copied back


def test_cuda_python_backend_runs_the_vm(entry_only_ptx):
    from unity.relax import op
    from unity.runtime.cuda.device_api import use_driver

    w = np.random.default_rng(0).standard_normal((8, 16)).astype("float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 16), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(op.nn.relu(op.matmul(x, op.permute_dims(relax.const(w)))))
        bb.emit_func_output(out)
    ex = unity.compile(bb.get(), target="cuda")
    xv = np.random.default_rng(1).standard_normal((5, 16)).astype("float32")
    fake = FakeBindings(ex.kernels.lowered)
    with use_driver(CudaPythonDriver(0, bindings=fake)):
        got = relax.VirtualMachine(ex, unity.cuda())["main"](xv).numpy()
    np.testing.assert_allclose(got, np.maximum(xv @ w.T, 0), rtol=1e-5, atol=1e-5)
    assert fake.launches


def test_cuda_python_driver_errors_name_the_call():
    with pytest.raises(CudaUnavailableError, match=r"cuda-python found no usable GPU: CUDA driver "
                       r"call cuInit failed: fake failure"):
        CudaPythonDriver(0, bindings=FakeBindings(fail="cuInit"))
    drv = CudaPythonDriver(0, bindings=FakeBindings(fail="cuMemAlloc"))
    with pytest.raises(RuntimeError, match="CUDA driver call cuMemAlloc failed: fake failure"):
        drv.alloc(16)


def test_cuda_python_driver_copies_at_offsets():
    drv = CudaPythonDriver(0, bindings=FakeBindings())
    mem = drv.to_device(np.arange(8, dtype="int32"))
    drv.write(mem, 8, np.array([70, 71], "int32"))
    out = np.empty(4, "int32")
    drv.read(mem, 4, out)
    np.testing.assert_array_equal(out, [1, 70, 71, 4])
    assert drv.pointer(mem, 12, 4, "int32") == np.uintp(int(mem) + 12)


def test_an_onnx_if_decided_at_run_time_runs_on_the_cuda_vm(entry_only_ptx):
    from onnx import TensorProto, helper

    from unity.relax.frontend.onnx import from_onnx
    from unity.runtime.cuda.device_api import use_driver

    f = TensorProto.FLOAT

    def branch(name, op):
        return helper.make_graph([helper.make_node(op, ["x"], [name])], name, [],
                                 [helper.make_tensor_value_info(name, f, [4, 8])])

    nodes = [helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
             helper.make_node("Greater", ["m", "t"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=branch("a", "Exp"), else_branch=branch("b", "Neg"))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", f, [4, 8])],
                              [helper.make_tensor_value_info("y", f, [4, 8])],
                              initializer=[helper.make_tensor("t", f, [], [0.5])])
    ex = unity.compile(from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])),
                       target="cuda")
    fake = FakeBindings(ex.kernels.lowered)
    x = np.random.default_rng(2).random((4, 8), dtype=np.float32) * 0.4
    with use_driver(CudaPythonDriver(0, bindings=fake)):
        vm = relax.VirtualMachine(ex, unity.cuda())
        np.testing.assert_allclose(vm["main"](x).numpy(), -x)
        np.testing.assert_allclose(vm["main"](x + 0.5).numpy(), np.exp(x + 0.5), rtol=1e-6)
