"""A numpy reference evaluator for relax modules, for checking that passes keep results.

Ops run through their `fold` rules (plus a few numpy rules below for ops that have
none), `call_tir` through the TIR reference interpreter, calls of module functions
recursively.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy

from unity import tir
from unity.ir.module import GlobalVar, IRModule
from unity.relax import (
    Call, Constant, DataTypeImm, Function, If, MatchCast, PrimValue, SeqExpr, ShapeExpr,
    ShapeStructInfo, StringImm, TensorStructInfo, Tuple, TupleGetItem, TupleStructInfo, Var, op,
)  # fmt: skip
from unity.relax.op import fold_rules  # noqa: F401 - registers the fold rules
from unity.topi.testing import conv2d_python, conv2d_transpose_python


def _batch_norm(call: Call, x: np.ndarray, g: np.ndarray, b: np.ndarray, m: np.ndarray,
                v: np.ndarray) -> tuple[np.ndarray, ...]:  # fmt: skip
    attrs = call.attrs
    shape = [1] * x.ndim
    shape[attrs.axis % x.ndim] = -1  # type: ignore[union-attr]
    inv = g.reshape(shape) / np.sqrt(v.reshape(shape) + attrs.epsilon)  # type: ignore[union-attr]
    return ((x - m.reshape(shape)) * inv + b.reshape(shape)).astype(x.dtype), m, v


def _layer_norm(call: Call, x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    axes = tuple(a % x.ndim for a in call.attrs.axes)  # type: ignore[union-attr]
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return ((x - mean) / np.sqrt(var + call.attrs.epsilon) * g + b).astype(x.dtype)  # type: ignore[union-attr]


def _conv2d(call: Call, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    a = call.attrs
    assert (a.data_layout, a.kernel_layout) == ("NCHW", "OIHW")  # type: ignore[union-attr]
    return conv2d_python(x, w, a.strides, a.padding, a.dilation, a.groups)  # type: ignore[union-attr]


def _conv2d_transpose(call: Call, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    a = call.attrs
    assert (a.data_layout, a.kernel_layout) == ("NCHW", "IOHW")  # type: ignore[union-attr]
    return conv2d_transpose_python(x, w, a.strides, a.padding, a.output_padding, a.dilation,  # type: ignore[union-attr]
                                   a.groups)  # type: ignore[union-attr]  # fmt: skip


def _pad(call: Call, x: np.ndarray) -> np.ndarray:
    a = call.attrs
    widths = np.reshape(a.pad_width, (-1, 2))  # type: ignore[union-attr]
    assert a.pad_mode == "constant"  # type: ignore[union-attr]
    return np.pad(x, widths, constant_values=a.pad_value)  # type: ignore[union-attr]


EXTRA: dict[Any, Callable[..., Any]] = {
    op.nn.batch_norm: _batch_norm, op.nn.layer_norm: _layer_norm, op.nn.conv2d: _conv2d,
    op.nn.conv2d_transpose: _conv2d_transpose, op.nn.pad: _pad,
}  # fmt: skip


def evaluate(mod: IRModule, *inputs: Any, func: str = "main") -> Any:
    """Run relax function `func` of `mod` on numpy inputs."""
    return _Evaluator(mod).call(mod[func], list(inputs))


class _Evaluator:
    def __init__(self, mod: IRModule) -> None:
        self.mod = mod

    def call(self, func: Any, args: Sequence[Any], outer: dict[Any, Any] | None = None) -> Any:
        assert isinstance(func, Function)
        env: dict[Any, Any] = {**(outer or {}), **dict(zip(func.params, args, strict=True))}
        syms: dict[sympy.Symbol, int] = {}
        for p, a in zip(func.params, args, strict=True):
            _bind_symbols(p.struct_info, a, syms)
        return self.seq(func.body, env, syms)

    def seq(self, seq: SeqExpr, env: dict[Any, Any], syms: dict[sympy.Symbol, int]) -> Any:
        for block in seq.blocks:
            for b in block.bindings:
                value = self.expr(b.value, env, syms)  # type: ignore[attr-defined]
                if isinstance(b, MatchCast):
                    _bind_symbols(b.struct_info, value, syms)
                env[b.var] = value
        return self.expr(seq.body, env, syms)

    def expr(self, e: Any, env: dict[Any, Any], syms: dict[sympy.Symbol, int]) -> Any:
        if isinstance(e, Var):
            return env[e]
        if isinstance(e, Constant):
            return e.data
        if isinstance(e, ShapeExpr):
            return tuple(int(sympy.sympify(d).subs(syms)) for d in e.values)
        if isinstance(e, PrimValue):
            return sympy.sympify(e.value).subs(syms)
        if isinstance(e, StringImm | DataTypeImm):
            return e.value
        if isinstance(e, Tuple):
            return tuple(self.expr(f, env, syms) for f in e.fields)
        if isinstance(e, TupleGetItem):
            return self.expr(e.tuple_value, env, syms)[e.index]
        if isinstance(e, If):
            branch = e.true_branch if bool(self.expr(e.cond, env, syms)) else e.false_branch
            return self.seq(branch, env, syms)
        if isinstance(e, SeqExpr):
            return self.seq(e, env, syms)
        if isinstance(e, Function):
            return (e, dict(env))  # a closure
        assert isinstance(e, Call), f"cannot evaluate {type(e).__name__}"
        return self._call(e, env, syms)

    def _call(self, e: Call, env: dict[Any, Any], syms: dict[sympy.Symbol, int]) -> Any:
        if isinstance(e.op, GlobalVar):
            return self.call(self.mod[e.op], [self.expr(a, env, syms) for a in e.args])
        if isinstance(e.op, Var):
            fn, captured = env[e.op]
            return self.call(fn, [self.expr(a, env, syms) for a in e.args], captured)
        if e.op is op.call_tir:
            return self._call_tir(e, env, syms)
        args = [self.expr(a, env, syms) for a in e.args]
        rule = EXTRA.get(e.op) or e.op.get_attr("fold")
        assert rule is not None, f"no numpy rule for {e.op.name}"
        out = rule(e, *args)
        sinfo = e.struct_info
        if isinstance(sinfo, TensorStructInfo) and sinfo.dtype != "void":
            out = np.asarray(out).astype(sinfo.dtype)
        return out

    def _call_tir(self, e: Call, env: dict[Any, Any], syms: dict[sympy.Symbol, int]) -> Any:
        ins = self.expr(e.args[1], env, syms)
        sinfo = e.struct_info
        fields = sinfo.fields if isinstance(sinfo, TupleStructInfo) else (sinfo,)
        outs = [np.zeros(tuple(int(sympy.sympify(d).subs(syms)) for d in f.shape), f.dtype)
                for f in fields]  # fmt: skip
        scalars = list(self.expr(e.args[2], env, syms)) if len(e.args) > 2 else []
        tir.interpret(self.mod[e.args[0]], *ins, *outs, *scalars)  # type: ignore[arg-type]
        return tuple(outs) if isinstance(sinfo, TupleStructInfo) else outs[0]


def _bind_symbols(sinfo: Any, value: Any, syms: dict[sympy.Symbol, int]) -> None:
    dims, sizes = None, None
    if isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None:
        dims, sizes = sinfo.shape, np.shape(value)
    if isinstance(sinfo, ShapeStructInfo) and sinfo.values is not None:
        dims, sizes = sinfo.values, value
    for dim, size in zip(dims or (), sizes or (), strict=True):
        if isinstance(dim, sympy.Symbol) and dim not in syms:
            syms[dim] = int(size)
    if isinstance(sinfo, TupleStructInfo):
        for f, v in zip(sinfo.fields, value, strict=True):
            _bind_symbols(f, v, syms)
