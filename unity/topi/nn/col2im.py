"""`col2im`: sum sliding-window columns back into an image (ONNX Col2Im, PyTorch `fold`).

The input is ``(N, C * prod(block), L)``: for each window position (`L` of them, row-major
over the grid of windows) a column holding the window's ``C * prod(block)`` values.  Each
image element gathers, over the kernel offsets, the column entries that land on it, so
the kernel has no scatter and every output element is written once.

Example:
    >>> from unity import te
    >>> cols = te.placeholder((1, 4, 9), name="cols")
    >>> [d.value for d in col2im(cols, (4, 4), (2, 2)).shape]
    [1, 1, 4, 4]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.utils import const_int, ravel


def col2im_blocks(image: Sequence[int], block: Sequence[int], dilations: Sequence[int],
                  pads: Sequence[int], strides: Sequence[int]) -> list[int]:  # fmt: skip
    """Windows per spatial axis: ``(size + pads - dilation * (block - 1) - 1) // stride + 1``.

    `pads` holds all begins, then all ends (ONNX order).

    Example:
        >>> col2im_blocks((5, 5), (1, 5), (1, 1), (0, 1, 0, 1), (1, 1))
        [5, 3]
    """
    rank = len(image)
    spans = [dilations[d] * (block[d] - 1) + 1 for d in range(rank)]
    return [(image[d] + pads[d] + pads[d + rank] - spans[d]) // strides[d] + 1 for d in range(rank)]


def _check(x: Tensor, image: Sequence[int], block: Sequence[int], blocks: Sequence[int]) -> int:
    """``prod(block)``; ValueError when the input does not fit the windows."""
    if x.ndim != 3:
        raise ValueError(f"col2im: expects a (N, C * prod(block), L) input, got rank {x.ndim}")
    if min(blocks, default=1) < 1 or min(block, default=1) < 1:
        raise ValueError(f"col2im: block {list(block)} leaves no window on image {list(image)}")
    size, count = math.prod(block), math.prod(blocks)
    rows, length = const_int(x.shape[1]), const_int(x.shape[2])
    if rows is None or rows % size != 0:
        raise ValueError(
            f"col2im: input dim 1 ({x.shape[1]}) is not a multiple of prod(block) = {size}"
        )
    if length != count:
        raise ValueError(
            f"col2im: input dim 2 is {x.shape[2]}, but the windows number {count} ({blocks})"
        )
    return size


def col2im(
    x: Tensor,
    image: Sequence[int],
    block: Sequence[int],
    dilations: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
) -> Tensor:
    """Sum the columns of `x` into an image of spatial shape `image`, ``(N, C, *image)``.

    Window ``b`` (per axis) covers image positions ``b * stride - pad_begin + k * dilation``
    for kernel offsets ``k < block``; positions in the padding are dropped.

    Raises:
        ValueError: the input's dims do not match the block and the number of windows.

    Example:
        >>> from unity import te
        >>> cols = te.placeholder((2, 6, 3), name="cols")
        >>> [d.value for d in col2im(cols, (3, 3), (1, 3), pads=(0, 0, 0, 0)).shape]
        [2, 2, 3, 3]
    """
    rank = len(image)
    dilations = list(dilations or [1] * rank)
    pads = list(pads or [0] * (2 * rank))
    strides = list(strides or [1] * rank)
    blocks = col2im_blocks(image, block, dilations, pads, strides)
    size = _check(x, image, block, blocks)
    channels = const_int(x.shape[1]) // size  # type: ignore[operator]  # checked: a constant
    offsets = [te.reduce_axis((0, k), name=f"k{d}") for d, k in enumerate(block)]

    def body(n: PrimExpr, c: PrimExpr, *pos: PrimExpr) -> PrimExpr:
        inside: PrimExpr = const(True, "bool")
        windows = []
        for d, k in enumerate(offsets):
            t = pos[d] + pads[d] - k.var.astype(pos[d].dtype) * dilations[d]
            inside = tir.logical_and(inside, tir.logical_and(t >= 0, tir.eq(t % strides[d], 0)))
            inside = tir.logical_and(inside, t < blocks[d] * strides[d])
            windows.append(tir.max(tir.min(t // strides[d], blocks[d] - 1), const(0, t.dtype)))
        row = c * size + ravel([k.var for k in offsets], list(block))
        value = x[n, row, ravel(windows, blocks)]
        return te.sum(tir.select(inside, value, const(0, x.dtype)), axis=offsets)

    return te.compute((x.shape[0], channels, *image), body, name="T_col2im")
