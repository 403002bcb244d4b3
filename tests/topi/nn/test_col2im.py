"""col2im vs a numpy loop that adds every column entry into the image (PyTorch `fold`)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from tests.topi.run import check, rand
from unity import te
from unity.topi.nn.col2im import col2im, col2im_blocks


def _col2im_numpy(cols, image, block, dilations, pads, strides):
    """Scatter-add each column entry to its image position (dropping the padding)."""
    rank = len(image)
    blocks = col2im_blocks(image, block, dilations, pads, strides)
    n, rows, _ = cols.shape
    channels = rows // math.prod(block)
    out = np.zeros((n, channels, *image), cols.dtype)
    for c, (k, kernel) in itertools.product(
        range(channels), enumerate(itertools.product(*map(range, block)))
    ):
        for w, window in enumerate(itertools.product(*map(range, blocks))):
            pos = [window[d] * strides[d] - pads[d] + kernel[d] * dilations[d] for d in range(rank)]
            if all(0 <= p < s for p, s in zip(pos, image, strict=True)):
                out[(slice(None), c, *pos)] += cols[:, c * math.prod(block) + k, w]
    return out


@pytest.mark.parametrize(("image", "block", "dilations", "pads", "strides"), [
    ((5, 5), (1, 5), (1, 1), (0, 1, 0, 1), (1, 1)),
    ((6, 7), (2, 3), (2, 1), (1, 0, 2, 1), (2, 1)),
    ((4, 4, 3), (2, 2, 1), (1, 1, 1), (0,) * 6, (1, 2, 1)),
    ((9,), (3,), (2,), (1, 2), (3,)),
])  # fmt: skip
def test_col2im_matches_numpy(image, block, dilations, pads, strides):
    blocks = col2im_blocks(image, block, dilations, pads, strides)
    cols = rand((2, 3 * math.prod(block), math.prod(blocks)))
    x = te.placeholder(cols.shape, name="x")
    out = col2im(x, image, block, dilations, pads, strides)
    want = _col2im_numpy(cols, image, block, dilations, pads, strides)
    check([x], out, [cols], want, rtol=1e-5, atol=1e-5, build=True)


def test_col2im_rejects_a_window_count_that_does_not_fit():
    x = te.placeholder((1, 4, 8), name="x")  # a 2x2 block on a 4x4 image makes 9 windows
    with pytest.raises(
        ValueError, match=r"col2im: input dim 2 is 8, but the windows number 9 \(\[3, 3\]\)"
    ):
        col2im(x, (4, 4), (2, 2))


def test_col2im_rejects_rows_that_are_not_whole_blocks():
    x = te.placeholder((1, 6, 9), name="x")
    with pytest.raises(
        ValueError, match=r"input dim 1 \(6\) is not a multiple of prod\(block\) = 4"
    ):
        col2im(x, (4, 4), (2, 2))
