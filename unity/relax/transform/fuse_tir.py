"""Turn each fused relax function (attr ``Primitive``) into one PrimFunc called by `call_tir`.

Before (after ``FuseOps()``)::

    @R.function(private=True)
    def fused_add_relu(x: R.Tensor((n, 4), "float32"), b: R.Tensor((4,), "float32")):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, b), out_sinfo=R.Tensor((n, 4), "float32"))
            gv = R.call_tir(cls.relu, (lv,), out_sinfo=R.Tensor((n, 4), "float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((n, 4), "float32"), b: R.Tensor((4,), "float32")):
        with R.dataflow():
            gv = cls.fused_add_relu(x, b)
            R.output(gv)
        return gv

After ``FuseTIR()``::

    @T.prim_func
    def fused_add_relu(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
                       b: T.Buffer((T.int64(4),), "float32"),
                       T_relu: T.Buffer((T.int64("n"), T.int64(4)), "float32")):
        T.func_attr({"tir.noalias": True})
        T_add = T.alloc_buffer((n, T.int64(4)))
        for i0, i1 in T.grid(n, T.int64(4)):
            with T.block("T_add"):
                ...
                T_add[v_i0, v_i1] = x[v_i0, v_i1] + b[v_i1]
        for i0, i1 in T.grid(n, T.int64(4)):
            with T.block("T_relu"):
                ...
                T_relu[v_i0, v_i1] = T.max(T_add[v_i0, v_i1], T.float32(0.0))

    @R.function
    def main(x: R.Tensor((n, 4), "float32"), b: R.Tensor((4,), "float32")):
        with R.dataflow():
            gv = R.call_tir(cls.fused_add_relu, (x, b), out_sinfo=R.Tensor((n, 4), "float32"))
            R.output(gv)
        return gv

The PrimFuncs of a group are inlined one after another (loop, block and buffer variables
renewed, symbolic shapes mapped onto the fused parameters' shapes); tensors passed between
them become `alloc_buffers` of the root block.  Shape symbols that no parameter has as a
whole dim (those of a `FuseOps` ``R.Shape`` parameter, or of ``batch * seq`` rows) become
trailing scalar parameters, which the caller passes as `tir_vars`.  PrimFuncs no longer
called are removed.
Groups that fuse to structurally equal PrimFuncs (the repeated blocks of a ResNet) share
the first one, as TVM's `BlockBuilder.add_func` does, so each is scheduled, lowered and
compiled once.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import GlobalVar, IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import Call, Expr, Function, ShapeExpr, Tuple, TupleGetItem, Var
from unity.relax.expr_functor import ExprMutator, ExprVisitor
from unity.relax.op.call_tir import call_tir
from unity.relax.struct_info import ShapeStructInfo, TensorStructInfo, TupleStructInfo
from unity.relax.transform.fuse_tir_inline import FusedPrimFuncBuilder
from unity.relax.transform.prim_func_dedupe import first_equal
from unity.tir.function import PrimFunc


@dataclass(frozen=True)
class FuseTIR(ModulePass):
    """Replace each call of a ``Primitive`` relax function by a `call_tir` of one PrimFunc.

    Example:
        >>> FuseTIR()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Return the module with fused PrimFuncs (`mod` itself when nothing is fused)."""
        fused = {gv: f for gv, f in mod.items() if _is_primitive(f)}
        if not fused:
            return mod
        made = {gv: fuse_primitive_function(f, mod) for gv, f in fused.items()}  # type: ignore[arg-type]
        prims = {gv: prim for gv, (prim, _) in made.items()}
        same = first_equal(prims)
        rewriter = _CallRewriter({gv: extra for gv, (_, extra) in made.items()}, same)
        out = IRModule(attrs=mod.attrs)
        for gv, func in mod.items():
            if gv in prims:
                if same[gv] is gv:
                    out.update_func(gv, prims[gv])
            elif isinstance(func, Function):
                out.update_func(gv, rewriter.visit_expr(func))
            else:
                out.update_func(gv, func)
        _remove_unused_prim_funcs(out, _called_by(fused.values()))
        return out


def _is_primitive(func: object) -> bool:
    return isinstance(func, Function) and bool(func.attrs.get("Primitive"))


def fuse_primitive_function(func: Function, mod: IRModule) -> tuple[PrimFunc, tuple[sympy.Symbol, ...]]:
    """Build the one PrimFunc that computes the fused relax function `func`.

    Returns the PrimFunc and the shape symbols it takes as trailing scalar parameters
    (those that no parameter's shape defines; usually none).

    Raises:
        DiagnosticError: `func` holds something other than `call_tir`s of module PrimFuncs,
            tuples and tuple items, or a parameter that is not a tensor of known shape.

    Example:
        >>> prim, extra = fuse_primitive_function(mod["fused_add_relu"], mod)  # doctest: +SKIP
    """
    builder = FusedPrimFuncBuilder()
    env: dict[Var, object] = {}
    for param in func.params:
        if isinstance(param.struct_info, ShapeStructInfo):
            continue  # it only defines symbols (`FuseOps`): they become scalar parameters
        env[param] = builder.add_param(param.name_hint, _tensor_sinfo(param))
    for block in func.body.blocks:
        for binding in block.bindings:
            env[binding.var] = _eval_binding(builder, env, binding.value, mod)  # type: ignore[attr-defined]
    results = _flatten(_lookup(env, func.body.body))
    return builder.finish(results, node=func)


def _eval_binding(builder: FusedPrimFuncBuilder, env: dict[Var, object], value: Expr,
                  mod: IRModule) -> object:  # fmt: skip
    """The buffer (or tuple of buffers) that `value` stands for in the fused PrimFunc."""
    if isinstance(value, Tuple | Var | TupleGetItem):
        return _lookup(env, value)
    if not isinstance(value, Call) or value.op is not call_tir:
        raise DiagnosticError("FuseTIR: a fused function may only call call_tir", value)
    gvar, args = value.args[0], value.args[1]
    prim = mod[gvar] if isinstance(gvar, GlobalVar) and gvar in mod else None
    if not isinstance(prim, PrimFunc):
        raise DiagnosticError("FuseTIR: call_tir of something that is not a module PrimFunc", value)
    inputs = _flatten(_lookup(env, args))
    out_sinfo = value.sinfo_args[0]
    fields = out_sinfo.fields if isinstance(out_sinfo, TupleStructInfo) else (out_sinfo,)
    tir_vars = value.args[2].values if len(value.args) > 2 else ()  # type: ignore[attr-defined]
    outputs = builder.inline(prim, inputs, [_tensor_sinfo_of(f, value) for f in fields],
                             tir_vars, node=value)  # fmt: skip
    return tuple(outputs) if isinstance(out_sinfo, TupleStructInfo) else outputs[0]


def _lookup(env: dict[Var, object], expr: Expr) -> object:
    if isinstance(expr, Var):
        if expr not in env:
            raise DiagnosticError(f"FuseTIR: {expr.name_hint} is not a tensor of the group", expr)
        return env[expr]
    if isinstance(expr, Tuple):
        return tuple(_lookup(env, f) for f in expr.fields)
    if isinstance(expr, TupleGetItem):
        return _lookup(env, expr.tuple_value)[expr.index]  # type: ignore[index]  # a tuple
    raise DiagnosticError(f"FuseTIR: cannot use a {type(expr).__name__} in a fused function", expr)


def _flatten(value: object) -> list[object]:
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _flatten(item)]  # type: ignore[union-attr]
    return [value]


def _tensor_sinfo(param: Var) -> TensorStructInfo:
    return _tensor_sinfo_of(param.struct_info, param)


def _tensor_sinfo_of(sinfo: object, node: object) -> TensorStructInfo:
    if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None or sinfo.dtype == "void":
        raise DiagnosticError("FuseTIR: expected a tensor of known shape and dtype", node)
    return sinfo


class _CallRewriter(ExprMutator):
    """``fused(args)`` -> ``R.call_tir(fused, args, out_sinfo)``."""

    def __init__(
        self,
        extra_symbols: dict[GlobalVar, tuple[sympy.Symbol, ...]],
        same: dict[GlobalVar, GlobalVar],
    ) -> None:
        super().__init__()
        self.extra_symbols = extra_symbols
        self.same = same
        """A fused GlobalVar -> the one holding its PrimFunc (itself unless a duplicate)."""

    def visit_call_(self, expr: Call) -> Expr:
        call = super().visit_call_(expr)
        assert isinstance(call, Call)
        if not isinstance(call.op, GlobalVar) or call.op not in self.extra_symbols:
            return call
        ret = call.struct_info
        outs = ret.fields if isinstance(ret, TupleStructInfo) else (ret,)
        extra = self.extra_symbols[call.op]
        tir_vars = ShapeExpr(extra) if extra else None
        tensors = [a for a in call.args if not isinstance(a.struct_info, ShapeStructInfo)]
        new = call_tir(self.same[call.op], tensors, list(outs), tir_vars=tir_vars)
        return new.replace(struct_info_=ret, span=call.span)


def _called_by(funcs: object) -> set[GlobalVar]:
    """The GlobalVars that relax functions `funcs` refer to."""
    found: set[GlobalVar] = set()

    class _Refs(ExprVisitor):
        def visit_call_(self, expr: Call) -> None:
            for x in (expr.op, *expr.args):
                if isinstance(x, GlobalVar):
                    found.add(x)
            super().visit_call_(expr)

    for func in funcs:  # type: ignore[attr-defined]  # an iterable of functions
        _Refs().visit_expr(func)
    return found


def _remove_unused_prim_funcs(mod: IRModule, candidates: set[GlobalVar]) -> None:
    still_used = _called_by(f for f in mod.functions.values() if isinstance(f, Function))
    for gv in candidates - still_used:
        if gv in mod and isinstance(mod[gv], PrimFunc):
            mod.remove(gv)
