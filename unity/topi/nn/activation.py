"""More activations (the ONNX set): elu, selu, celu, softplus, softsign, hard_sigmoid,
hard_swish, mish, thresholded_relu, and prelu with a per-channel slope tensor.

Example:
    >>> from unity import te
    >>> x = te.placeholder((2, 3), name="x")
    >>> elu(x).op.name, prelu(x, te.placeholder((3,), name="s"), axis=1).op.name
    ('T_elu', 'T_prelu')
"""

from __future__ import annotations


from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.elemwise import elemwise
from unity.topi.utils import normalize_axes


def _c(value: float, like: PrimExpr) -> PrimExpr:
    return const(value, like.dtype)


def softplus_value(v: PrimExpr) -> PrimExpr:
    """``log(1 + exp(v))`` of one value, as ``max(v, 0) + log(1 + exp(-|v|))``: no overflow
    for large `v` (`softplus`, `mish` and the recurrent kernels' Softplus use it).

    Example:
        >>> softplus_value(tir.Var("v", "float32")).dtype
        'float32'
    """
    return tir.max(v, _c(0, v)) + tir.log(_c(1, v) + tir.exp(-tir.abs(v)))


def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """`x` where positive, else `alpha * (exp(x) - 1)`.

    Example:
        >>> from unity import te
        >>> elu(te.placeholder((2,), name="x"), 0.5).dtype
        'float32'
    """
    return elemwise(
        x, lambda v: tir.select(v > _c(0, v), v, _c(alpha, v) * (tir.exp(v) - _c(1, v))), "T_elu"
    )


def selu(x: Tensor, alpha: float = 1.67326319217681884765625,
         gamma: float = 1.05070102214813232421875) -> Tensor:  # fmt: skip
    """`gamma * (x if x > 0 else alpha * (exp(x) - 1))` (ONNX defaults).

    Example:
        >>> from unity import te
        >>> selu(te.placeholder((2,), name="x")).op.name
        'T_selu'
    """
    return elemwise(x, lambda v: _c(gamma, v) * tir.select(
        v > _c(0, v), v, _c(alpha, v) * (tir.exp(v) - _c(1, v))), "T_selu")  # fmt: skip


def celu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """`max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`.

    Example:
        >>> from unity import te
        >>> celu(te.placeholder((2,), name="x")).op.name
        'T_celu'
    """
    return elemwise(x, lambda v: tir.max(v, _c(0, v)) + tir.min(
        _c(0, v), _c(alpha, v) * (tir.exp(v / _c(alpha, v)) - _c(1, v))), "T_celu")  # fmt: skip


def softplus(x: Tensor) -> Tensor:
    """`log(1 + exp(x))`, stable for large `|x|`.

    Example:
        >>> from unity import te
        >>> softplus(te.placeholder((2,), name="x")).op.name
        'T_softplus'
    """
    return elemwise(x, softplus_value, "T_softplus")


def softsign(x: Tensor) -> Tensor:
    """`x / (1 + |x|)`.

    Example:
        >>> from unity import te
        >>> softsign(te.placeholder((2,), name="x")).op.name
        'T_softsign'
    """
    return elemwise(x, lambda v: v / (_c(1, v) + tir.abs(v)), "T_softsign")


def hard_sigmoid(x: Tensor, alpha: float = 0.2, beta: float = 0.5) -> Tensor:
    """`clip(alpha * x + beta, 0, 1)` (ONNX defaults).

    Example:
        >>> from unity import te
        >>> hard_sigmoid(te.placeholder((2,), name="x")).op.name
        'T_hard_sigmoid'
    """

    def fn(v: PrimExpr) -> PrimExpr:
        return tir.min(tir.max(_c(alpha, v) * v + _c(beta, v), _c(0, v)), _c(1, v))

    return elemwise(x, fn, "T_hard_sigmoid")


def hard_swish(x: Tensor) -> Tensor:
    """`x * clip(x / 6 + 1/2, 0, 1)`.

    Example:
        >>> from unity import te
        >>> hard_swish(te.placeholder((2,), name="x")).op.name
        'T_hard_swish'
    """

    def fn(v: PrimExpr) -> PrimExpr:
        return v * tir.min(tir.max(v / _c(6, v) + _c(0.5, v), _c(0, v)), _c(1, v))

    return elemwise(x, fn, "T_hard_swish")


def mish(x: Tensor) -> Tensor:
    """`x * tanh(softplus(x))`.

    Example:
        >>> from unity import te
        >>> mish(te.placeholder((2,), name="x")).op.name
        'T_mish'
    """
    return elemwise(x, lambda v: v * tir.tanh(softplus_value(v)), "T_mish")


def thresholded_relu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """`x` where `x > alpha`, else 0.

    Example:
        >>> from unity import te
        >>> thresholded_relu(te.placeholder((2,), name="x")).op.name
        'T_thresholded_relu'
    """
    return elemwise(x, lambda v: tir.select(v > _c(alpha, v), v, _c(0, v)), "T_thresholded_relu")


def prelu(x: Tensor, slope: Tensor, axis: int = 1) -> Tensor:
    """`x` where positive, else `slope[c] * x` with `c` the index along `axis`.

    Raises:
        ValueError: `slope` is not 1-D.

    Example:
        >>> from unity import te
        >>> prelu(te.placeholder((2, 3), name="x"), te.placeholder((3,), name="s")).shape[1].value
        3
    """
    if slope.ndim != 1:
        raise ValueError(f"prelu: slope must be 1-D, got rank {slope.ndim}")
    (ax,) = normalize_axes(x.ndim, axis)

    def body(*i: PrimExpr) -> PrimExpr:
        v = x[i]
        return tir.select(v > _c(0, v), v, slope[i[ax]] * v)

    return te.compute(x.shape, body, name="T_prelu")
