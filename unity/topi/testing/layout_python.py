"""Numpy conversions between NCHW and the channel-blocked layout "NCHW{b}c".

Example:
    >>> import numpy as np
    >>> x = np.arange(32, dtype="float32").reshape(1, 8, 2, 2)
    >>> to_blocked(x, 4).shape, bool((from_blocked(to_blocked(x, 4)) == x).all())
    ((1, 2, 2, 2, 4), True)
"""

from __future__ import annotations

import numpy as np


def to_blocked(x: np.ndarray, block: int) -> np.ndarray:
    """`x` (N, C, H, W) as "NCHW{block}c": (N, C/block, H, W, block), `[n, c//b, h, w, c%b]`.

    Example:
        >>> to_blocked(np.zeros((2, 16, 3, 3)), 8).shape
        (2, 2, 3, 3, 8)
    """
    n, c, *spatial = x.shape
    split = x.reshape(n, c // block, block, *spatial)
    return np.ascontiguousarray(np.moveaxis(split, 2, -1))


def from_blocked(x: np.ndarray) -> np.ndarray:
    """`x` in "NCHW{b}c" (N, C/b, H, W, b) back as NCHW (N, C, H, W).

    Example:
        >>> from_blocked(np.zeros((2, 2, 3, 3, 8))).shape
        (2, 16, 3, 3)
    """
    n, blocks, *spatial, block = x.shape
    return np.ascontiguousarray(np.moveaxis(x, -1, 2)).reshape(n, blocks * block, *spatial)
