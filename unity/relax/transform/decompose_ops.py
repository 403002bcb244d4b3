"""Decompose normalization ops for inference into elementwise arithmetic.

Before::

    @R.function
    def main(x: R.Tensor((n, 4, 8, 8), "float32")):
        with R.dataflow():
            bn = R.nn.batch_norm(x, gamma, beta, mean, var, axis=1, epsilon=1e-5)
            gv = bn[0]
            R.output(gv)
        return gv

After ``DecomposeOpsForInference()`` (gamma...var constants: scale and shift folded)::

    @R.function
    def main(x: R.Tensor((n, 4, 8, 8), "float32")):
        with R.dataflow():
            lv = R.multiply(x, R.const(scale))    # gamma / sqrt(var + eps), shape (4, 1, 1)
            lv1 = R.add(lv, R.const(shift))       # beta - mean * scale
            bn = (lv1, mean, var)
            gv = bn[0]
            R.output(gv)
        return gv

With non-constant parameters the scale and shift are computed by relax ops
(`FoldConstant` folds them once the weights are bound). `layer_norm` is decomposed
into mean / variance arithmetic only with ``decompose_layer_norm=True`` (its
legalized kernel is usually better left whole).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax import op
from unity.relax.dpl import is_op, rewrite_call, wildcard
from unity.relax.expr import Call, Constant, Expr, Function, Tuple
from unity.relax.op.nn.normalization import BatchNormAttrs, LayerNormAttrs
from unity.relax.struct_info import TensorStructInfo


@dataclass(frozen=True)
class DecomposeOpsForInference(ModulePass):
    """Rewrite `batch_norm` (and optionally `layer_norm`) as multiply/add arithmetic.

    Example:
        >>> DecomposeOpsForInference()(IRModule()).functions
        {}
    """

    decompose_layer_norm: bool = False
    """Also rewrite `layer_norm` into mean/variance arithmetic."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Decompose in every relax function of `mod`."""
        return mod.map_functions(Function, self._decompose)

    def _decompose(self, func: Function) -> Function:
        args = tuple(wildcard() for _ in range(5))
        func = rewrite_call(is_op(op.nn.batch_norm)(*args), _batch_norm, func)
        if self.decompose_layer_norm:
            pat = is_op(op.nn.layer_norm)(wildcard(), wildcard(), wildcard())
            func = rewrite_call(pat, _layer_norm, func)
        return func


def _batch_norm(call: Expr, matches: dict[Any, Any]) -> Expr:
    assert isinstance(call, Call) and isinstance(call.attrs, BatchNormAttrs)
    x, gamma, beta, mean, var = call.args
    sinfo = x.struct_info
    if not isinstance(sinfo, TensorStructInfo) or sinfo.ndim < 0:
        return call  # the broadcast axis is unknown without the rank
    attrs = call.attrs
    axis = attrs.axis % sinfo.ndim
    trailing = list(range(1, sinfo.ndim - axis))

    def along_axis(v: Expr) -> Expr:
        if isinstance(v, Constant):
            return Constant(v.data.reshape(v.data.shape + (1,) * len(trailing)))
        return op.expand_dims(v, trailing) if trailing else v

    scale, shift = _scale_shift(gamma, beta, mean, var, attrs, sinfo.dtype)
    y = op.add(op.multiply(x, along_axis(scale)), along_axis(shift))
    return Tuple((y, mean, var))


def _scale_shift(gamma: Expr, beta: Expr, mean: Expr, var: Expr, attrs: BatchNormAttrs,
                 dtype: str) -> tuple[Expr, Expr]:  # fmt: skip
    """`gamma / sqrt(var + eps)` and `beta - mean * scale`: numpy-folded when all constant."""
    if all(isinstance(v, Constant) for v in (gamma, beta, mean, var)):
        g, b, m, v = (np.asarray(c.data, "float64") for c in (gamma, beta, mean, var))  # type: ignore[union-attr]
        g = g if attrs.scale else np.ones_like(v)
        b = b if attrs.center else np.zeros_like(v)
        scale = g / np.sqrt(v + attrs.epsilon)
        return Constant(scale.astype(dtype)), Constant((b - m * scale).astype(dtype))
    eps = Constant(np.asarray(attrs.epsilon, dtype))
    inv = op.rsqrt(op.add(var, eps))
    scale = op.multiply(gamma, inv) if attrs.scale else inv
    shift = op.negative(op.multiply(mean, scale))
    return scale, op.add(beta, shift) if attrs.center else shift


def _layer_norm(call: Expr, matches: dict[Any, Any]) -> Expr:
    assert isinstance(call, Call) and isinstance(call.attrs, LayerNormAttrs)
    x, gamma, beta = call.args
    attrs = call.attrs
    sinfo = x.struct_info
    if not isinstance(sinfo, TensorStructInfo):
        return call
    axes = list(attrs.axes)
    mean = op.mean(x, axes, keepdims=True)
    centered = op.subtract(x, mean)
    var = op.mean(op.multiply(centered, centered), axes, keepdims=True)
    y = op.multiply(centered, op.rsqrt(op.add(var, Constant(np.asarray(attrs.epsilon, sinfo.dtype)))))
    y = op.multiply(y, gamma) if attrs.scale else y
    return op.add(y, beta) if attrs.center else y
