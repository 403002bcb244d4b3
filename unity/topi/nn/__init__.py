"""Neural-network operators on TE: convolution, pooling, softmax, normalization, padding, dense.

Example:
    >>> from unity import te, topi
    >>> x = te.placeholder((1, 3, 8, 8), name="x")
    >>> topi.nn.relu(x).shape[3].value
    8
"""

from unity.topi.elemwise import gelu, gelu_tanh, leaky_relu, relu, silu
from unity.topi.nn.activation import (
    celu, elu, hard_sigmoid, hard_swish, mish, prelu, selu, softplus, softsign, thresholded_relu,
)  # fmt: skip
from unity.topi.nn.conv2d import conv2d
from unity.topi.nn.conv2d_transpose import conv2d_transpose
from unity.topi.nn.deform_conv import deform_conv2d
from unity.topi.nn.dense import dense
from unity.topi.nn.lrn import lrn
from unity.topi.nn.norm import batch_norm, group_norm, layer_norm
from unity.topi.nn.pad import pad
from unity.topi.nn.pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from unity.topi.nn.recurrent import recurrent_kernel
from unity.topi.nn.softmax import log_softmax, softmax

__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool2d",
    "batch_norm",
    "celu",
    "conv2d",
    "conv2d_transpose",
    "deform_conv2d",
    "dense",
    "elu",
    "gelu",
    "gelu_tanh",
    "group_norm",
    "hard_sigmoid",
    "hard_swish",
    "layer_norm",
    "leaky_relu",
    "log_softmax",
    "lrn",
    "max_pool2d",
    "mish",
    "pad",
    "prelu",
    "recurrent_kernel",
    "relu",
    "selu",
    "silu",
    "softmax",
    "softplus",
    "softsign",
    "thresholded_relu",
]  # fmt: skip
