"""Struct-info inference for one expression whose sub-expressions are already normalized.

Calls of ops use the op's `infer` rule; calls of module functions return the
callee's result struct info with its shape symbols bound from the arguments.

Example:
    >>> from unity.relax import op
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 4), "float32"))
    >>> infer_struct_info(op.exp(x)).shape
    (n, 4)
"""

from __future__ import annotations

import sympy

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import GlobalVar, IRModule
from unity.ir.op import Op
from unity.relax.expr import Call, Expr, Function, If, SeqExpr, Tuple, TupleGetItem
from unity.relax.struct_info import (
    FuncStructInfo, ObjectStructInfo, PrimStructInfo, ShapeStructInfo, StructInfo,
    TensorStructInfo, TupleStructInfo,
)  # fmt: skip
from unity.relax.utils import struct_info_equal


def infer_struct_info(expr: Expr, mod: IRModule | None = None) -> StructInfo:
    """The struct info of `expr`, given struct info on its children.

    Example:
        >>> infer_struct_info(Tuple((x, x))).fields[0] is x.struct_info  # doctest: +SKIP
        True
    """
    if isinstance(expr, Call):
        return _infer_call(expr, mod)
    if isinstance(expr, Tuple):
        return TupleStructInfo(tuple(f.struct_info for f in expr.fields))
    if isinstance(expr, TupleGetItem):
        return _infer_get_item(expr)
    if isinstance(expr, SeqExpr):
        return expr.body.struct_info
    if isinstance(expr, If):
        return _infer_if(expr)
    return expr.struct_info


def _infer_get_item(expr: TupleGetItem) -> StructInfo:
    sinfo = expr.tuple_value.struct_info
    if isinstance(sinfo, ObjectStructInfo):
        return ObjectStructInfo()
    if not isinstance(sinfo, TupleStructInfo):
        raise DiagnosticError(f"cannot index a {type(sinfo).__name__} as a tuple", expr)
    if not 0 <= expr.index < len(sinfo.fields):
        msg = f"tuple index {expr.index} is out of range for a tuple of {len(sinfo.fields)} fields"
        raise DiagnosticError(msg, expr)
    return sinfo.fields[expr.index]


def _infer_if(expr: If) -> StructInfo:
    cond = expr.cond.struct_info
    if isinstance(cond, TensorStructInfo) and cond.ndim not in (-1, 0):
        raise DiagnosticError(f"If condition must be a scalar, got rank {cond.ndim}", expr)
    t, f = expr.true_branch.struct_info, expr.false_branch.struct_info
    if struct_info_equal(t, f):
        return t
    if isinstance(t, TensorStructInfo) and isinstance(f, TensorStructInfo):
        dtype = t.dtype if t.dtype == f.dtype else "void"
        return TensorStructInfo(None, dtype, t.ndim if t.ndim == f.ndim else -1)
    return ObjectStructInfo()


def _infer_call(call: Call, mod: IRModule | None) -> StructInfo:
    if isinstance(call.op, Op):
        infer = call.op.get_attr("infer")
        if infer is None:
            raise DiagnosticError(f"operator {call.op.name} has no struct-info rule", call)
        return infer(call)
    if isinstance(call.op, GlobalVar):
        func = mod.functions.get(call.op) if mod is not None else None
        if isinstance(func, Function):
            return _bind_result(call, func.struct_info)
        if call.sinfo_args:
            return call.sinfo_args[0]
        name = call.op.name_hint
        raise DiagnosticError(f"call of @{name}: no relax function of that name in the module", call)
    sinfo = call.op.struct_info
    if call.sinfo_args:
        return call.sinfo_args[0]
    if isinstance(sinfo, FuncStructInfo):
        return _bind_result(call, sinfo)
    return ObjectStructInfo()


def _bind_result(call: Call, sinfo: FuncStructInfo) -> StructInfo:
    if sinfo.params is None:
        return sinfo.ret
    if len(sinfo.params) != len(call.args):
        got, want = len(call.args), len(sinfo.params)
        raise DiagnosticError(f"function call passes {got} arguments, expected {want}", call)
    binding: dict[sympy.Symbol, sympy.Expr] = {}
    for param, arg in zip(sinfo.params, call.args, strict=True):
        _match(param, arg.struct_info, binding)
    return substitute_struct_info(sinfo.ret, binding) if binding else sinfo.ret


def _match(param: StructInfo, arg: StructInfo, binding: dict[sympy.Symbol, sympy.Expr]) -> None:
    dims: tuple[tuple[sympy.Expr, ...] | None, tuple[sympy.Expr, ...] | None] = (None, None)
    if isinstance(param, TensorStructInfo) and isinstance(arg, TensorStructInfo):
        dims = (param.shape, arg.shape)
    elif isinstance(param, ShapeStructInfo) and isinstance(arg, ShapeStructInfo):
        dims = (param.values, arg.values)
    elif isinstance(param, TupleStructInfo) and isinstance(arg, TupleStructInfo):
        for p, a in zip(param.fields, arg.fields, strict=False):
            _match(p, a, binding)
    if dims[0] is None or dims[1] is None or len(dims[0]) != len(dims[1]):
        return
    for p, a in zip(dims[0], dims[1], strict=True):
        if isinstance(p, sympy.Symbol) and p not in binding:
            binding[p] = a


def substitute_struct_info(sinfo: StructInfo, binding: dict[sympy.Symbol, sympy.Expr]) -> StructInfo:
    """Replace shape symbols in `sinfo` by the expressions in `binding`.

    Example:
        >>> from unity.relax.struct_info import sym
        >>> s = TensorStructInfo(("n",), "float32")
        >>> substitute_struct_info(s, {sym("n"): sym("m") * 2}).shape
        (2*m,)
    """

    def sub(dims: tuple[sympy.Expr, ...]) -> tuple[sympy.Expr, ...]:
        return tuple(sympy.sympify(d).xreplace(binding) for d in dims)

    if isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None:
        return TensorStructInfo(sub(sinfo.shape), sinfo.dtype)
    if isinstance(sinfo, ShapeStructInfo) and sinfo.values is not None:
        return ShapeStructInfo(sub(sinfo.values))
    if isinstance(sinfo, PrimStructInfo) and sinfo.value is not None:
        return PrimStructInfo(sinfo.dtype, sub((sinfo.value,))[0])
    if isinstance(sinfo, TupleStructInfo):
        return TupleStructInfo(tuple(substitute_struct_info(f, binding) for f in sinfo.fields))
    return sinfo
