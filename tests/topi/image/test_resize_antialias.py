"""Antialiased resize (ONNX `antialias=1`) vs the ONNX reference implementation."""

from __future__ import annotations

import numpy as np
import pytest

from tests.topi.run import check, rand
from unity import te, topi
from unity.topi.image.antialias import antialias_taps

onnx = pytest.importorskip("onnx")
from onnx import helper
from onnx.reference import ReferenceEvaluator


def _onnx_resize(x: np.ndarray, sizes: tuple[int, ...], **attrs: object) -> np.ndarray:
    node = helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], antialias=1, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("sizes", onnx.TensorProto.INT64, [x.ndim])],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    full = np.array([*x.shape[:2], *sizes], "int64")
    return ReferenceEvaluator(model).run(None, {"X": x, "sizes": full})[0]


CASES = [  # method, coordinate mode, input H W, output H W, exclude_outside
    ("linear", "half_pixel", (9, 7), (4, 3), False),
    ("linear", "align_corners", (8, 10), (3, 10), False),
    ("linear", "pytorch_half_pixel", (6, 11), (9, 2), True),
    ("cubic", "half_pixel", (9, 7), (4, 3), False),
    ("cubic", "asymmetric", (12, 5), (5, 8), True),
    ("cubic", "half_pixel_symmetric", (7, 13), (3, 1), False),
]  # fmt: skip


@pytest.mark.parametrize(("method", "coord", "size_in", "size_out", "exclude"), CASES)
def test_antialias_matches_onnx_reference(method, coord, size_in, size_out, exclude):
    shape = (1, 2, *size_in)
    x_t = te.placeholder(shape, name="x")
    x = rand(shape)
    out = topi.image.resize(x_t, [2, 3], list(size_out), method, coord, cubic_exclude=exclude,
                            antialias=True)  # fmt: skip
    want = _onnx_resize(x, size_out, mode=method, coordinate_transformation_mode=coord,
                        exclude_outside=int(exclude))  # fmt: skip
    check([x_t], out, [x], want, rtol=1e-5, atol=1e-5, build=True)


def test_antialias_with_given_scales_on_one_axis():
    x_t = te.placeholder((2, 10, 3), name="x")
    x = rand((2, 10, 3))
    out = topi.image.resize(x_t, [1], [6], "cubic", scales=[0.6], antialias=True)
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], mode="cubic", antialias=1,
                            axes=[1])  # fmt: skip
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("scales", onnx.TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    want = ReferenceEvaluator(model).run(None, {"X": x, "scales": np.array([0.6], "float32")})[0]
    check([x_t], out, [x], want, rtol=1e-5, atol=1e-5)


def test_taps_grow_with_the_downscale():
    assert antialias_taps("linear", 2.0) == (0, 2)
    assert antialias_taps("linear", 0.25) == (-3, 8)
    assert antialias_taps("cubic", 1.0) == (-1, 4)
    assert antialias_taps("cubic", 0.5) == (-3, 8)


def test_antialias_needs_static_lengths():
    h = te.var("h")
    x_t = te.placeholder((1, h), name="x")
    with pytest.raises(ValueError, match="antialias needs static lengths"):
        topi.image.resize(x_t, [1], [3], "linear", antialias=True)
