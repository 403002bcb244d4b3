"""Numpy reference implementations of TOPI operators, for tests.

Example:
    >>> import numpy as np
    >>> from unity.topi import testing
    >>> testing.softmax_python(np.zeros((1, 2), "float32")).tolist()
    [[0.5, 0.5]]
"""

from unity.topi.testing.conv2d_nchw_python import conv2d_nchw_python
from unity.topi.testing.conv2d_python import conv2d_python, conv2d_transpose_python
from unity.topi.testing.layout_python import from_blocked, to_blocked
from unity.topi.testing.norm_python import batch_norm_python, group_norm_python
from unity.topi.testing.normalization import layer_norm_python, softmax_python
from unity.topi.testing.pool2d_python import adaptive_avg_pool2d_python, pool2d_python

__all__ = [
    "adaptive_avg_pool2d_python", "batch_norm_python", "conv2d_nchw_python", "conv2d_python",
    "conv2d_transpose_python", "from_blocked", "group_norm_python", "layer_norm_python",
    "pool2d_python", "softmax_python", "to_blocked",
]  # fmt: skip
