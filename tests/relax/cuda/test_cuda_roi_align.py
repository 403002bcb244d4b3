"""RoiAlign compiled for CUDA: the default GPU schedules take its stages, nvcc accepts the C
(of a modest size), and the kernels (in the GPU emulator, and on a GPU where there is one)
match the reference."""

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

rng = np.random.default_rng(5)

CASES = {  # attributes
    "avg_adaptive": {"mode": "avg", "output_height": 3, "output_width": 2, "spatial_scale": 0.5},
    "max_ratio2": {"mode": "max", "output_height": 2, "output_width": 2, "sampling_ratio": 2},
}
X_SHAPE, N_ROIS = (2, 3, 6, 7), 4


def _model(attrs):
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], **attrs)
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        [node], "g",
        [value("x", TensorProto.FLOAT, X_SHAPE), value("rois", TensorProto.FLOAT, [N_ROIS, 4]),
         value("idx", TensorProto.INT64, [N_ROIS])],
        [value("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


@pytest.fixture(scope="module")
def compiled():
    out = {}
    for name, attrs in CASES.items():
        proto = _model(attrs)
        x = rng.standard_normal(X_SHAPE).astype("float32")
        corners = rng.uniform(-4, 14, (N_ROIS, 2, 2))
        rois = np.concatenate([corners.min(1), corners.max(1)], axis=1).astype("float32")
        idx = np.array([0, 1, 1, 0], np.int64)
        want = ReferenceEvaluator(proto).run(None, {"x": x, "rois": rois, "idx": idx})[0]
        out[name] = (unity.compile(from_onnx(proto), target="cuda"), (x, rois, idx), want)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_emulated_kernels_match_the_reference(compiled, name):
    ex, inputs, want = compiled[name]
    got = run_emulated(ex, *inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_stays_small(compiled, name):
    assert len(compiled[name][0].kernels.source) < 40_000


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_cuda_compiles_with_nvcc(compiled, name):
    kernels = compiled[name][0].kernels
    assert_launched_kernels_compile(kernels)


@pytest.mark.gpu
@pytest.mark.skipif(not is_available(), reason="needs a CUDA GPU and pycuda or cuda-python")
@pytest.mark.parametrize("name", sorted(CASES))
def test_on_the_gpu_matches_the_reference(compiled, name):
    ex, inputs, want = compiled[name]
    got = relax.VirtualMachine(ex, unity.cuda())["main"](*inputs).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
