"""grid_sample vs a numpy reference written here: modes, padding, corners, 2-D and 3-D."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.topi.run import RNG, check, rand
from unity import te, topi

CUBIC_A = -0.75


def _cubic(d: float) -> float:
    """Keys' kernel at distance `d` (A = -0.75)."""
    d = abs(d)
    if d <= 1:
        return ((CUBIC_A + 2) * d - (CUBIC_A + 3)) * d * d + 1
    if d < 2:
        return ((CUBIC_A * d - 5 * CUBIC_A) * d + 8 * CUBIC_A) * d - 4 * CUBIC_A
    return 0.0


def _mirror(v: float, lo: float, hi: float) -> float:
    """Fold `v` into [lo, hi] by mirroring at the ends (lo when they meet)."""
    if hi == lo:
        return lo
    while v < lo or v > hi:
        v = 2 * lo - v if v < lo else 2 * hi - v
    return v


def _source(g: float, size: int, mode: str, padding: str, align: bool) -> float:
    """The source coordinate of normalized `g` on an axis of `size` pixels."""
    x = (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
    if mode == "nearest":
        x = float(np.rint(x))
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    if lo <= x <= hi:
        return x
    if padding == "border":
        return min(max(x, 0.0), size - 1.0)
    return _mirror(x, lo, hi) if padding == "reflection" else x


Tap = tuple[int | None, float]
"""A source index (None: a zero of zeros padding) and its weight."""


def _taps(x: float, size: int, mode: str, padding: str, align: bool) -> list[Tap]:
    """The taps of coordinate `x`."""
    if mode == "nearest":
        taps = [(int(x), 1.0)]
    else:
        base = int(np.floor(x))
        offsets = (0, 1) if mode == "linear" else (-1, 0, 1, 2)
        kernel = (lambda d: 1.0 - abs(d)) if mode == "linear" else _cubic
        taps = [(base + o, kernel(x - (base + o))) for o in offsets]
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    out: list[Tap] = []
    for i, w in taps:
        if 0 <= i < size:
            out.append((i, w))
        elif padding == "zeros":
            out.append((None, w))
        elif padding == "border":
            out.append((min(max(i, 0), size - 1), w))
        else:
            out.append((min(max(int(_mirror(float(i), lo, hi)), 0), size - 1), w))
    return out


def grid_sample_reference(x: np.ndarray, grid: np.ndarray, mode: str, padding: str,
                          align: bool) -> np.ndarray:  # fmt: skip
    """ONNX GridSample, one point at a time in float64."""
    n_batch, channels, *dims = x.shape
    out = np.zeros((n_batch, channels, *grid.shape[1:-1]))
    for n in range(n_batch):
        for point in np.ndindex(*grid.shape[1:-1]):
            coords = grid[(n, *point)][::-1].astype("float64")  # grid[..., 0] is the last axis
            per_axis = [
                _taps(_source(g, size, mode, padding, align), size, mode, padding, align)
                for g, size in zip(coords, dims, strict=True)
            ]
            for combo in itertools.product(*per_axis):
                if any(i is None for i, _ in combo):
                    continue
                weight = float(np.prod([w for _, w in combo]))
                source = (n, slice(None), *(i for i, _ in combo))
                out[(n, slice(None), *point)] += weight * x[source]
    return out


def _run(x_shape, grid_shape, mode, padding, align, dtype="float32", spread=1.6, build=False):
    x_t = te.placeholder(x_shape, dtype, name="x")
    g_t = te.placeholder(grid_shape, dtype, name="grid")
    x = rand(x_shape, dtype)
    grid = rand(grid_shape, dtype, -spread, spread)  # some points fall outside [-1, 1]
    out = topi.image.grid_sample(x_t, g_t, mode, padding, align)
    want = grid_sample_reference(x.astype("float64"), grid, mode, padding, align)
    tol = 2e-2 if dtype == "float16" else 1e-5
    check([x_t, g_t], out, [x, grid], want, rtol=tol, atol=tol, build=build)


CASES_2D = [
    ("linear", "zeros", False), ("linear", "border", True), ("linear", "reflection", False),
    ("nearest", "zeros", True), ("nearest", "border", False), ("nearest", "reflection", True),
    ("cubic", "zeros", False), ("cubic", "border", False), ("cubic", "reflection", True),
]  # fmt: skip


@pytest.mark.parametrize(("mode", "padding", "align"), CASES_2D)
def test_grid_sample_2d_matches_numpy(mode, padding, align):
    _run((2, 3, 4, 5), (2, 3, 4, 2), mode, padding, align)


@pytest.mark.parametrize(("mode", "padding", "align"), [
    ("linear", "zeros", True), ("nearest", "reflection", False), ("cubic", "border", True),
])  # fmt: skip
def test_grid_sample_3d_matches_numpy_and_builds_for_llvm(mode, padding, align):
    _run((1, 2, 3, 4, 2), (1, 2, 3, 2, 3), mode, padding, align, build=True)


def test_reflection_far_outside_folds_several_times():
    for align in (False, True):
        _run((1, 1, 3, 4), (1, 5, 5, 2), "linear", "reflection", align, spread=7.0, build=True)
        _run((1, 1, 3, 4), (1, 5, 5, 2), "cubic", "reflection", align, spread=7.0)


def test_one_pixel_axis_and_1d_input():
    _run((1, 2, 1, 4), (1, 3, 3, 2), "cubic", "reflection", True)  # the mirror's ends meet
    _run((1, 2, 1, 4), (1, 3, 3, 2), "linear", "reflection", False)
    _run((2, 2, 6), (2, 5, 1), "cubic", "zeros", False)


def test_float64_and_float16():
    _run((1, 2, 4, 4), (1, 3, 3, 2), "cubic", "border", False, dtype="float64", build=True)
    _run((1, 2, 4, 4), (1, 3, 3, 2), "linear", "zeros", True, dtype="float16", build=True)


def test_nearest_rounds_half_to_even():
    x_t = te.placeholder((1, 1, 1, 4), name="x")
    g_t = te.placeholder((1, 1, 5, 2), name="grid")
    x = np.array([10, 11, 12, 13], "float32").reshape(1, 1, 1, 4)
    grid = np.zeros((1, 1, 5, 2), "float32")
    grid[0, 0, :, 0] = [-0.5, 0.0, 0.5, -1.0, 1.0]  # pixel coordinates 0.5, 1.5, 2.5, -0.5, 3.5
    out = topi.image.grid_sample(x_t, g_t, "nearest", "zeros", align_corners=False)
    want = np.array([10, 12, 12, 10, 0], "float32").reshape(1, 1, 1, 5)  # 3.5 -> 4: outside
    check([x_t, g_t], out, [x, grid], want, rtol=0, atol=0, build=True)


def test_rejects_a_grid_of_the_wrong_width_and_unknown_modes():
    x_t = te.placeholder((1, 3, 4, 4), name="x")
    wide = te.placeholder((1, 5, 5, 3), name="grid")
    with pytest.raises(ValueError, match=r"must hold 2 coordinates, got shape \(1, 5, 5, 3\)"):
        topi.image.grid_sample(x_t, wide)
    with pytest.raises(ValueError, match="rank-4 input needs a rank-4 grid"):
        topi.image.grid_sample(x_t, te.placeholder((1, 5, 2), name="grid"))
    grid = te.placeholder((1, 5, 5, 2), name="grid")
    with pytest.raises(ValueError, match="method 'bilinear' is not one of"):
        topi.image.grid_sample(x_t, grid, "bilinear")
    with pytest.raises(ValueError, match="padding mode 'wrap' is not one of"):
        topi.image.grid_sample(x_t, grid, padding_mode="wrap")


def test_reference_agrees_with_onnx_reference_implementation():
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    x = RNG.standard_normal((1, 2, 3, 4)).astype("float32")
    grid = RNG.uniform(-1.4, 1.4, (1, 3, 2, 2)).astype("float32")
    for mode, padding, align in CASES_2D:
        node = helper.make_node("GridSample", ["X", "G"], ["Y"], mode=mode, padding_mode=padding,
                                align_corners=int(align))  # fmt: skip
        graph = helper.make_graph(
            [node], "g",
            [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, x.shape),
             helper.make_tensor_value_info("G", onnx.TensorProto.FLOAT, grid.shape)],
            [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
        )  # fmt: skip
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
        want = ReferenceEvaluator(model).run(None, {"X": x, "G": grid})[0]
        got = grid_sample_reference(x.astype("float64"), grid, mode, padding, align)
        message = f"{mode} {padding} {align}"
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=message)
