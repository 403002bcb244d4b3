"""Relax operators; each is an `Op` that builds its `Call` and infers its struct info.

Example:
    >>> from unity.relax import op
    >>> op.add.name, op.nn.conv2d.name
    ('relax.add', 'relax.nn.conv2d')
"""

from unity.relax.op import nn
from unity.relax.op.base import RelaxOp, register_op
from unity.relax.op.binary import (
    add, bitwise_and, bitwise_or, divide, equal, floor_divide, floor_mod, greater,
    greater_equal, less, less_equal, logical_and, logical_or, maximum, minimum, mod, multiply,
    not_equal, power, subtract,
)  # fmt: skip
from unity.relax.op.call_tir import call_dps_packed, call_pure_packed, call_tir
from unity.relax.op.create import arange, full, ones, tril, triu, zeros
from unity.relax.op.datatype import astype
from unity.relax.op.linear_algebra import det, matmul
from unity.relax.op.manipulate import (
    broadcast_to, concat, expand_dims, flatten, gather_elements, permute_dims, reshape,
    scatter_elements, split, squeeze, strided_slice, take,
)  # fmt: skip
from unity.relax.op.statistical import (
    argmax, argmin, cumsum, max, mean, min, prod, sum, variance,
)  # fmt: skip
from unity.relax.op.ternary import where
from unity.relax.op.unary import (
    abs, bitwise_not, ceil, clip, cos, erf, exp, floor, isfinite, isinf, isnan, log,
    logical_not, negative, round, rsqrt, sigmoid, sign, sin, sqrt, square, tan, tanh,
)  # fmt: skip
