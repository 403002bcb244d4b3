"""deform_conv2d vs a numpy reference written here: groups, offset groups, mask, stride,
padding, dilation, offsets far outside the image, and bad shapes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.topi.run import RNG, check, rand
from unity import te, tir, topi


def _bilinear(img: np.ndarray, y: float, x: float) -> float:
    """`img` at (y, x), bilinear, zeros outside."""
    y0, x0 = math.floor(y), math.floor(x)
    total = 0.0
    for iy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for ix, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            if 0 <= iy < img.shape[0] and 0 <= ix < img.shape[1]:
                total += wy * wx * img[iy, ix]
    return total


def deform_conv2d_ref(x, w, offset, mask, strides, pads, dilation, groups, offset_groups):
    """ONNX DeformConv (no bias), one tap at a time."""
    n, c = x.shape[:2]
    o, per_group, kh, kw = w.shape
    oh, ow = offset.shape[2:]
    off = offset.reshape(n, offset_groups, kh, kw, 2, oh, ow)
    m = np.ones((n, offset_groups, kh, kw, oh, ow)) if mask is None else mask.reshape(
        n, offset_groups, kh, kw, oh, ow)  # fmt: skip
    out = np.zeros((n, o, oh, ow))
    for b, oc, i, j in np.ndindex(n, o, oh, ow):
        for rc, r, s in np.ndindex(per_group, kh, kw):
            ic = oc // (o // groups) * per_group + rc
            g = ic // (c // offset_groups)
            y = i * strides[0] - pads[0] + r * dilation[0] + off[b, g, r, s, 0, i, j]
            xx = j * strides[1] - pads[1] + s * dilation[1] + off[b, g, r, s, 1, i, j]
            out[b, oc, i, j] += w[oc, rc, r, s] * m[b, g, r, s, i, j] * _bilinear(x[b, ic], y, xx)
    return out.astype(x.dtype)


def _run(x, w, offset, mask=None, strides=(1, 1), pads=(0, 0, 0, 0), dilation=(1, 1),
         groups=1, offset_groups=1, build=False):  # fmt: skip
    arrays = [x, w, offset, *(() if mask is None else (mask,))]
    tensors = [te.placeholder(a.shape, str(a.dtype), name=f"t{k}") for k, a in enumerate(arrays)]
    out = topi.nn.deform_conv2d(*tensors[:3], tensors[3] if mask is not None else None, strides,
                                pads, dilation, groups, offset_groups)  # fmt: skip
    want = deform_conv2d_ref(x, w, offset, mask, strides, pads, dilation, groups, offset_groups)
    check(tensors, out, arrays, want, rtol=1e-4, atol=1e-5, build=build)


def test_plain_deform_conv_matches_numpy_and_builds_for_llvm():
    x, w = rand((1, 2, 5, 5)), rand((3, 2, 2, 2))
    _run(x, w, rand((1, 8, 4, 4), low=-1.5, high=1.5), build=True)


def test_zero_offsets_are_a_plain_convolution():
    x, w = rand((1, 3, 6, 5)), rand((4, 3, 3, 3))
    x_t, w_t = te.placeholder(x.shape, name="x"), te.placeholder(w.shape, name="w")
    off_t = te.placeholder((1, 18, 4, 3), name="off")
    conv = topi.nn.conv2d(x_t, w_t)
    deform = topi.nn.deform_conv2d(x_t, w_t, off_t)
    func = te.create_prim_func([x_t, w_t, conv])
    want = np.zeros((1, 4, 4, 3), np.float32)
    tir.interpret(func, x, w, want)
    check([x_t, w_t, off_t], deform, [x, w, np.zeros((1, 18, 4, 3), np.float32)], want)


def test_groups_offset_groups_mask_stride_padding_dilation():
    x, w = rand((2, 4, 6, 7)), rand((6, 2, 3, 2))
    offset = rand((2, 2 * 6 * 2, 4, 5), low=-2.5, high=2.5)
    mask = rand((2, 2 * 6, 4, 5), low=0.0, high=1.0)
    _run(x, w, offset, mask, (2, 2), (1, 2, 2, 1), (1, 2), groups=2, offset_groups=2, build=True)


def test_offsets_far_outside_read_zeros():
    x, w = rand((1, 1, 3, 3)), rand((1, 1, 2, 2))
    offset = RNG.choice([-1e6, 1e6, 3.5, -2.5], (1, 8, 2, 2)).astype(np.float32)
    _run(x, w, offset)


def test_float64():
    x, w = rand((1, 2, 4, 4), "float64"), rand((2, 2, 2, 2), "float64")
    _run(x, w, rand((1, 8, 3, 3), "float64"))


def test_reference_agrees_with_onnx_reference_implementation():
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    x, w = rand((1, 4, 5, 5)), rand((2, 2, 2, 2))
    offset, mask = rand((1, 16, 6, 5)), rand((1, 8, 6, 5), low=0.0, high=1.0)
    node = helper.make_node("DeformConv", ["x", "w", "o", "", "m"], ["y"], pads=[1, 0, 1, 1],
                            group=2, offset_group=2)  # fmt: skip
    value = helper.make_tensor_value_info
    graph = helper.make_graph([node], "g", [value(k, TensorProto.FLOAT, None) for k in "xwom"],
                              [value("y", TensorProto.FLOAT, None)])  # fmt: skip
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    want = ReferenceEvaluator(proto).run(None, {"x": x, "w": w, "o": offset, "m": mask})[0]
    got = deform_conv2d_ref(x, w, offset, mask, (1, 1), (1, 0, 1, 1), (1, 1), 2, 2)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_rejects_channels_that_do_not_split_and_bad_offsets():
    x, w = te.placeholder((1, 4, 5, 5), name="x"), te.placeholder((6, 2, 3, 3), name="w")
    with pytest.raises(ValueError, match="4 input and 6 output channels do not split into 3"):
        topi.nn.deform_conv2d(x, w, te.placeholder((1, 18, 3, 3), name="o"), groups=3)
    with pytest.raises(ValueError, match=r"offset needs 36 channels .* got \(1, 18, 3, 3\)"):
        topi.nn.deform_conv2d(x, w, te.placeholder((1, 18, 3, 3), name="o"), groups=2,
                              offset_groups=2)  # fmt: skip
    with pytest.raises(ValueError, match="mask needs 9 channels"):
        off, mask = te.placeholder((1, 18, 3, 3), name="o"), te.placeholder((1, 18, 3, 3), name="m")
        topi.nn.deform_conv2d(x, w, off, mask, groups=2)
