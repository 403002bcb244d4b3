"""resize2d vs the ONNX reference implementation of Resize (modes and rounding)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.topi.run import check, rand
from unity import te, topi

onnx = pytest.importorskip("onnx")
from onnx import helper
from onnx.reference import ReferenceEvaluator


def _onnx_resize(x: np.ndarray, sizes: tuple[int, int], **attrs: object) -> np.ndarray:
    node = helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("sizes", onnx.TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    full = np.array([*x.shape[:2], *sizes], "int64")
    return ReferenceEvaluator(model).run(None, {"X": x, "sizes": full})[0]


CASES = [
    ("nearest_neighbor", "nearest", "asymmetric", "floor", (6, 3)),
    ("nearest_neighbor", "nearest", "half_pixel", "round_prefer_floor", (7, 5)),
    ("nearest_neighbor", "nearest", "align_corners", "round_prefer_ceil", (3, 8)),
    ("nearest_neighbor", "nearest", "asymmetric", "ceil", (5, 5)),
    ("linear", "linear", "half_pixel", "floor", (7, 3)),
    ("linear", "linear", "align_corners", "floor", (8, 6)),
    ("linear", "linear", "pytorch_half_pixel", "floor", (1, 6)),
    ("linear", "linear", "asymmetric", "floor", (2, 9)),
    ("linear", "linear", "half_pixel_symmetric", "floor", (6, 7)),
    ("cubic", "cubic", "half_pixel", "floor", (7, 6)),
    ("cubic", "cubic", "align_corners", "floor", (3, 2)),
]  # fmt: skip


@pytest.mark.parametrize(("method", "onnx_mode", "coord", "rounding", "size"), CASES)
def test_resize_matches_onnx_reference(method, onnx_mode, coord, rounding, size):
    x_t = te.placeholder((1, 2, 4, 5), name="x")
    x = rand((1, 2, 4, 5))
    out = topi.image.resize2d(x_t, size, "NCHW", method, coord, rounding)
    attrs = {"mode": onnx_mode, "coordinate_transformation_mode": coord}
    if method == "nearest_neighbor":
        attrs["nearest_mode"] = rounding
    check([x_t], out, [x], _onnx_resize(x, size, **attrs), rtol=1e-5, atol=1e-5)


def test_cubic_exclude_outside_and_pytorch_alpha():
    x_t = te.placeholder((1, 1, 5, 4), name="x")
    x = rand((1, 1, 5, 4))
    out = topi.image.resize2d(x_t, (8, 7), method="cubic", cubic_alpha=-0.5, cubic_exclude=True)
    want = _onnx_resize(x, (8, 7), mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1)
    check([x_t], out, [x], want, rtol=1e-5, atol=1e-5)


def test_nhwc_with_symbolic_input_size():
    h = te.var("h")
    x_t = te.placeholder((1, h, h, 2), name="x")
    out = topi.image.resize2d(x_t, (6, 6), "NHWC", "linear")
    for s in (3, 4):
        x = rand((1, s, s, 2))
        want = _onnx_resize(x.transpose(0, 3, 1, 2), (6, 6), mode="linear").transpose(0, 2, 3, 1)
        check([x_t], out, [x], want, rtol=1e-5, atol=1e-5)


def test_tf_half_pixel_for_nn():
    x_t = te.placeholder((1, 1, 4, 4), name="x")
    x = rand((1, 1, 4, 4))
    out = topi.image.resize2d(
        x_t,
        (6, 3),
        method="nearest_neighbor",
        coordinate_transformation_mode="tf_half_pixel_for_nn",
        rounding_method="floor",
    )
    rows = np.minimum(np.floor((np.arange(6) + 0.5) * 4 / 6), 3).astype(int)
    cols = np.minimum(np.floor((np.arange(3) + 0.5) * 4 / 3), 3).astype(int)
    check([x_t], out, [x], x[:, :, rows][:, :, :, cols])


def _onnx_resize_general(x, sizes_full, roi=None, **attrs):
    inputs = ["X", "roi" if roi is not None else "", "", "sizes"]
    node = helper.make_node("Resize", inputs, ["Y"], **attrs)
    ins = [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, x.shape),
           helper.make_tensor_value_info("sizes", onnx.TensorProto.INT64, [len(sizes_full)])]  # fmt: skip
    feeds = {"X": x, "sizes": np.array(sizes_full, "int64")}
    if roi is not None:
        ins.append(helper.make_tensor_value_info("roi", onnx.TensorProto.FLOAT, [len(roi)]))
        feeds["roi"] = np.array(roi, "float32")
    graph = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    return ReferenceEvaluator(model).run(None, feeds)[0]


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_tf_crop_and_resize_extrapolates(mode):
    x_t = te.placeholder((1, 1, 4, 5), name="x")
    x = rand((1, 1, 4, 5))
    roi = [0, 0, 0.4, -0.2, 1, 1, 1.3, 0.9]
    method = "nearest_neighbor" if mode == "nearest" else "linear"
    out = topi.image.resize(x_t, [2, 3], [3, 4], method, "tf_crop_and_resize", "round_prefer_floor",
                            roi=roi[2:4] + roi[6:8], extrapolation_value=10.0)  # fmt: skip
    want = _onnx_resize_general(x, [1, 1, 3, 4], roi, mode=mode, coordinate_transformation_mode="tf_crop_and_resize",
                                extrapolation_value=10.0)  # fmt: skip
    check([x_t], out, [x], want, rtol=1e-5, atol=1e-5)


def test_resize_three_axes_linear():
    x_t = te.placeholder((2, 3, 4), name="x")
    x = rand((2, 3, 4))
    out = topi.image.resize(x_t, [0, 1, 2], [3, 5, 2], "linear", "align_corners")
    want = _onnx_resize_general(x, [3, 5, 2], mode="linear", coordinate_transformation_mode="align_corners")
    check([x_t], out, [x], want, rtol=1e-5, atol=1e-5)


def test_given_scales_set_the_resized_length_as_onnx_does():
    x_t = te.placeholder((1, 1, 2, 4), name="x")
    x = np.arange(1, 9, dtype="float32").reshape(1, 1, 2, 4)
    out = topi.image.resize(x_t, [2, 3], [1, 2], "linear", "align_corners", scales=[0.6, 0.6])
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], mode="linear",
                            coordinate_transformation_mode="align_corners")  # fmt: skip
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("scales", onnx.TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    want = ReferenceEvaluator(model).run(None, {"X": x, "scales": np.array([1, 1, 0.6, 0.6], "float32")})[0]
    check([x_t], out, [x], want, rtol=1e-5, atol=1e-5)


def _stages(out) -> list[str]:
    """The compute stages behind `out`, producers first (tables left out)."""
    names, todo = [], [out]
    while todo:
        t = todo.pop()
        if t.op.name.startswith("T_resize") and "index" not in t.op.name and "weight" not in t.op.name:
            names.append(t.op.name)
            todo.extend(t.op.input_tensors)
    return names[::-1]


def _first_pass(out):
    sums = out.op.input_tensors
    while sums[0].op.name != "T_resize_sum0":
        sums = [t for t in sums[0].op.input_tensors if t.op.name.startswith("T_resize_sum")]
    return sums[0]


def test_linear_over_all_axes_skips_unit_scales_and_runs_one_pass_per_axis():
    # ONNX lists N and C with scale 1: those axes read one element, the W pass (the
    # smaller array when upsampling) runs first, then H reads whole rows
    x_t = te.placeholder((1, 2, 3, 4), name="x")
    x = rand((1, 2, 3, 4))
    out = topi.image.resize(x_t, [0, 1, 2, 3], [1, 2, 6, 8], "linear", "half_pixel", scales=[1.0, 1.0, 2.0, 2.0])
    assert _stages(out) == ["T_resize_sum0", "T_resize_sum", "T_resize"]
    first = _first_pass(out)
    assert [d.value for d in first.shape] == [1, 2, 3, 8]
    check([x_t], out, [x], _onnx_resize(x, (6, 8), mode="linear"), rtol=1e-5, atol=1e-5)


def test_shrinking_axis_runs_first_and_symbolic_equal_axes_are_skipped():
    h = te.var("h")
    x_t = te.placeholder((h, 6, 4), name="x")
    out = topi.image.resize(x_t, [0, 1, 2], [h, 3, 8], "cubic", "align_corners")
    first = _first_pass(out)
    assert first.shape[1].value == 3 and first.shape[2].value == 4  # the shrinking axis 1 first
    assert _stages(out) == ["T_resize_sum0", "T_resize_sum", "T_resize"]
    x = rand((2, 6, 4))
    want = _onnx_resize_general(x, [2, 3, 8], mode="cubic", coordinate_transformation_mode="align_corners")
    check([x_t], out, [x], want, rtol=1e-5, atol=1e-5)


def test_equal_length_axis_still_moves_when_the_mode_shifts_it():
    # tf_half_pixel_for_nn maps x to x + 0.5: rounding up moves every position by one
    x_t = te.placeholder((1, 1, 4, 4), name="x")
    x = rand((1, 1, 4, 4))
    out = topi.image.resize2d(x_t, (4, 4), method="nearest_neighbor",
                              coordinate_transformation_mode="tf_half_pixel_for_nn",
                              rounding_method="round_prefer_ceil")  # fmt: skip
    idx = np.minimum(np.floor(np.arange(4) + 1.0), 3).astype(int)
    check([x_t], out, [x], x[:, :, idx][:, :, :, idx])


def test_integer_image_rounds_once_after_both_passes():
    x_t = te.placeholder((1, 5, 5), name="x", dtype="uint8")
    x = np.random.default_rng(3).integers(0, 256, (1, 5, 5)).astype("uint8")
    out = topi.image.resize(x_t, [1, 2], [7, 9], "linear", "half_pixel")
    want = _onnx_resize_general(x.astype("float32"), [1, 7, 9], mode="linear")
    check([x_t], out, [x], np.round(want).astype("uint8"))
