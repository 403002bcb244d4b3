"""Numpy references of batch norm (inference) and group norm.

Example:
    >>> import numpy as np
    >>> group_norm_python(np.array([[[1.0], [3.0]]]), np.ones(2), np.zeros(2), 1).round(3).ravel().tolist()
    [-1.0, 1.0]
"""

from __future__ import annotations

import numpy as np


def batch_norm_python(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, mean: np.ndarray, var: np.ndarray,
    axis: int = 1, epsilon: float = 1e-5,
) -> np.ndarray:  # fmt: skip
    """`(x - mean) / sqrt(var + epsilon) * gamma + beta` along channel `axis`, in float64.

    Example:
        >>> import numpy as np
        >>> batch_norm_python(np.ones((1, 2)), np.ones(2), np.zeros(2), np.ones(2), np.ones(2)).tolist()
        [[0.0, 0.0]]
    """
    shape = [1] * x.ndim
    shape[axis] = -1
    p = [a.astype(np.float64).reshape(shape) for a in (gamma, beta, mean, var)]
    return (x.astype(np.float64) - p[2]) / np.sqrt(p[3] + epsilon) * p[0] + p[1]


def group_norm_python(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, num_groups: int, epsilon: float = 1e-5
) -> np.ndarray:
    """Group norm of (N, C, ...) data over channel groups and all trailing axes, in float64.

    Example:
        >>> import numpy as np
        >>> group_norm_python(np.zeros((1, 2, 3)), np.ones(2), np.ones(2), 2).ravel().tolist()
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    n, c = x.shape[:2]
    grouped = x.astype(np.float64).reshape(n, num_groups, -1)
    mean = grouped.mean(axis=2, keepdims=True)
    var = grouped.var(axis=2, keepdims=True)
    normed = ((grouped - mean) / np.sqrt(var + epsilon)).reshape(x.shape)
    shape = [1, c] + [1] * (x.ndim - 2)
    return normed * gamma.reshape(shape) + beta.reshape(shape)
