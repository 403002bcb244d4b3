"""Numpy reference implementations of TOPI operators, for tests.

Example:
    >>> import numpy as np
    >>> from unity.topi import testing
    >>> testing.softmax_python(np.zeros((1, 2), "float32")).tolist()
    [[0.5, 0.5]]
"""

from unity.topi.testing.conv2d_nchw_python import conv2d_nchw_python
from unity.topi.testing.normalization import layer_norm_python, softmax_python

__all__ = ["conv2d_nchw_python", "layer_norm_python", "softmax_python"]
