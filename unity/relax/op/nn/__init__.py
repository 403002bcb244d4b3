"""Neural-network ops (`relax.op.nn`).

Example:
    >>> from unity.relax.op import nn
    >>> nn.relu.name
    'relax.nn.relu'
"""

from unity.relax.op.nn.activation import (
    dropout, gelu, gelu_tanh, log_softmax, relu, silu, softmax,
)  # fmt: skip
from unity.relax.op.nn.convolution import conv2d, conv2d_transpose
from unity.relax.op.nn.linear import linear
from unity.relax.op.nn.normalization import batch_norm, group_norm, layer_norm
from unity.relax.op.nn.pad import pad
from unity.relax.op.nn.pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from unity.relax.op.nn.recurrent import RecurrentAttrs, recurrent
