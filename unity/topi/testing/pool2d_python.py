"""Numpy references of 2-D max / average pooling (NCHW) and adaptive average pooling.

Example:
    >>> import numpy as np
    >>> pool2d_python(np.arange(16.0).reshape(1, 1, 4, 4), (2, 2), (2, 2), "max")[0, 0].tolist()
    [[5.0, 7.0], [13.0, 15.0]]
"""

from __future__ import annotations

import math

import numpy as np


def pool2d_python(
    data: np.ndarray, pool_size: tuple[int, int], strides: tuple[int, int], kind: str,
    padding: tuple[int, int, int, int] = (0, 0, 0, 0), dilation: tuple[int, int] = (1, 1),
    ceil_mode: bool = False, count_include_pad: bool = False,
) -> np.ndarray:  # fmt: skip
    """Pool windows of `data`; `kind` is "max" or "avg" (PyTorch's divisor rules).

    Example:
        >>> import numpy as np
        >>> pool2d_python(np.ones((1, 1, 2, 2)), (2, 2), (1, 1), "avg", (1, 1, 1, 1))[0, 0, 0, 0].item()
        1.0
    """
    (kh, kw), (sh, sw), (dh, dw), (pt, pl, pb, pr) = pool_size, strides, dilation, padding
    n, c, h, w = data.shape
    rnd = math.ceil if ceil_mode else math.floor
    oh = rnd((h + pt + pb - dh * (kh - 1) - 1) / sh) + 1
    ow = rnd((w + pl + pr - dw * (kw - 1) - 1) / sw) + 1
    out = np.zeros((n, c, oh, ow))
    for y in range(oh):
        for x in range(ow):
            ys = [y * sh - pt + r * dh for r in range(kh)]
            xs = [x * sw - pl + r * dw for r in range(kw)]
            iy = [v for v in ys if 0 <= v < h]
            ix = [v for v in xs if 0 <= v < w]
            win = data[:, :, iy][:, :, :, ix].astype(np.float64)
            if kind == "max":
                out[:, :, y, x] = win.max(axis=(2, 3)) if win.size else -np.inf
                continue
            if count_include_pad:
                cy = len([v for v in ys if -pt <= v < h + pb])
                cx = len([v for v in xs if -pl <= v < w + pr])
            else:
                cy, cx = len(iy), len(ix)
            out[:, :, y, x] = win.sum(axis=(2, 3)) / max(cy * cx, 1)
    return out


def adaptive_avg_pool2d_python(data: np.ndarray, output_size: tuple[int, int]) -> np.ndarray:
    """Average over windows `[floor(o*H/OH), ceil((o+1)*H/OH))` (NCHW).

    Example:
        >>> import numpy as np
        >>> adaptive_avg_pool2d_python(np.ones((1, 1, 5, 5)), (2, 2)).shape
        (1, 1, 2, 2)
    """
    n, c, h, w = data.shape
    oh, ow = output_size
    out = np.zeros((n, c, oh, ow))
    for y in range(oh):
        y0, y1 = (y * h) // oh, -(-((y + 1) * h) // oh)
        for x in range(ow):
            x0, x1 = (x * w) // ow, -(-((x + 1) * w) // ow)
            out[:, :, y, x] = data[:, :, y0:y1, x0:x1].astype(np.float64).mean(axis=(2, 3))
    return out
