"""Tensor expressions: describe tensors by index formulas, then make `PrimFunc`s of them.

Example:
    >>> from unity import te
    >>> n = te.var("n")
    >>> A = te.placeholder((n, 16), name="A")
    >>> k = te.reduce_axis((0, 16), name="k")
    >>> B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    >>> f = te.create_prim_func([A, B])
    >>> [b.name for b in f.buffer_params()]
    ['A', 'B']
"""

from unity.te.create_prim_func import create_prim_func
from unity.te.reduction import CommReducer, Reduce, comm_reducer, max, min, prod, sum
from unity.te.tensor import (
    ComputeOp, Operation, PlaceholderOp, Tensor, compute, placeholder, reduce_axis, size_var, var,
)  # fmt: skip
from unity.tir.expr import const
from unity.tir.expr import select as if_then_else
from unity.tir.op import (
    abs, acos, asin, atan, atan2, ceil, cos, cosh, erf, exp, exp2, fabs, floor, fmod, isinf,
    isnan, log, log2, log10, power, round, rsqrt, sigmoid, sin, sinh, sqrt, tan, tanh, trunc,
)  # fmt: skip

pow = power  # noqa: A001 - TVM's name

__all__ = [
    "CommReducer", "ComputeOp", "Operation", "PlaceholderOp", "Reduce", "Tensor", "abs", "acos",
    "asin", "atan", "atan2", "ceil", "comm_reducer", "compute", "const", "cos", "cosh",
    "create_prim_func", "erf", "exp", "exp2", "fabs", "floor", "fmod", "if_then_else", "isinf",
    "isnan", "log", "log2", "log10", "max", "min", "placeholder", "pow", "power", "prod",
    "reduce_axis", "round", "rsqrt", "sigmoid", "sin", "sinh", "size_var", "sqrt", "sum", "tan",
    "tanh", "trunc", "var",
]  # fmt: skip
