"""Numpy references of grouped 2-D convolution and its transpose, NCHW, asymmetric padding.

Example:
    >>> import numpy as np
    >>> conv2d_python(np.ones((1, 2, 3, 3)), np.ones((2, 1, 2, 2)), groups=2).shape
    (1, 2, 2, 2)
"""

from __future__ import annotations

import numpy as np


def conv2d_python(
    data: np.ndarray, kernel: np.ndarray, strides: tuple[int, int] = (1, 1),
    padding: tuple[int, int, int, int] = (0, 0, 0, 0), dilation: tuple[int, int] = (1, 1),
    groups: int = 1,
) -> np.ndarray:  # fmt: skip
    """`data` (N, C, H, W) convolved with `kernel` (O, C / groups, KH, KW), in float64.

    Example:
        >>> import numpy as np
        >>> conv2d_python(np.ones((1, 1, 3, 3)), np.ones((1, 1, 3, 3)), padding=(1, 1, 1, 1))[0, 0, 0, 0].item()
        4.0
    """
    (sh, sw), (dh, dw), (pt, pl, pb, pr) = strides, dilation, padding
    n, _, h, w = data.shape
    o, cg, kh, kw = kernel.shape
    padded = np.pad(data.astype(np.float64), ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (w + pl + pr - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        part = padded[:, g * cg : (g + 1) * cg]
        wg = kernel[g * og : (g + 1) * og].astype(np.float64)
        for ry in range(kh):
            for rx in range(kw):
                win = part[:, :, ry * dh : ry * dh + sh * oh : sh, rx * dw : rx * dw + sw * ow : sw]
                out[:, g * og : (g + 1) * og] += np.einsum("nchw,oc->nohw", win, wg[:, :, ry, rx])
    return out


def conv2d_transpose_python(
    data: np.ndarray, kernel: np.ndarray, strides: tuple[int, int] = (1, 1),
    padding: tuple[int, int, int, int] = (0, 0, 0, 0), output_padding: tuple[int, int] = (0, 0),
    dilation: tuple[int, int] = (1, 1), groups: int = 1,
) -> np.ndarray:  # fmt: skip
    """Transposed convolution: every input pixel scatters `kernel` (C, O / groups, KH, KW).

    Example:
        >>> import numpy as np
        >>> conv2d_transpose_python(np.ones((1, 1, 2, 2)), np.ones((1, 1, 2, 2)), (2, 2)).shape
        (1, 1, 4, 4)
    """
    (sh, sw), (dh, dw), (pt, pl, pb, pr) = strides, dilation, padding
    n, c, h, w = data.shape
    _, og, kh, kw = kernel.shape
    full_h = (h - 1) * sh + dh * (kh - 1) + 1 + output_padding[0]
    full_w = (w - 1) * sw + dw * (kw - 1) + 1 + output_padding[1]
    out = np.zeros((n, og * groups, full_h, full_w))
    cg = c // groups
    for ci in range(c):
        g = ci // cg
        for ry in range(kh):
            for rx in range(kw):
                contrib = np.einsum(
                    "nhw,o->nohw", data[:, ci].astype(np.float64), kernel[ci, :, ry, rx]
                )
                ys, xs = ry * dh, rx * dw
                out[:, g * og : (g + 1) * og, ys : ys + sh * h : sh, xs : xs + sw * w : sw] += (
                    contrib
                )
    return out[:, :, pt : full_h - pb, pl : full_w - pr]
