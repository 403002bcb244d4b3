"""Operator definitions on TE (math, broadcast, transform, reduction, nn); numpy references
in `testing`.  Every function is pure: tensors in, tensors out, shapes may be symbolic.

Example:
    >>> from unity import te, topi
    >>> x = te.placeholder((te.var("n"), 4), name="x")
    >>> y = topi.add(topi.exp(x), 1.0)
    >>> y.op.name
    'T_add'
"""

from unity.topi import image, nn, signal, testing
from unity.topi.bitwise import bitwise_and, bitwise_not, bitwise_or, bitwise_xor
from unity.topi.broadcast import (
    add, divide, equal, floor_divide, floor_mod, greater, greater_equal, less, less_equal,
    logical_and, logical_or, maximum, minimum, mod, multiply, not_equal, power, subtract, where,
)  # fmt: skip
from unity.topi.creation import arange, full, full_like, ones, tril, triu, zeros
from unity.topi.elemwise import (
    abs, acos, asin, atan, cast, ceil, clip, cos, cosh, erf, exp, exp2, floor, identity,
    isfinite, isinf, isnan, log, log2, log10, logical_not, negative, reciprocal, round, rsqrt,
    sigmoid, sign, sin, sinh, sqrt, square, tan, tanh, trunc,
)  # fmt: skip
from unity.topi.indexing import (
    gather_elements, gather_nd, one_hot, scatter_elements, scatter_nd, take,
)  # fmt: skip
from unity.topi.matmul import matmul
from unity.topi.reduction import (
    argmax, argmin, cumprod, cumsum, max, mean, min, prod, sum, variance,
)  # fmt: skip
from unity.topi.replicate import depth_to_space, flip, repeat, space_to_depth, tile
from unity.topi.sort import argsort, sort, topk
from unity.topi.transform import (
    broadcast_to, concat, concatenate, expand_dims, flatten, permute_dims, reshape, split,
    squeeze, strided_slice, transpose,
)  # fmt: skip

__all__ = [
    "abs",
    "acos",
    "add",
    "arange",
    "argmax",
    "argmin",
    "argsort",
    "asin",
    "atan",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "broadcast_to",
    "cast",
    "ceil",
    "clip",
    "concat",
    "concatenate",
    "cos",
    "cosh",
    "cumprod",
    "cumsum",
    "depth_to_space",
    "divide",
    "equal",
    "erf",
    "exp",
    "exp2",
    "expand_dims",
    "flatten",
    "flip",
    "floor",
    "floor_divide",
    "floor_mod",
    "full",
    "full_like",
    "gather_elements",
    "gather_nd",
    "greater",
    "greater_equal",
    "identity",
    "image",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "log",
    "log2",
    "log10",
    "logical_and",
    "logical_not",
    "logical_or",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "nn",
    "not_equal",
    "one_hot",
    "ones",
    "permute_dims",
    "power",
    "prod",
    "reciprocal",
    "repeat",
    "reshape",
    "round",
    "rsqrt",
    "scatter_elements",
    "scatter_nd",
    "sigmoid",
    "sign",
    "signal",
    "sin",
    "sinh",
    "sort",
    "space_to_depth",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "strided_slice",
    "subtract",
    "sum",
    "take",
    "tan",
    "tanh",
    "testing",
    "tile",
    "topk",
    "transpose",
    "tril",
    "triu",
    "trunc",
    "variance",
    "where",
    "zeros",
]  # fmt: skip
