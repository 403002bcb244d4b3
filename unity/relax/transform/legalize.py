"""Lower high-level relax op calls to `call_tir`s of PrimFuncs made from TOPI computes.

Before::

    @R.function
    def main(x: R.Tensor((n, 4), "float32"), y: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv = R.add(x, y)
            gv = R.nn.relu(lv)
            R.output(gv)
        return gv

After ``LegalizeOps()``::

    @T.prim_func
    def add(x: T.Buffer((n, 4), "float32"), y: T.Buffer((4,), "float32"),
            T_add: T.Buffer((n, 4), "float32")): ...      # topi.add, n an int64 shape var

    @T.prim_func
    def relu(lv: T.Buffer((n, 4), "float32"), T_relu: T.Buffer((n, 4), "float32")): ...

    @R.function
    def main(x: R.Tensor((n, 4), "float32"), y: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv = R.call_tir(add, (x, y), out_sinfo=R.Tensor((n, 4), "float32"))
            gv = R.call_tir(relu, (lv,), out_sinfo=R.Tensor((n, 4), "float32"))
            R.output(gv)
        return gv

Each op's rule is its `legalize` attribute (see `legalize_ops/`); ops without one, and
calls on tensors of unknown shape, stay as they are.  Symbolic dims stay symbolic: the
PrimFunc binds them from its buffer shapes.  PrimFuncs that come out structurally equal
are merged into one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from unity.ir.module import GlobalVar, IRModule
from unity.ir.op import Op
from unity.ir.transform import ModulePass, PassContext
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Binding, Call, Expr, Function, LeafExpr, Tuple, VarBinding
from unity.relax.expr_functor import ExprMutator
from unity.relax.op.call_tir import call_tir
from unity.relax.struct_info import StructInfo, TensorStructInfo, TupleStructInfo
from unity.relax.transform import legalize_ops  # noqa: F401 - registers the rules
from unity.relax.transform.legalize_ops.common import LegalizeFn
from unity.relax.transform.prim_func_dedupe import first_equal
from unity.relax.utils import struct_info_equal
from unity.tir.function import PrimFunc


@dataclass(frozen=True)
class LegalizeOps(ModulePass):
    """Replace each op call that has a `legalize` rule by the `call_tir` the rule builds.

    Example:
        >>> LegalizeOps()(IRModule()).functions
        {}
    """

    customize_legalize_map: Mapping[Op, LegalizeFn] | None = field(default=None, hash=False)
    """Rules used instead of (or in addition to) the ops' own `legalize` attributes."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Legalize every relax function of `mod`, then merge duplicate PrimFuncs."""
        bb = BlockBuilder(mod)
        before = set(mod.functions)
        legalizer = _Legalizer(bb, dict(self.customize_legalize_map or {}))
        changed = {
            gv: legalizer.visit_expr(f)
            for gv, f in mod.functions.items()
            if isinstance(f, Function)
        }
        if all(changed[gv] is mod.functions[gv] for gv in changed):
            return mod
        out = bb.get()
        for gv, func in changed.items():
            out.update_func(gv, func)
        return _dedupe_prim_funcs(out, before)


class _Legalizer(ExprMutator):
    def __init__(self, bb: BlockBuilder, custom: dict[Op, LegalizeFn]) -> None:
        super().__init__()
        self.bb = bb
        self.custom = custom

    def visit_binding(self, binding: Binding) -> list[Binding]:
        if not isinstance(binding, VarBinding) or not isinstance(binding.value, Call):
            return super().visit_binding(binding)
        value = self.visit_expr(binding.value)
        rule = self._rule(value)
        if rule is None:
            return [binding.replace(value=value, var=self.visit_var_def(binding.var))]
        result = rule(self.bb, value)
        if result is value:  # the rule declined (e.g. an unsupported dtype)
            return [binding.replace(value=value, var=self.visit_var_def(binding.var))]
        prelude: list[Binding] = []
        result = self.bb.normalize(result)
        if _one_field(value.struct_info) and isinstance(result.struct_info, TensorStructInfo):
            result = self.bb.normalize(Tuple((result,)))  # a split into one part: still a tuple
        new = self._anf(result, prelude)
        new = _keep_inferred_sinfo(new, value.struct_info)
        var = binding.var
        if not struct_info_equal(var.struct_info, new.struct_info):
            var = type(var)(var.name_hint, new.struct_info, span=var.span)
            self.var_remap[binding.var] = var
        return [*prelude, VarBinding(var, new, span=binding.span)]

    def _rule(self, call: Call) -> LegalizeFn | None:
        if not isinstance(call.op, Op) or not _shapes_known(call):
            return None
        rule = self.custom.get(call.op)
        return rule if rule is not None else call.op.get_attr("legalize")

    def _anf(self, expr: Expr, prelude: list[Binding]) -> Expr:
        """Bind the non-leaf arguments and tuple fields of `expr` (a rule's result) first."""
        if isinstance(expr, Tuple):
            fields = tuple(self._anf_arg(f, prelude) for f in expr.fields)
            return (
                expr
                if all(a is b for a, b in zip(fields, expr.fields, strict=True))
                else Tuple(fields)
            )
        if isinstance(expr, Call):
            args = tuple(self._anf_arg(a, prelude) for a in expr.args)
            if not all(a is b for a, b in zip(args, expr.args, strict=True)):
                expr = expr.replace(args=args)
        return expr

    def _anf_arg(self, arg: Expr, prelude: list[Binding]) -> Expr:
        if isinstance(arg, LeafExpr | GlobalVar):
            return arg
        if isinstance(arg, Tuple):
            return self._anf(arg, prelude)
        value = self._anf(arg, prelude)
        var = self.fresh_var("lv", value.struct_info)
        prelude.append(VarBinding(var, value))
        return var


def _one_field(sinfo: object) -> bool:
    return isinstance(sinfo, TupleStructInfo) and len(sinfo.fields) == 1


def _keep_inferred_sinfo(new: Expr, inferred: StructInfo) -> Expr:
    """Give a `call_tir` the op's inferred struct info when both describe the same tensors.

    TOPI writes output dims in its own form (`h // 2 + 1` vs relax's `ceiling(h/2 - 1/2) + 1`),
    which sympy cannot always prove equal; keeping the op's form keeps the rest of the
    function's struct info unchanged.
    """
    if not isinstance(new, Call) or new.op is not call_tir or not _known(inferred):
        return new
    if not _compatible(inferred, new.struct_info) or new.sinfo_args[:1] == (inferred,):
        return new
    return new.replace(sinfo_args=(inferred, *new.sinfo_args[1:]), struct_info_=inferred)


def _compatible(a: StructInfo, b: StructInfo) -> bool:
    if isinstance(a, TensorStructInfo) and isinstance(b, TensorStructInfo):
        return a.dtype == b.dtype and a.ndim == b.ndim
    if isinstance(a, TupleStructInfo) and isinstance(b, TupleStructInfo):
        return len(a.fields) == len(b.fields) and all(
            _compatible(x, y) for x, y in zip(a.fields, b.fields, strict=True)
        )
    return False


def _shapes_known(call: Call) -> bool:
    """TE needs every tensor shape (symbols allowed); calls with unknown shapes stay."""
    infos = [call.struct_info, *(a.struct_info for a in call.args if isinstance(a, Expr))]
    return all(_known(s) for s in infos)


def _known(sinfo: StructInfo) -> bool:
    if isinstance(sinfo, TensorStructInfo):
        return sinfo.shape is not None
    if isinstance(sinfo, TupleStructInfo):
        return all(_known(f) for f in sinfo.fields)
    return True


def _dedupe_prim_funcs(mod: IRModule, keep: set[GlobalVar]) -> IRModule:
    """Merge each new PrimFunc into an earlier structurally equal one; repoint the calls."""
    order = sorted(mod.functions, key=lambda gv: (gv not in keep, gv.name_hint))
    prims = {gv: mod.functions[gv] for gv in order if isinstance(mod.functions[gv], PrimFunc)}
    same = first_equal(prims, lambda gv: gv not in keep)  # type: ignore[arg-type]
    alias = {gv: first for gv, first in same.items() if first is not gv}
    if not alias:
        return mod
    for gv in alias:
        mod.remove(gv)
    return mod.map_functions(Function, lambda f: _Repoint(alias).visit_expr(f))


class _Repoint(ExprMutator):
    def __init__(self, alias: dict[GlobalVar, GlobalVar]) -> None:
        super().__init__()
        self.alias = alias

    def visit_global_var_(self, gv: GlobalVar) -> GlobalVar:
        return self.alias.get(gv, gv)

    def _repoint(self, arg: object) -> object:
        return self.alias.get(arg, arg) if isinstance(arg, GlobalVar) else arg

    def visit_call_(self, expr: Call) -> Expr:
        new = super().visit_call_(expr)
        assert isinstance(new, Call)
        args = tuple(self._repoint(a) for a in new.args)
        if all(a is b for a, b in zip(args, new.args, strict=True)):
            return new
        return new.replace(args=args)
