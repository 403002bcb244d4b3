"""Fold constant per-channel scales and shifts into the weights and biases before them.

Before (``W``, ``b``, ``s``, ``t`` numpy constants; ``b``, ``s``, ``t`` of shape (4, 1, 1), as a
conv bias and a decomposed batch norm leave them)::

    @R.function
    def main(x: R.Tensor((1, 3, 8, 8), "float32")):
        with R.dataflow():
            lv = R.nn.conv2d(x, R.const(W), padding=1)
            lv1 = R.add(lv, R.const(b))
            lv2 = R.multiply(lv1, R.const(s))
            gv = R.add(lv2, R.const(t))
            R.output(gv)
        return gv

After ``FoldScaleAxis()`` (``W_s = W * s.reshape(4, 1, 1, 1)``, ``b_s_t = b * s + t``)::

    @R.function
    def main(x: R.Tensor((1, 3, 8, 8), "float32")):
        with R.dataflow():
            lv = R.nn.conv2d(x, R.const(W_s), padding=1)
            gv = R.add(lv, R.const(b_s_t))
            R.output(gv)
        return gv

The rewrites, applied in one forward sweep over each dataflow block (so they chain):

- ``multiply(conv2d(x, W), s)`` -> ``conv2d(x, W * s)``: NCHW data, OIHW kernel, any groups
  (axis 0 of the kernel is always the output channel);
- ``multiply(add(conv2d(x, W), b), s)`` -> ``add(conv2d(x, W * s), b * s)``;
- ``multiply(matmul(x, W), s)`` -> ``matmul(x, W * s)`` for a 2-D ``W``;
- ``add(add(y, b1), b2)`` -> ``add(y, b1 + b2)``.

``W``, ``b``, ``s`` are constants (a `Constant` or a var bound to one) of one float dtype
(the sum's ``b1``, ``b2`` of ``y``'s dtype, any kind); ``s`` and ``b`` may broadcast along
the output channel only (shapes like (O, 1, 1), (1, O, 1, 1), (1,) or a scalar; (N,) or
(1, N) for matmul) and the sum may not grow ``y``. Every intermediate must be a dataflow var
of the block used exactly once, so nothing else sees the value that changes. The folded
constants are computed here with numpy in their own dtype: results change by rounding only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from unity.ir import dtype as dt
from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax import op
from unity.relax.expr import (
    Binding, BindingBlock, Call, Constant, DataflowBlock, DataflowVar, Expr, Function, Var,
    VarBinding,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator, ExprVisitor
from unity.relax.op.linear_algebra import MatmulAttrs
from unity.relax.op.nn.convolution import Conv2DAttrs
from unity.relax.struct_info import StructInfo, TensorStructInfo
from unity.relax.transform.dead_code_elimination import used_vars


@dataclass(frozen=True)
class FoldScaleAxis(ModulePass):
    """Fold `conv2d(x, W) * s` into `conv2d(x, W * s)` (and bias, matmul, add-chain variants).

    Example:
        >>> FoldScaleAxis()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Fold in every relax function of `mod`."""
        return mod.map_functions(Function, lambda f: _Folder(mod).visit_expr(f))


@dataclass
class _Block:
    """What the folder knows of the dataflow block it is rewriting."""

    uses: Counter[Var]
    """Uses of each var in the block as it was (new vars count their one use)."""
    values: dict[Var, Expr] = field(default_factory=dict[Var, Expr])
    """The (rewritten) value of each var bound so far in the block."""
    emitted: list[Binding] = field(default_factory=list[Binding])
    """Bindings a rewrite needs before the binding being visited."""


class _Folder(ExprMutator):
    def __init__(self, mod: IRModule) -> None:
        super().__init__(mod)
        self.constants: dict[Var, Constant] = {}
        self.block: _Block | None = None

    def visit_binding_block(self, block: BindingBlock) -> BindingBlock:
        outer = self.block
        self.block = _Block(_use_counts(block)) if isinstance(block, DataflowBlock) else None
        try:
            visited = super().visit_binding_block(block)
            if visited is block or self.block is None:
                return visited
            return visited.replace(bindings=_without_folded(visited.bindings, self.block.uses))
        finally:
            self.block = outer

    def visit_binding(self, binding: Binding) -> list[Binding]:
        out = super().visit_binding(binding)
        for b in out:
            if isinstance(b, VarBinding) and isinstance(b.value, Constant):
                self.constants[b.var] = b.value
        block = self.block
        if block is None:
            return out
        block.values.update((b.var, b.value) for b in out if isinstance(b, VarBinding))
        emitted, block.emitted = block.emitted, []
        return [*emitted, *out]

    def visit_call_(self, expr: Call) -> Expr:
        call = super().visit_call_(expr)
        if self.block is None or not isinstance(call, Call):
            return call
        rule = _CALL_RULES.get(call.op)
        folded = rule(self, call) if rule is not None else None
        return call if folded is None else folded

    def constant(self, expr: Expr) -> np.ndarray | None:
        """The data of `expr` when it is a constant or a var bound to one."""
        if isinstance(expr, Var):
            expr = self.constants.get(expr, expr)
        return expr.data if isinstance(expr, Constant) else None

    def single_use(self, expr: Expr) -> Call | None:
        """The call bound to `expr` when `expr` is a dataflow var of this block used once."""
        block = self.block
        if block is None or not isinstance(expr, DataflowVar) or block.uses[expr] != 1:
            return None
        value = block.values.get(expr)
        return value if isinstance(value, Call) else None

    def emit(self, value: Expr, name_hint: str) -> Var:
        """Bind `value` to a new dataflow var just before the binding being visited."""
        assert self.block is not None, "rewrites run inside dataflow blocks only"
        var = DataflowVar(name_hint, value.struct_info_)
        self.block.emitted.append(VarBinding(var, value, span=value.span))
        self.block.values[var] = value
        self.block.uses[var] = 1  # the binding being visited uses it
        return var

    def fold_multiply(self, call: Call) -> Expr | None:
        """`multiply(producer(...), s)` in either order: scale the producer's weights."""
        for y, s in _orders(call):
            scale, producer = self.constant(s), self.single_use(y)
            rule = _SCALE_RULES.get(producer.op) if producer is not None else None
            if scale is None or producer is None or rule is None or not _same_dtype(call, scale):
                continue
            folded = rule(self, producer, scale)
            if folded is not None:
                return folded
        return None

    def scale_conv2d(self, conv: Call, scale: np.ndarray) -> Expr | None:
        """`conv2d(x, W) * s` -> `conv2d(x, W * s)`, `s` along the output channels."""
        x, w = conv.args
        weight = self.constant(w)
        if weight is None or not _plain_conv2d(conv, weight):
            return None
        vector = _along_axis(scale, 4, 1, weight.shape[0])
        if vector is None:
            return None
        return self.refresh(conv.replace(args=(x, Constant(_scaled(weight, vector, 0)))))

    def scale_biased_conv2d(self, add: Call, scale: np.ndarray) -> Expr | None:
        """`(conv2d(x, W) + b) * s` -> `conv2d(x, W * s) + b * s`."""
        for y, b in _orders(add):
            bias, conv = self.constant(b), self.single_use(y)
            if bias is None or conv is None or conv.op is not op.nn.conv2d:
                continue
            if _along_axis(bias, 4, 1, _channels(conv)) is None or bias.dtype != scale.dtype:
                continue
            folded = self.scale_conv2d(conv, scale)
            if folded is not None:
                assert isinstance(y, Var)  # single_use found a binding for it
                new_bias = Constant(np.multiply(bias, scale).astype(bias.dtype))
                return self.refresh(op.add(self.emit(folded, y.name_hint), new_bias))
        return None

    def scale_matmul(self, matmul: Call, scale: np.ndarray) -> Expr | None:
        """`matmul(x, W) * s` -> `matmul(x, W * s)`, `W` 2-D and `s` along its columns."""
        x, w = matmul.args
        weight = self.constant(w)
        sinfo = matmul.struct_info_
        if weight is None or weight.ndim != 2 or not isinstance(sinfo, TensorStructInfo):
            return None
        attrs = matmul.attrs
        if not isinstance(attrs, MatmulAttrs) or attrs.out_dtype not in (None, str(weight.dtype)):
            return None
        vector = _along_axis(scale, sinfo.ndim, sinfo.ndim - 1, weight.shape[1])
        if vector is None or not _same_dtype(matmul, weight):
            return None
        return self.refresh(matmul.replace(args=(x, Constant(_scaled(weight, vector, 1)))))

    def fold_add(self, call: Call) -> Expr | None:
        """`add(add(y, b1), b2)` in any order -> `add(y, b1 + b2)`."""
        for y, b2 in _orders(call):
            outer, inner = self.constant(b2), self.single_use(y)
            if outer is None or inner is None or inner.op is not op.add:
                continue
            folded = self._merge_shifts(inner, outer)
            if folded is not None:
                return folded
        return None

    def _merge_shifts(self, inner: Call, outer: np.ndarray) -> Expr | None:
        for y, b1 in _orders(inner):
            shift = self.constant(b1)
            if shift is None or not (_fits(shift, y.struct_info_) and _fits(outer, y.struct_info_)):
                continue
            total = np.add(shift, outer).astype(shift.dtype)
            return self.refresh(op.add(y, Constant(total)))
        return None


_CALL_RULES: dict[object, Callable[[_Folder, Call], Expr | None]] = {
    op.multiply: _Folder.fold_multiply,  # y * s, y made from a constant weight
    op.add: _Folder.fold_add,  # (y + b1) + b2 -> y + (b1 + b2)
}
_SCALE_RULES: dict[object, Callable[[_Folder, Call, np.ndarray], Expr | None]] = {
    op.nn.conv2d: _Folder.scale_conv2d,  # conv2d(x, W) * s -> conv2d(x, W * s)
    op.add: _Folder.scale_biased_conv2d,  # (conv2d(x, W) + b) * s -> conv2d(x, W * s) + b * s
    op.matmul: _Folder.scale_matmul,  # matmul(x, W) * s -> matmul(x, W * s)
}


class _UseCounter(ExprVisitor):
    def __init__(self) -> None:
        self.uses: Counter[Var] = Counter()

    def visit_var_(self, var: Var) -> None:
        self.uses[var] += 1


def _use_counts(block: BindingBlock) -> Counter[Var]:
    counter = _UseCounter()
    for b in block.bindings:
        counter.visit_expr(b.value)  # type: ignore[attr-defined]  # both binding kinds
    return counter.uses


def _without_folded(bindings: tuple[Binding, ...], uses: Counter[Var]) -> tuple[Binding, ...]:
    """Drop the bindings of dataflow vars that had uses and have none left."""
    live: set[Var] = set()
    kept: list[Binding] = []
    for b in reversed(bindings):
        folded = isinstance(b, VarBinding) and isinstance(b.var, DataflowVar) and uses[b.var] > 0
        if folded and b.var not in live:
            continue
        live |= used_vars(b.value)  # type: ignore[attr-defined]  # both binding kinds
        kept.append(b)
    return tuple(reversed(kept))


def _orders(call: Call) -> tuple[tuple[Expr, Expr], tuple[Expr, Expr]]:
    """Both operand orders of a commutative binary call."""
    a, b = call.args
    return (a, b), (b, a)


def _plain_conv2d(conv: Call, weight: np.ndarray) -> bool:
    """NCHW data and result, OIHW kernel, a result in the weight's float dtype."""
    attrs = conv.attrs
    if not isinstance(attrs, Conv2DAttrs):
        return False
    if (attrs.data_layout, attrs.kernel_layout) != ("NCHW", "OIHW"):
        return False
    if attrs.out_layout not in (None, "NCHW"):
        return False  # a channel-blocked result: scales are not along axis 1
    return attrs.out_dtype in (None, str(weight.dtype)) and _same_dtype(conv, weight)


def _channels(conv: Call) -> int:
    """The output channels of an NCHW conv (0 when unknown: no vector fits)."""
    sinfo = conv.struct_info_
    if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None or sinfo.ndim != 4:
        return 0
    return int(sinfo.shape[1]) if sinfo.shape[1].is_number else 0


def _same_dtype(call: Call, data: np.ndarray) -> bool:
    """True when `call` gives a float tensor of `data`'s (numpy) dtype."""
    sinfo = call.struct_info_
    if not isinstance(sinfo, TensorStructInfo):
        return False
    return dt.is_float(sinfo.dtype) and sinfo.dtype == str(data.dtype)


def _along_axis(data: np.ndarray, ndim: int, axis: int, size: int) -> np.ndarray | None:
    """`data` as a vector of `size` along `axis` of a rank-`ndim` result, or None when it
    varies along another axis, has the wrong length or would raise the rank."""
    if data.ndim > ndim or size <= 0:
        return None
    shape = (1,) * (ndim - data.ndim) + data.shape
    if any(d != 1 for a, d in enumerate(shape) if a != axis) or shape[axis] not in (1, size):
        return None
    return np.broadcast_to(data.reshape(-1), (size,))


def _scaled(weight: np.ndarray, vector: np.ndarray, axis: int) -> np.ndarray:
    """`weight` with its slices along `axis` multiplied by `vector`, in its own dtype."""
    shape = [1] * weight.ndim
    shape[axis] = -1
    return np.multiply(weight, vector.reshape(shape)).astype(weight.dtype)


def _fits(data: np.ndarray, sinfo: StructInfo | None) -> bool:
    """True when `data` broadcasts into a tensor of `sinfo` without growing it."""
    if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None:
        return False
    if data.ndim > sinfo.ndim or str(data.dtype) != sinfo.dtype:
        return False
    dims = sinfo.shape[sinfo.ndim - data.ndim :]
    return all(d == 1 or (dim.is_number and int(dim) == d) for d, dim in zip(data.shape, dims))
