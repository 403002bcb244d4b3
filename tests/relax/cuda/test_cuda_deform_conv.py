"""DeformConv compiled for CUDA: the default GPU schedules take its stages, nvcc accepts the C
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

rng = np.random.default_rng(7)

SHAPES = {"x": (2, 4, 6, 7), "w": (6, 2, 3, 3), "o": (2, 36, 6, 4), "b": (6,), "m": (2, 18, 6, 4)}
ATTRS = {"group": 2, "offset_group": 2, "pads": [1, 1, 1, 1], "strides": [1, 2]}


@pytest.fixture(scope="module")
def compiled():
    node = helper.make_node("DeformConv", list(SHAPES), ["y"], **ATTRS)
    value = helper.make_tensor_value_info
    inputs = [value(k, TensorProto.FLOAT, s) for k, s in SHAPES.items()]
    graph = helper.make_graph([node], "g", inputs, [value("y", TensorProto.FLOAT, None)])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    feeds = {k: rng.uniform(-1.5, 1.5, s).astype("float32") for k, s in SHAPES.items()}
    want = ReferenceEvaluator(proto).run(None, feeds)[0]
    return unity.compile(from_onnx(proto), target="cuda"), list(feeds.values()), want


def test_emulated_kernels_match_the_reference(compiled):
    ex, inputs, want = compiled
    got = run_emulated(ex, *inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_generated_source_stays_small(compiled):
    assert len(compiled[0].kernels.source) < 60_000


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not installed")
def test_generated_cuda_compiles_with_nvcc(compiled):
    kernels = compiled[0].kernels
    assert_launched_kernels_compile(kernels)


@pytest.mark.gpu
@pytest.mark.skipif(not is_available(), reason="needs a CUDA GPU and pycuda or cuda-python")
def test_on_the_gpu_matches_the_reference(compiled):
    ex, inputs, want = compiled
    got = relax.VirtualMachine(ex, unity.cuda())["main"](*inputs).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
