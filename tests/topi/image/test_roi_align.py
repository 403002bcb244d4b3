"""roi_align vs a numpy reference written here: avg / max, fixed and adaptive sampling, rois
partly or far outside the image, the opset-10 roi shift, and bad arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.topi.run import RNG, check, rand
from unity import te, topi


def _taps(v: float, size: int) -> list[tuple[int, float]] | None:
    """The two taps of sample coordinate `v` (None: outside ``[-1, size]``, a zero)."""
    if v < -1.0 or v > size:
        return None
    v = max(v, 0.0)
    low = int(v)
    if low >= size - 1:
        return [(size - 1, 1.0), (size - 1, 0.0)]
    return [(low, 1.0 - (v - low)), (low + 1, v - low)]


def _axis(lo: float, hi: float, scale: float, pooled: int, ratio: int, half: bool):
    """Per bin of one axis: the sample coordinates (the grid may be empty)."""
    start, end = lo * scale - 0.5 * half, hi * scale - 0.5 * half
    length = end - start if half else max(end - start, 1.0)
    size = length / pooled
    grid = ratio if ratio > 0 else math.ceil(size)
    return grid, [[start + p * size + (i + 0.5) * size / grid for i in range(grid)]
                  for p in range(pooled)]  # fmt: skip


def roi_align_ref(x, rois, idx, pooled, scale, ratio, mode, half):
    """ONNX RoiAlign, one sample at a time."""
    out = np.zeros((len(rois), x.shape[1], *pooled), np.float64)
    for r, (x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        gy, ys = _axis(y1, y2, scale, pooled[0], ratio, half)
        gx, xs = _axis(x1, x2, scale, pooled[1], ratio, half)
        img = x[idx[r]].astype(np.float64)
        for py in range(pooled[0]):
            for px in range(pooled[1]):
                values = [_sample(img, ty, tx, mode) for ty in ys[py] for tx in xs[px]]
                if not values:
                    continue
                if mode == "avg":
                    out[r, :, py, px] = np.sum(values, axis=0) / max(gy * gx, 1)
                else:
                    out[r, :, py, px] = np.max(values, axis=0)
    return out.astype(x.dtype)


def _sample(img: np.ndarray, y: float, x: float, mode: str) -> np.ndarray:
    """Per channel: the bilinear value (avg) or the largest weighted tap (max) at (y, x)."""
    ty, tx = _taps(y, img.shape[1]), _taps(x, img.shape[2])
    if ty is None or tx is None:
        return np.zeros(img.shape[0])
    terms = [wy * wx * img[:, iy, ix] for iy, wy in ty for ix, wx in tx]
    return np.sum(terms, axis=0) if mode == "avg" else np.max(terms, axis=0)


def _run(x, rois, idx, pooled, scale, ratio, mode, half, build=False):
    x_t = te.placeholder(x.shape, str(x.dtype), name="x")
    r_t = te.placeholder(rois.shape, str(rois.dtype), name="rois")
    i_t = te.placeholder(idx.shape, "int64", name="idx")
    out = topi.image.roi_align(x_t, r_t, i_t, pooled, scale, ratio, mode, half)
    want = roi_align_ref(x, rois, idx, pooled, scale, ratio, mode, half)
    check([x_t, r_t, i_t], out, [x, rois, idx], want, build=build)


ROIS = np.array([
    [0.0, 0.0, 5.0, 4.0],      # inside
    [-3.0, 2.0, 9.5, 12.0],    # partly outside
    [-40.0, -30.0, 50.0, 60.0],  # far larger than the image: an adaptive grid of ~30
    [3.0, 3.0, 2.0, 1.5],      # inverted
    [2.2, 1.1, 2.4, 1.3],      # smaller than a pixel
], np.float32)  # fmt: skip


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ratio", [0, 2])
@pytest.mark.parametrize("half", [True, False])
def test_roi_align_matches_numpy(mode, ratio, half):
    x = rand((2, 3, 6, 7))
    idx = np.array([0, 1, 1, 0, 1], np.int64)
    _run(x, ROIS, idx, (3, 2), 0.8, ratio, mode, half, build=ratio == 0)


def test_random_rois_adaptive_grid_builds_for_llvm():
    x = rand((1, 2, 5, 5))
    corners = RNG.uniform(-6, 12, (6, 2, 2))
    rois = np.concatenate([corners.min(1), corners.max(1)], axis=1).astype(np.float32)
    idx = np.zeros(6, np.int64)
    for mode in ("avg", "max"):
        _run(x, rois, idx, (2, 3), 1.0, 0, mode, True, build=True)


def test_max_of_a_grid_partly_outside_includes_their_zeros():
    x = -np.ones((1, 1, 4, 4), np.float32)  # every sample inside is negative
    rois = np.array([[-20.0, -20.0, 2.0, 2.0]], np.float32)
    idx = np.zeros(1, np.int64)
    _run(x, rois, idx, (1, 1), 1.0, 0, "max", True)
    want = roi_align_ref(x, rois, idx, (1, 1), 1.0, 0, "max", True)
    assert want[0, 0, 0, 0] == 0.0


def test_float64():
    x = rand((1, 2, 5, 6), "float64")
    idx = np.zeros(len(ROIS), np.int64)
    _run(x, ROIS.astype(np.float64), idx, (2, 2), 0.5, 0, "avg", False)


def test_reference_agrees_with_onnx_reference_implementation():
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    x, idx = rand((2, 3, 6, 7)), np.array([0, 1, 1, 0, 1], np.int64)
    for mode, half in (("avg", True), ("max", False)):
        node = helper.make_node("RoiAlign", ["x", "r", "i"], ["y"], output_height=3,
            output_width=2, spatial_scale=0.8, mode=mode,
            coordinate_transformation_mode="half_pixel" if half else "output_half_pixel",
        )  # fmt: skip
        value = helper.make_tensor_value_info
        graph = helper.make_graph([node], "g", [value("x", TensorProto.FLOAT, None),
            value("r", TensorProto.FLOAT, None), value("i", TensorProto.INT64, None)],
            [value("y", TensorProto.FLOAT, None)])  # fmt: skip
        proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
        want = ReferenceEvaluator(proto).run(None, {"x": x, "r": ROIS, "i": idx})[0]
        got = roi_align_ref(x, ROIS, idx, (3, 2), 0.8, 0, mode, half)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_rejects_bad_mode_ratio_and_shapes():
    x = te.placeholder((1, 3, 8, 8), name="x")
    rois, idx = te.placeholder((4, 4), name="rois"), te.placeholder((4,), "int64", name="i")
    with pytest.raises(ValueError, match="roi_align: mode 'sum' is not one of"):
        topi.image.roi_align(x, rois, idx, mode="sum")
    with pytest.raises(ValueError, match="sampling_ratio must be >= 0, got -1"):
        topi.image.roi_align(x, rois, idx, sampling_ratio=-1)
    with pytest.raises(ValueError, match=r"rois must be \(R, 4\), got \(4, 5\)"):
        topi.image.roi_align(x, te.placeholder((4, 5), name="r5"), idx)
