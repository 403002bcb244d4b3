"""Det through `from_onnx`: values against numpy, a dynamic batch, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from unity.relax.frontend.onnx import OnnxImportError, from_onnx

from .onnx_helpers import FLOAT, model, run_unity, tensor

RNG = np.random.default_rng(1)


def _det_model(x_shape, out_shape):
    node = helper.make_node("Det", ["x"], ["y"], name="det")
    return model([node], [tensor("x", FLOAT, x_shape)], [tensor("y", FLOAT, out_shape)])


def test_batched_det_with_a_dynamic_batch():
    mod = from_onnx(_det_model(["n", 4, 4], ["n"]))
    for n in (1, 3):
        x = RNG.standard_normal((n, 4, 4)).astype("float32")
        (got,) = run_unity(mod, x)
        np.testing.assert_allclose(got, np.linalg.det(x), rtol=1e-4, atol=1e-5)


def test_symbolic_or_non_square_matrices_name_the_node():
    with pytest.raises(OnnxImportError, match=r'Det node "det": needs a static matrix size, got m x m'):
        from_onnx(_det_model([2, "m", "m"], [2]))
    with pytest.raises(OnnxImportError, match=r'Det node "det": expects square matrices, got 2 x 3'):
        from_onnx(_det_model([2, 3], []))
