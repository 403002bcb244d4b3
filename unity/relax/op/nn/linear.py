"""`nn.linear(x, weight, bias)`: ``x @ weight.T + bias``, built from permute_dims and matmul.

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 4), "float32"))
    >>> w = Var("w", TensorStructInfo((8, 4), "float32"))
    >>> linear(x, w).op.name
    'relax.matmul'
"""

from __future__ import annotations

from unity.relax.expr import Call, Expr
from unity.relax.op.binary import add
from unity.relax.op.linear_algebra import matmul
from unity.relax.op.manipulate import permute_dims


def linear(x: Expr, weight: Expr, bias: Expr | None = None, out_dtype: str | None = None) -> Call:
    """Apply a dense layer; `weight` is (out_features, in_features) as in PyTorch/TVM.

    The `BlockBuilder` emits the nested calls one binding each.

    Example:
        >>> linear(x, w).args[1].op.name  # doctest: +SKIP
        'relax.permute_dims'
    """
    out = matmul(x, permute_dims(weight), out_dtype=out_dtype)
    return out if bias is None else add(out, bias)
