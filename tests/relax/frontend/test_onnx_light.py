"""The "light" real-architecture models shipped inside `onnx` (ResNet-50, VGG-19, ...).

The default suite imports each one and checks the struct info of its result; the
`slow` test compiles it and compares with the expected output stored beside it
(the input is the one onnx's backend runner uses: ``arange(n) / n``) and with
onnxruntime.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from unity.relax.frontend.onnx import from_onnx

from .onnx_helpers import run_ort, run_unity

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
MODELS = sorted(os.path.basename(p)[: -len(".onnx")] for p in glob.glob(os.path.join(LIGHT_DIR, "light_*.onnx")))


def _expected(name: str) -> np.ndarray:
    tensor = onnx.TensorProto()
    with open(os.path.join(LIGHT_DIR, f"{name}_output_0.pb"), "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def _dummy_input(proto: onnx.ModelProto) -> tuple[str, np.ndarray]:
    inits = {t.name for t in proto.graph.initializer}
    (x,) = [i for i in proto.graph.input if i.name not in inits]
    shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in x.type.tensor_type.shape.dim)
    n = int(np.prod(shape))
    return x.name, (np.arange(n).reshape(shape) / n).astype(np.float32)


def test_all_nine_light_models_are_found():
    assert len(MODELS) == 9


@pytest.mark.parametrize("name", MODELS)
def test_light_model_imports_with_expected_output_struct_info(name: str):
    mod = from_onnx(onnx.load(os.path.join(LIGHT_DIR, f"{name}.onnx")))
    want = _expected(name)
    ret = mod["main"].ret_struct_info
    assert tuple(int(d) for d in ret.shape) == want.shape
    assert ret.dtype == str(want.dtype)


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_light_model_matches_expected_output_and_onnxruntime(name: str):
    proto = onnx.load(os.path.join(LIGHT_DIR, f"{name}.onnx"))
    input_name, x = _dummy_input(proto)
    got = run_unity(from_onnx(proto), x)[0]
    np.testing.assert_allclose(got, _expected(name), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(got, run_ort(proto, {input_name: x})[0], rtol=1e-3, atol=1e-4)
