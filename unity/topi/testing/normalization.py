"""Numpy references of softmax and layer normalization.

Example:
    >>> import numpy as np
    >>> float(softmax_python(np.array([[0.0, 0.0]]))[0, 1])
    0.5
"""

from __future__ import annotations

import numpy as np


def softmax_python(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """`exp(x - max) / sum(exp(x - max))` along `axis`, computed in float64.

    Example:
        >>> import numpy as np
        >>> softmax_python(np.array([1.0, 1.0, 1.0, 1.0])).tolist()
        [0.25, 0.25, 0.25, 0.25]
    """
    wide = x.astype(np.float64)
    e = np.exp(wide - wide.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)


def layer_norm_python(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, axis: int = -1, epsilon: float = 1e-5
) -> np.ndarray:
    """`(x - mean) / sqrt(var + epsilon) * gamma + beta` over `axis`, in float64.

    Example:
        >>> import numpy as np
        >>> layer_norm_python(np.array([[1.0, 3.0]]), np.ones(2), np.zeros(2)).round(3).tolist()
        [[-1.0, 1.0]]
    """
    wide = x.astype(np.float64)
    mean = wide.mean(axis=axis, keepdims=True)
    var = wide.var(axis=axis, keepdims=True)
    return ((wide - mean) / np.sqrt(var + epsilon) * gamma + beta).astype(x.dtype)
