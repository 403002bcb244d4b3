"""Compute in float16 with float32 accumulation for matmul and convolution.

Before::

    @R.function
    def main(x: R.Tensor((2, 8), "float32"), w: R.Tensor((8, 4), "float32")):
        with R.dataflow():
            lv = R.matmul(x, w)
            lv1 = R.nn.relu(lv)
            gv = R.nn.softmax(lv1)
            R.output(gv)
        return gv

After ``ToMixedPrecision()``::

    @R.function
    def main(x: R.Tensor((2, 8), "float32"), w: R.Tensor((8, 4), "float32")):
        with R.dataflow():
            lv2 = R.astype(x, "float16")
            lv3 = R.astype(w, "float16")
            lv4 = R.matmul(lv2, lv3, out_dtype="float32")   # float32 accumulation
            lv = R.astype(lv4, "float16")
            lv1 = R.nn.relu(lv)                               # follows its input: float16
            lv5 = R.astype(lv1, "float32")
            gv = R.nn.softmax(lv5)                            # numerically sensitive: float32
            R.output(gv)
        return gv

Ops fall in three classes: *always* (matmul, conv2d, conv2d_transpose: float16 inputs,
`out_dtype` float32, result cast to float16), *never* (softmax, reductions,
normalizations, exp/log...: float32 inputs) and *follow* (the rest: float16 when an
input already is). Constants are cast at compile time. Only dataflow blocks change,
and vars leaving a block keep their dtype, so the signature is unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from unity.ir.module import IRModule
from unity.ir.op import Op
from unity.ir.transform import ModulePass, PassContext
from unity.relax import op
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import (
    Binding, BindingBlock, Call, Constant, DataflowBlock, DataflowVar, Expr, Function, Tuple,
    Var, VarBinding,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator
from unity.relax.struct_info import TensorStructInfo

ALWAYS: frozenset[Op] = frozenset({op.matmul, op.nn.conv2d, op.nn.conv2d_transpose})
"""Ops computed from float16 inputs with float32 accumulation."""

NEVER: frozenset[Op] = frozenset({
    op.nn.softmax, op.nn.log_softmax, op.sum, op.mean, op.variance, op.prod, op.cumsum,
    op.nn.layer_norm, op.nn.batch_norm, op.nn.group_norm, op.exp, op.log, op.power, op.erf,
})  # fmt: skip
"""Ops kept in float32 (overflow or precision loss in float16)."""

LOW, HIGH = "float16", "float32"


@dataclass(frozen=True)
class ToMixedPrecision(ModulePass):
    """Run matmul/conv in float16 (float32 accumulation) and let cheap ops follow.

    Example:
        >>> ToMixedPrecision()(IRModule()).functions
        {}
    """

    out_dtype: str = HIGH
    """The accumulation dtype of the *always* ops."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Convert the dataflow blocks of every relax function."""
        return mod.map_functions(Function, lambda f: _Converter(self.out_dtype).visit_expr(f))


def _dtype(expr: Expr) -> str | None:
    sinfo = expr.struct_info_
    return sinfo.dtype if isinstance(sinfo, TensorStructInfo) else None


class _Converter(ExprMutator):
    def __init__(self, accumulate: str) -> None:
        super().__init__()
        self.accumulate = accumulate
        self.bb = BlockBuilder()
        self.casts: dict[tuple[int, str], Expr] = {}

    def visit_binding_block(self, block: BindingBlock) -> BindingBlock:
        if not isinstance(block, DataflowBlock) or not any(_is_always(b) for b in block.bindings):
            return super().visit_binding_block(block)
        self.bb.begin_block(dataflow=True)
        self.casts = {}
        for b in block.bindings:
            self._convert(b)
        out = self.bb.end_block()
        assert out is not None
        if len(out.bindings) == len(block.bindings) and all(
            a.var is b.var and a.value is b.value  # type: ignore[attr-defined]
            for a, b in zip(out.bindings, block.bindings, strict=True)
        ):
            return block
        return out

    def _convert(self, binding: Binding) -> None:
        value = binding.value  # type: ignore[attr-defined]  # both binding kinds
        if not isinstance(binding, VarBinding) or not isinstance(value, Call) or not isinstance(value.op, Op):
            self.bb.emit_normalized(binding.replace(value=self._restore(value)))  # type: ignore[call-arg]
            return
        new = self.bb.normalize(self._convert_call(value))
        var = binding.var
        if not isinstance(var, DataflowVar) and _dtype(new) != _dtype(var):
            new = self.bb.normalize(op.astype(self.bb.emit(new), _dtype(var)))  # keeps its dtype
        if _dtype(new) != _dtype(var):
            fresh = DataflowVar(var.name_hint, new.struct_info)
            self.var_remap[var] = fresh
            var = fresh
        self.bb.emit_normalized(VarBinding(var, new, span=binding.span))

    def _convert_call(self, call: Call) -> Expr:
        args = [self._remap(a) for a in call.args]
        done = getattr(call.attrs, "out_dtype", None) == self.accumulate
        if call.op in ALWAYS and done and all(_dtype(a) == LOW for a in args):
            return call  # converted already
        if call.op in ALWAYS and all(_dtype(a) in (LOW, HIGH) for a in args):
            args = [self._cast(a, LOW) for a in args]
            attrs = dataclasses.replace(call.attrs, out_dtype=self.accumulate)  # type: ignore[arg-type]
            acc = self.bb.emit(call.replace(args=tuple(args), attrs=attrs, struct_info_=None))
            return op.astype(acc, LOW)
        if call.op in NEVER or call.op is op.call_tir:
            args = [self._cast_back(a, orig) for a, orig in zip(args, call.args, strict=True)]
        elif any(_dtype(a) == LOW for a in _leaves(args)):
            args = [self._cast(a, LOW) for a in args]
        if all(a is b for a, b in zip(args, call.args, strict=True)):
            return call
        return call.replace(args=tuple(args), struct_info_=None)

    def _remap(self, arg: Any) -> Any:
        if isinstance(arg, Tuple):
            fields = tuple(self._remap(f) for f in arg.fields)
            same = all(a is b for a, b in zip(fields, arg.fields, strict=True))
            return arg if same else Tuple(fields, span=arg.span)
        return self.var_remap.get(arg, arg) if isinstance(arg, Var) else arg

    def _restore(self, value: Expr) -> Expr:
        """A non-op value (tuple, tuple item, call_tir...) sees every var in its old dtype."""
        renamer = _Restorer(self)
        return renamer.visit_expr(value)

    def _cast(self, arg: Any, dtype: str) -> Any:
        if isinstance(arg, Tuple):
            fields = tuple(self._cast(f, dtype) for f in arg.fields)
            return Tuple(fields, span=arg.span)
        if _dtype(arg) not in (LOW, HIGH) or _dtype(arg) == dtype:
            return arg
        if isinstance(arg, Constant):
            return Constant(arg.data.astype(dtype))
        key = (id(arg), dtype)
        if key not in self.casts:
            self.casts[key] = self.bb.emit(op.astype(arg, dtype))
        return self.casts[key]

    def _cast_back(self, arg: Any, original: Any) -> Any:
        if isinstance(arg, Tuple):
            pairs = zip(arg.fields, original.fields, strict=True)
            return Tuple(tuple(self._cast_back(a, o) for a, o in pairs), span=arg.span)
        want = _dtype(original)
        return self._cast(arg, want) if want is not None and _dtype(arg) != want else arg


class _Restorer(ExprMutator):
    def __init__(self, owner: _Converter) -> None:
        super().__init__()
        self.owner = owner

    def visit_var_(self, var: Var) -> Expr:
        new = self.owner.var_remap.get(var, var)
        return new if new is var else self.owner._cast_back(new, var)


def _leaves(args: list[Any]) -> list[Any]:
    out: list[Any] = []
    for a in args:
        out.extend(a.fields if isinstance(a, Tuple) else (a,))
    return out


def _is_always(binding: Binding) -> bool:
    value = getattr(binding, "value", None)
    return isinstance(value, Call) and value.op in ALWAYS
