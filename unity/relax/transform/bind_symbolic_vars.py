"""Replace shape symbols by values (constants or other expressions) everywhere in a function.

Before::

    @R.function
    def main(x: R.Tensor(("n", 4), "float32")):
        gv = R.reshape(x, R.shape([n * 4]))
        return gv

After ``BindSymbolicVars({"n": 2})``::

    @R.function
    def main(x: R.Tensor((2, 4), "float32")):
        gv = R.reshape(x, R.shape([8]))
        return gv

Symbols are named by string or given as sympy symbols; struct info of params,
bindings and results, shape values, prim values, `match_cast` targets and the
`sinfo_args` of calls (e.g. `call_tir` outputs) are all substituted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import Binding, Call, Expr, Function, MatchCast, PrimValue, ShapeExpr, Var
from unity.relax.expr_functor import ExprMutator
from unity.relax.struct_info import (
    FuncStructInfo, PrimStructInfo, ShapeStructInfo, StructInfo, TensorStructInfo,
    TupleStructInfo, as_dim, sym,
)  # fmt: skip

SymbolMap = Mapping[sympy.Symbol, sympy.Expr]


@dataclass(frozen=True)
class BindSymbolicVars(ModulePass):
    """Substitute `binding` (symbol or name -> value) in `func_name` (None: every function).

    Example:
        >>> BindSymbolicVars({"n": 2})(IRModule()).functions
        {}
    """

    binding: Mapping[str | sympy.Symbol, int | sympy.Expr] = field(default_factory=dict)
    func_name: str | None = None

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Substitute in the selected relax functions."""
        if self.func_name is not None and self.func_name not in mod:
            raise ValueError(f"BindSymbolicVars: no function {self.func_name!r} in the module")
        mapping = {_symbol(k): as_dim(v) for k, v in self.binding.items()}
        if not mapping:
            return mod
        target = mod[self.func_name] if self.func_name is not None else None

        def bind(func: Function) -> Function:
            if target is not None and func is not target:
                return func
            return substitute_symbols(func, mapping, mod)

        return mod.map_functions(Function, bind)


def _symbol(key: str | sympy.Symbol) -> sympy.Symbol:
    if isinstance(key, str):
        return sym(key)
    if isinstance(key, sympy.Symbol):
        return key
    raise TypeError(f"BindSymbolicVars: a symbol is named by a str or sympy.Symbol, not {key!r}")


def substitute_symbols(func: Function, mapping: SymbolMap, mod: IRModule | None = None) -> Function:
    """`func` with every shape symbol in `mapping` replaced (`func` itself if none occurs).

    Example:
        >>> substitute_symbols(func, {sym("n"): sympy.Integer(2)})  # doctest: +SKIP
    """
    return _Substituter(mapping, mod).visit_expr(func)


def substitute_sinfo(sinfo: StructInfo, mapping: SymbolMap) -> StructInfo:
    """`sinfo` with the symbols of `mapping` replaced (`sinfo` itself if none occurs).

    Example:
        >>> substitute_sinfo(TensorStructInfo(("n",), "f32"), {sym("n"): 2}).shape  # doctest: +SKIP
        (2,)
    """
    if isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None:
        shape = _dims(sinfo.shape, mapping)
        return sinfo if shape is sinfo.shape else sinfo.replace(shape=shape)
    if isinstance(sinfo, ShapeStructInfo) and sinfo.values is not None:
        values = _dims(sinfo.values, mapping)
        return sinfo if values is sinfo.values else sinfo.replace(values=values)
    if isinstance(sinfo, PrimStructInfo) and sinfo.value is not None:
        value = _dims((sinfo.value,), mapping)
        return sinfo if value[0] is sinfo.value else sinfo.replace(value=value[0])
    if isinstance(sinfo, TupleStructInfo):
        fields = tuple(substitute_sinfo(f, mapping) for f in sinfo.fields)
        same = all(a is b for a, b in zip(fields, sinfo.fields, strict=True))
        return sinfo if same else sinfo.replace(fields=fields)
    if isinstance(sinfo, FuncStructInfo) and sinfo.params is not None:
        params = tuple(substitute_sinfo(p, mapping) for p in sinfo.params)
        ret = substitute_sinfo(sinfo.ret, mapping)
        same = ret is sinfo.ret and all(a is b for a, b in zip(params, sinfo.params, strict=True))
        return sinfo if same else sinfo.replace(params=params, ret=ret)
    return sinfo


def _dims(dims: tuple[Any, ...], mapping: SymbolMap) -> tuple[Any, ...]:
    if not any(getattr(d, "free_symbols", set()) & mapping.keys() for d in dims):
        return dims
    return tuple(sympy.expand(sympy.sympify(d).subs(mapping)) for d in dims)


class _Substituter(ExprMutator):
    def __init__(self, mapping: SymbolMap, mod: IRModule | None) -> None:
        super().__init__(mod)
        self.mapping = mapping

    def rewrite_var_def(self, var: Var) -> Var:
        sinfo = var.struct_info_
        new = substitute_sinfo(sinfo, self.mapping) if sinfo is not None else None
        return var if new is sinfo else type(var)(var.name_hint, new, span=var.span)

    def visit_shape_expr_(self, expr: ShapeExpr) -> Expr:
        values = _dims(expr.values, self.mapping)
        return expr if values is expr.values else ShapeExpr(values, span=expr.span)

    def visit_prim_value_(self, expr: PrimValue) -> Expr:
        value = _dims((expr.value,), self.mapping)[0]
        return expr if value is expr.value else PrimValue(value, expr.dtype, span=expr.span)

    def visit_call_(self, expr: Call) -> Expr:
        call = super().visit_call_(expr)
        assert isinstance(call, Call)
        sinfo_args = tuple(substitute_sinfo(s, self.mapping) for s in call.sinfo_args)
        if all(a is b for a, b in zip(sinfo_args, call.sinfo_args, strict=True)):
            return call
        return self.refresh(call.replace(sinfo_args=sinfo_args))

    def visit_binding(self, binding: Binding) -> list[Binding]:
        if not isinstance(binding, MatchCast):
            return super().visit_binding(binding)
        value = self.visit_expr(binding.value)
        target = substitute_sinfo(binding.struct_info, self.mapping)
        return [binding.replace(var=self.visit_var_def(binding.var), value=value, struct_info=target)]

    def visit_function_(self, func: Function) -> Function:
        new = super().visit_function_(func)
        ret = substitute_sinfo(new.ret_struct_info, self.mapping)
        return new.replace(ret_struct_info=ret)


def check_bindable(name: str, sinfo: StructInfo, shape: tuple[int, ...], dtype: str,
                   where: Var) -> dict[sympy.Symbol, sympy.Expr]:  # fmt: skip
    """Match an array's `shape`/`dtype` against `sinfo`; return the symbols it fixes.

    Example:
        >>> check_bindable("w", TensorStructInfo(("n",), "float32"), (3,), "float32", w)  # doctest: +SKIP
        {n: 3}
    """
    if not isinstance(sinfo, TensorStructInfo):
        raise DiagnosticError(f"cannot bind an array to {name}: it is not a tensor", where)
    if sinfo.dtype not in ("void", dtype):
        raise DiagnosticError(f"cannot bind a {dtype} array to {name} of dtype {sinfo.dtype}", where)
    if sinfo.shape is None:
        return {}
    if len(sinfo.shape) != len(shape):
        msg = f"cannot bind an array of shape {shape} to {name} of rank {len(sinfo.shape)}"
        raise DiagnosticError(msg, where)
    out: dict[sympy.Symbol, sympy.Expr] = {}
    for dim, size in zip(sinfo.shape, shape, strict=True):
        if isinstance(dim, sympy.Symbol) and out.setdefault(dim, sympy.Integer(size)) == size:
            continue
        if not dim.is_number or int(dim) != size:
            msg = f"cannot bind an array of shape {shape} to {name}: dim {dim} is not {size}"
            raise DiagnosticError(msg, where)
    return out
