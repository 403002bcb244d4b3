"""topi.nn.winograd: the transforms' matrices, the weight transform, and the three TE stages
(unscheduled) against a direct convolution in numpy."""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import te
from unity.topi.nn import winograd as W
from unity.topi.testing.conv2d_nchw_python import conv2d_nchw_python

RNG = np.random.default_rng(3)


def _blocked(x: np.ndarray, b: int) -> np.ndarray:
    n, c, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, c // b, b, h, w).transpose(0, 1, 3, 4, 2))


@pytest.mark.parametrize(("m", "r"), [(2, 3), (4, 3), (2, 5), (3, 3), (3, 2), (1, 6)])
def test_matrices_compute_a_1d_correlation(m: int, r: int) -> None:
    at, g, bt = W.winograd_matrices(m, r)
    d, k = RNG.standard_normal(m + r - 1), RNG.standard_normal(r)
    got = at @ ((g @ k) * (bt @ d))
    np.testing.assert_allclose(got, [d[i : i + r] @ k for i in range(m)], atol=1e-12)


def test_f4x4_3x3_data_transform_has_small_integer_coefficients() -> None:
    _, _, bt = W.winograd_matrices(4, 3)  # Lavin & Gray's B^T, up to the signs of rows
    lavin = [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
             [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]  # fmt: skip
    for row, want in zip(bt, lavin):
        assert row.tolist() in (want, [-x for x in want])


def test_weight_transform_is_g_w_gt_in_panels() -> None:
    w = RNG.standard_normal((32, 8, 3, 3)).astype("float32")
    u = W.winograd_weight_transform(w, 2, 16)
    _, g, _ = W.winograd_matrices(2)
    assert u.shape == (16, 1, 2, 8, 16) and u.dtype == np.float32
    o, c, e, n = 21, 5, 1, 2  # output channel 21 = panel 1, lane 5
    want = (g @ w[o, c] @ g.T)[e, n]
    np.testing.assert_allclose(u[e * 4 + n, 0, o // 16, c, o % 16], want, rtol=1e-5)
    grouped = W.winograd_weight_transform(w, 2, 8, groups=2)  # 16 output channels a group
    assert grouped.shape == (16, 2, 2, 8, 8)
    np.testing.assert_allclose(grouped[e * 4 + n, 1, 0, c, 5], want, rtol=1e-5)


def test_unsupported_tiles_and_kernels_are_named() -> None:
    with pytest.raises(ValueError, match=r"F\(4, 5\) needs 8 points"):
        W.winograd_matrices(4, 5)
    with pytest.raises(ValueError, match="5x3, not square"):
        W.winograd_weight_transform(np.zeros((8, 8, 5, 3), "float32"), 2)
    with pytest.raises(ValueError, match="24 output channels in 1 groups are not whole panels"):
        W.winograd_weight_transform(np.zeros((24, 8, 3, 3), "float32"), 2, 16)
    with pytest.raises(ValueError, match="16 channels in 4 groups are not whole blocks"):
        W.winograd_data_transform(te.placeholder((1, 2, 8, 8, 8), name="x"), 2, 1, groups=4)


@pytest.mark.parametrize(
    ("m", "r", "c", "o", "h", "w", "padding", "images", "groups"),
    [
        (2, 3, 16, 16, 6, 6, 1, 1, 1),
        (4, 3, 8, 16, 8, 8, 1, 1, 1),
        (4, 3, 16, 8, 7, 9, 1, 2, 1),  # partial tiles on both axes, two images
        (2, 3, 8, 8, 6, 5, (0, 1, 2, 0), 1, 1),  # asymmetric padding
        (4, 3, 8, 16, 6, 6, 0, 1, 1),  # no padding: a 4x4 output
        (2, 5, 8, 16, 9, 9, 2, 1, 1),  # 5x5: partial tiles
        (4, 3, 16, 32, 8, 8, 1, 1, 2),  # two groups of 8 -> 16 channels
        (2, 5, 32, 16, 6, 6, 2, 1, 2),
    ],
)  # fmt: skip
def test_the_three_stages_equal_a_direct_conv(m, r, c, o, h, w, padding, images, groups) -> None:
    b, panel, alpha = 8, 8, m + r - 1
    x = te.placeholder((images, c // b, h, w, b), name="x")
    top, left, bottom, right = (padding,) * 4 if isinstance(padding, int) else padding
    oh, ow = h + top + bottom - (r - 1), w + left + right - (r - 1)
    tiles = W.winograd_tiles(oh, ow, m)[2]  # of an image
    v = W.winograd_data_transform(x, m, padding, tiles + 3, r, groups)  # three spare rows each
    shape = (alpha**2, groups, o // groups // panel, c // groups, panel)
    u = te.placeholder(shape, name="u")
    mm = W.winograd_batch_matmul(v, u)
    y = W.winograd_output_transform(mm, m, (oh, ow), b, images, r, tiles + 3)
    lib = unity.build(te.create_prim_func([x, u, y]))
    data = RNG.standard_normal((images, c, h, w)).astype("float32")
    weight = RNG.standard_normal((o, c // groups, r, r)).astype("float32")
    out = np.zeros((images, o // b, oh, ow, b), "float32")
    lib["main"](_blocked(data, b), W.winograd_weight_transform(weight, m, panel, groups), out)
    padded = np.pad(data, ((0, 0), (0, 0), (top, bottom), (left, right)))
    cg, og = c // groups, o // groups
    ref = np.concatenate([
        conv2d_nchw_python(padded[:, g * cg : (g + 1) * cg], weight[g * og : (g + 1) * og], 1, 0)
        for g in range(groups)
    ], axis=1)  # fmt: skip
    ref = _blocked(ref, b)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_too_few_tile_rows_are_an_error() -> None:
    x = te.placeholder((1, 1, 8, 8, 8), name="x")
    with pytest.raises(ValueError, match="3 tile rows for 16 tiles"):
        W.winograd_data_transform(x, 2, 1, 3)
