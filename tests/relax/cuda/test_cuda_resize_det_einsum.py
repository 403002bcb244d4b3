"""Antialiased Resize, Det and Einsum compiled for CUDA: the default GPU schedules take their
stages, nvcc accepts the C, and the kernels (in the GPU emulator) match the reference."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import unity
from unity import relax
from unity.codegen.cuda_build import nvcc_path
from unity.relax.frontend.onnx import from_onnx

from .cuda_checks import assert_launched_kernels_compile, run_emulated

rng = np.random.default_rng(5)
CUBIC_AA = {"mode": "cubic", "antialias": 1}
CASES = {  # op type, input shapes, output shape, attributes
    "resize_cubic_antialias": ("Resize", [(1, 2, 9, 7)], (1, 2, 4, 3), CUBIC_AA),
    "det_batched": ("Det", [(3, 4, 4)], (3,), {}),
    "einsum_ellipsis_diagonal": ("Einsum", [(2, 3, 4, 4), (3, 4, 5)], (), {"equation": "...ii,...ij->...j"}),
}  # fmt: skip


def _model(op_type, shapes, out_shape, attrs):
    names = [f"x{i}" for i in range(len(shapes))]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)]
    inits = []
    if op_type == "Resize":
        inits = [helper.make_tensor("sizes", TensorProto.INT64, [len(out_shape)], out_shape)]
        names = [names[0], "", "", "sizes"]
    node = helper.make_node(op_type, names, ["y"], **attrs)
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([node], "g", inputs, [out], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


@pytest.fixture(scope="module")
def compiled():
    out = {}
    for name, (op_type, shapes, out_shape, attrs) in CASES.items():
        proto = _model(op_type, shapes, out_shape, attrs)
        xs = [rng.standard_normal(s).astype("float32") for s in shapes]
        want = ReferenceEvaluator(proto).run(None, {f"x{i}": x for i, x in enumerate(xs)})[0]
        out[name] = (unity.compile(from_onnx(proto), target="cuda"), xs, want)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_emulated_kernels_match_the_reference(compiled, name):
    ex, xs, want = compiled[name]
    got = run_emulated(ex, *xs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_cuda_compiles_with_nvcc(compiled, name):
    kernels = compiled[name][0].kernels
    assert_launched_kernels_compile(kernels)
