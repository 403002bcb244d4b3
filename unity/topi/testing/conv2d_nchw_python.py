"""Numpy reference of a 2-D convolution in NCHW layout (TVM's `conv2d_nchw_python`).

Example:
    >>> import numpy as np
    >>> x = np.ones((1, 1, 3, 3), "float32")
    >>> w = np.ones((1, 1, 3, 3), "float32")
    >>> conv2d_nchw_python(x, w, 1, 1)[0, 0].tolist()
    [[4.0, 6.0, 4.0], [6.0, 9.0, 6.0], [4.0, 6.0, 4.0]]
"""

from __future__ import annotations

import numpy as np


def _pair(value: int | tuple[int, int]) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def conv2d_nchw_python(
    data: np.ndarray,
    kernel: np.ndarray,
    stride: int | tuple[int, int],
    padding: int | tuple[int, int],
    dilation: int | tuple[int, int] = 1,
) -> np.ndarray:
    """Convolve `data` (N, C, H, W) with `kernel` (K, C, R, S); symmetric zero padding.

    The sum runs in float64 and is cast back to the input dtype.

    Example:
        >>> import numpy as np
        >>> conv2d_nchw_python(np.ones((1, 2, 4, 4)), np.ones((3, 2, 2, 2)), 2, 0).shape
        (1, 3, 2, 2)
    """
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    n, c, h, w = data.shape
    k, kc, r, s = kernel.shape
    if kc != c:
        raise ValueError(f"conv2d_nchw_python: data has {c} channels, kernel expects {kc}")
    padded = np.pad(data.astype(np.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    out_h = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1
    out_w = (w + 2 * pw - dw * (s - 1) - 1) // sw + 1
    out = np.zeros((n, k, out_h, out_w))
    for ry in range(r):
        for rx in range(s):
            y0, x0 = ry * dh, rx * dw
            window = padded[:, :, y0 : y0 + sh * out_h : sh, x0 : x0 + sw * out_w : sw]
            out += np.einsum("nchw,kc->nkhw", window, kernel[:, :, ry, rx].astype(np.float64))
    return out.astype(data.dtype)
