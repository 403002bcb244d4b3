"""Resize over a symbolic image size: by scales, and to the size of another tensor (the
decoder of a segmentation model), against onnxruntime at several sizes."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import unity
from unity import relax
from unity.relax.frontend.onnx import OnnxImportError, from_onnx

from .onnx_helpers import FLOAT, model, run_ort, tensor


_ANY4 = tensor("y", FLOAT, [None] * 4)


def _vm(proto):
    return relax.VirtualMachine(unity.compile(from_onnx(proto), target="llvm"), unity.cpu())


@pytest.mark.parametrize(("mode", "coord"), [("linear", "half_pixel"), ("nearest", "asymmetric"),
                                             ("cubic", "align_corners")])  # fmt: skip
def test_resize_by_scales_over_a_symbolic_size(mode, coord):
    scales = np.array([1, 1, 2, 1.5], np.float32)
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, coordinate_transformation_mode=coord)
    proto = model([node], [tensor("x", FLOAT, [1, 2, "h", "w"])], [_ANY4], {"scales": scales})
    vm = _vm(proto)
    rng = np.random.default_rng(0)
    for h, w in ((3, 4), (5, 6), (1, 2)):  # w * 1.5 whole: onnxruntime's align_corners then agrees
        x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
        want = run_ort(proto, {"x": x})[0]
        np.testing.assert_allclose(vm["main"](x).numpy(), want, rtol=1e-5, atol=1e-5)


def test_upsample_to_the_input_size_of_a_segmentation_head():
    # logits at half resolution, resized back to the image's H and W read from Shape
    nodes = [
        helper.make_node("AveragePool", ["x"], ["small"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Shape", ["x"], ["full"]),
        helper.make_node("Slice", ["full", "two", "four"], ["hw"]),
        helper.make_node("Shape", ["small"], ["nc_all"]),
        helper.make_node("Slice", ["nc_all", "zero", "two"], ["nc"]),
        helper.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0),
        helper.make_node("Resize", ["small", "", "", "sizes"], ["y"], mode="linear"),
    ]
    ints = {"zero": np.array([0], np.int64), "two": np.array([2], np.int64), "four": np.array([4], np.int64)}
    proto = model(nodes, [tensor("x", FLOAT, ["n", 3, "h", "w"])], [_ANY4], ints)
    vm = _vm(proto)
    rng = np.random.default_rng(1)
    for n, h, w in ((1, 8, 6), (2, 9, 7), (1, 2, 12)):
        x = rng.standard_normal((n, 3, h, w)).astype(np.float32)
        got = vm["main"](x).numpy()
        assert got.shape == (n, 3, h, w)
        np.testing.assert_allclose(got, run_ort(proto, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_aspect_ratio_policy_over_a_symbolic_size_is_named():
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], keep_aspect_ratio_policy="not_larger",
                            axes=[2, 3])  # fmt: skip
    nodes = [helper.make_node("Shape", ["x"], ["s"], start=2), node]
    nodes[1].input[3] = "s"
    proto = model(nodes, [tensor("x", FLOAT, [1, 1, "h", "w"])], [_ANY4], opset=18)
    with pytest.raises(OnnxImportError, match="keep_aspect_ratio_policy='not_larger'"):
        from_onnx(proto)



def _computed_sizes_model():
    """Resize to (N, C) from x's shape and (H, W) computed from the data of `hw` (Keypoint
    R-CNN resizes each heatmap to its box's size so)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "zero", "two"], ["nc"]),
        helper.make_node("Add", ["hw", "one"], ["hw1"]),
        helper.make_node("Concat", ["nc", "hw1"], ["sizes"], axis=0),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["r"], name="fit", mode="linear"),
        helper.make_node("Reshape", ["r", "flat"], ["y"]),  # needs C = 3 known: the entries kept
    ]
    ints = {"zero": np.array([0], np.int64), "two": np.array([2], np.int64), "one": np.array(1, np.int64),
            "flat": np.array([3, -1], np.int64)}
    return model(nodes, [tensor("x", FLOAT, [1, 3, 6, 5]), tensor("hw", 7, [2])], [tensor("y", FLOAT, [3, None])], ints)


def test_resize_to_sizes_computed_at_run_time_is_a_kernel():
    proto = _computed_sizes_model()
    mod = from_onnx(proto)
    text = str(mod)
    assert "unity.host.tensor_to_shape" in text and "unity.host.onnx_node" not in text
    vm = relax.VirtualMachine(unity.compile(mod, target="llvm"), unity.cpu())
    x = np.random.default_rng(2).standard_normal((1, 3, 6, 5)).astype(np.float32)
    for hw in ((11, 9), (2, 3), (5, 4)):
        feeds = {"x": x, "hw": np.array(hw, np.int64)}
        got = vm["main"](x, feeds["hw"]).numpy()
        assert got.shape == (3, (hw[0] + 1) * (hw[1] + 1))
        np.testing.assert_allclose(got, run_ort(proto, feeds)[0], rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"a shape computed at run time has a negative length: \[1, 3, -4, 3\]"):
        vm["main"](x, np.array([-5, 2], np.int64))
