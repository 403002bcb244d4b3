"""GridSample compiled for CUDA: the default GPU schedules take its stages, nvcc accepts the C,
and the kernels (in the GPU emulator, and on a GPU where there is one) match the reference."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import unity
from unity import relax
from unity.codegen.cuda_build import nvcc_path
from unity.relax.frontend.onnx import from_onnx
from unity.runtime.cuda import is_available

from .cuda_checks import assert_launched_kernels_compile, run_emulated

rng = np.random.default_rng(3)

CUBIC_REFLECTION = {"mode": "cubic", "padding_mode": "reflection"}
NEAREST_BORDER = {"mode": "nearest", "padding_mode": "border"}
CASES = {  # x shape, grid shape, attributes
    "cubic_reflection_2d": ((1, 2, 4, 5), (1, 3, 6, 2), CUBIC_REFLECTION),
    "linear_zeros_3d": ((2, 2, 3, 4, 2), (2, 2, 3, 2, 3), {"mode": "linear", "align_corners": 1}),
    "nearest_border_2d": ((1, 3, 4, 5), (1, 3, 6, 2), NEAREST_BORDER),
}  # fmt: skip


def _model(x_shape, grid_shape, attrs):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT, grid_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


@pytest.fixture(scope="module")
def compiled():
    out = {}
    for name, (x_shape, grid_shape, attrs) in CASES.items():
        proto = _model(x_shape, grid_shape, attrs)
        x = rng.standard_normal(x_shape).astype("float32")
        grid = rng.uniform(-1.6, 1.6, grid_shape).astype("float32")
        want = ReferenceEvaluator(proto).run(None, {"x": x, "grid": grid})[0]
        out[name] = (unity.compile(from_onnx(proto), target="cuda"), x, grid, want)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_emulated_kernels_match_the_reference(compiled, name):
    ex, x, grid, want = compiled[name]
    got = run_emulated(ex, x, grid)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_cuda_compiles_with_nvcc(compiled, name):
    kernels = compiled[name][0].kernels
    assert_launched_kernels_compile(kernels)


@pytest.mark.gpu
@pytest.mark.skipif(not is_available(), reason="needs a CUDA GPU and pycuda or cuda-python")
@pytest.mark.parametrize("name", sorted(CASES))
def test_on_the_gpu_matches_the_reference(compiled, name):
    ex, x, grid, want = compiled[name]
    got = relax.VirtualMachine(ex, unity.cuda())["main"](x, grid).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
