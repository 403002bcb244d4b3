"""Group the bindings each pattern matches into a composite function (the offload hook).

Before (pattern ``"dnnl.conv2d_relu"`` = ``relu(conv2d(wildcard(), wildcard()))``)::

    @R.function
    def main(x: R.Tensor((1, 3, 8, 8), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
        with R.dataflow():
            lv = R.nn.conv2d(x, w)
            gv = R.nn.relu(lv)
            R.output(gv)
        return gv

After ``FuseOpsByPattern([("dnnl.conv2d_relu", pattern)])``::

    @R.function(private=True)
    def fused_dnnl_conv2d_relu(x, w):       # attrs: Composite="dnnl.conv2d_relu", Primitive
        with R.dataflow():
            lv = R.nn.conv2d(x, w)
            gv = R.nn.relu(lv)
            R.output(gv)
        return gv

    @R.function
    def main(x, w):
        with R.dataflow():
            gv = fused_dnnl_conv2d_relu(x, w)
            R.output(gv)
        return gv

Patterns earlier in the list win; bindings are visited last to first, so a match
claims the largest chain ending at its root. A match is skipped when one of its
inner results is used outside the match, when a binding is already grouped, or when
its `check` says no. Constants stay inside the composite function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.block_builder import BlockBuilder
from unity.relax.dpl.matcher import Match, match_expr
from unity.relax.dpl.pattern import DFPattern
from unity.relax.dpl.rewrite import get_var2val
from unity.relax.expr import (
    BindingBlock, Call, DataflowBlock, Expr, Function, Var, VarBinding,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator, VarRenamer
from unity.relax.transform.dead_code_elimination import used_vars


@dataclass(frozen=True)
class FusionPattern:
    """A named pattern; `check(match, bindings)` may veto a match.

    Example:
        >>> FusionPattern("cpu.relu", is_op("relax.nn.relu")(wildcard())).name  # doctest: +SKIP
        'cpu.relu'
    """

    name: str
    pattern: DFPattern
    check: Callable[[dict[DFPattern, Any], dict[Var, Expr]], bool] | None = None


@dataclass(frozen=True)
class FuseOpsByPattern(ModulePass):
    """Outline each match of `patterns` into a function with attribute ``Composite``.

    Example:
        >>> FuseOpsByPattern([])(IRModule()).functions
        {}
    """

    patterns: Sequence[FusionPattern | tuple[str, DFPattern]] = field(default_factory=list)
    annotate_codegen: bool = False
    """Wrap each composite function (as a local function) in a function with attribute
    ``Codegen`` = the pattern name's prefix before the first dot (``"dnnl"``)."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Fuse matches in every relax function that is not itself composite."""
        pats = [_as_fusion_pattern(p) for p in self.patterns]
        if not pats:
            return mod
        out = mod.copy()
        changed = False
        for gv, func in mod.items():
            if isinstance(func, Function) and "Composite" not in func.attrs:
                new = _Fuser(out, pats, func, self.annotate_codegen).run()
                if new is not func:
                    out.update_func(gv, new)
                    changed = True
        return out if changed else mod


def _as_fusion_pattern(item: object) -> FusionPattern:
    if isinstance(item, FusionPattern):
        return item
    if isinstance(item, tuple) and len(item) in (2, 3) and isinstance(item[0], str) \
            and isinstance(item[1], DFPattern):  # fmt: skip
        return FusionPattern(*item)
    raise TypeError(f"FuseOpsByPattern: expected a FusionPattern or (name, pattern), got {item!r}")


class _Fuser:
    def __init__(self, mod: IRModule, pats: list[FusionPattern], func: Function,
                 annotate: bool) -> None:  # fmt: skip
        self.mod, self.pats, self.func, self.annotate = mod, pats, func, annotate
        self.var2val = get_var2val(func)
        self.users = _users(func)

    def run(self) -> Function:
        replaced: dict[Var, Expr] = {}
        removed: set[Var] = set()
        for block in self.func.body.blocks:
            if isinstance(block, DataflowBlock):
                self._fuse_block(block, replaced, removed)
        if not replaced:
            return self.func
        return _Replace(replaced, removed).visit_expr(self.func)

    def _fuse_block(self, block: BindingBlock, replaced: dict[Var, Expr], removed: set[Var]) -> None:
        local = {b.var: b for b in block.bindings if isinstance(b, VarBinding)}
        for b in reversed(block.bindings):
            if not isinstance(b, VarBinding) or b.var in removed or b.var in replaced:
                continue
            for fp in self.pats:
                group = self._group(fp, b, local, removed | set(replaced))
                if group is not None:
                    replaced[b.var] = self._outline(fp, group)
                    removed.update(v.var for v in group[:-1])
                    break

    def _group(self, fp: FusionPattern, root: VarBinding, local: dict[Var, VarBinding],
               taken: set[Var]) -> list[VarBinding] | None:  # fmt: skip
        found: Match | None = match_expr(fp.pattern, root.value, self.var2val)
        if found is None:
            return None
        inner = set(found.vars.values())
        if not inner <= local.keys() or inner & taken:
            return None
        members = inner | {root.var}
        if any(not self.users.get(v, set()) <= members for v in inner):
            return None  # an inner result is used outside the match
        if fp.check is not None and not fp.check(dict(found.exprs), dict(self.var2val)):
            return None
        return [b for v, b in local.items() if v in members]  # block order, root last

    def _outline(self, fp: FusionPattern, group: list[VarBinding]) -> Expr:
        members = {b.var for b in group}
        inputs: list[Var] = []
        for b in group:
            inputs.extend(v for v in _ordered_uses(b.value) if v not in members and v not in inputs)
        params = [Var(v.name_hint, v.struct_info) for v in inputs]
        bb = BlockBuilder(self.mod)
        name = "fused_" + fp.name.replace(".", "_")
        with bb.function(name, params, attrs={"Composite": fp.name, "Primitive": True}):
            renamer = VarRenamer(dict(zip(inputs, params, strict=True)))
            with bb.dataflow():
                out: Var | None = None
                for b in group:
                    value = renamer.visit_expr(b.value)
                    emit = bb.emit_output if b is group[-1] else bb.emit
                    out = emit(value, b.var.name_hint)
                    renamer.var_remap[b.var] = out
            bb.emit_func_output(out)  # type: ignore[arg-type]  # the loop ran
        composite = bb.get()[name].without_attr("global_symbol")
        assert isinstance(composite, Function)
        if self.annotate:
            composite = _codegen_wrapper(composite, fp.name, self.mod)
        gv = self.mod.add(name, composite)
        if self.annotate:  # an external codegen sees it under its module name
            self.mod.update_func(gv, composite.with_attr("global_symbol", gv.name_hint))
        return Call(gv, tuple(inputs), struct_info_=group[-1].var.struct_info)


def _codegen_wrapper(composite: Function, pattern_name: str, mod: IRModule) -> Function:
    """``def f(params): local = <composite>; return local(params)``, marked for `Codegen`."""
    params = [Var(p.name_hint, p.struct_info) for p in composite.params]
    bb = BlockBuilder(mod)
    codegen = pattern_name.split(".", 1)[0]
    with bb.function("wrapper", params, attrs={"Codegen": codegen}):
        local = Var("local_func", composite.struct_info)
        bb.emit_normalized(VarBinding(local, composite))
        out = bb.emit(Call(local, tuple(params), struct_info_=composite.ret_struct_info))
        bb.emit_func_output(out)
    wrapper = bb.get()["wrapper"]
    assert isinstance(wrapper, Function)
    return wrapper


def _ordered_uses(expr: Expr) -> list[Var]:
    collector = _OrderedUses()
    collector.visit_expr(expr)
    return collector.order


class _OrderedUses(ExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.order: list[Var] = []

    def visit_var_(self, var: Var) -> Expr:
        if var not in self.order:
            self.order.append(var)
        return var



def _users(func: Function) -> dict[Var, set[Var | None]]:
    """Var -> the vars whose bound values use it (None: used by a function result)."""
    users: dict[Var, set[Var | None]] = {}
    for var, value in get_var2val(func).items():
        for used in used_vars(value):
            users.setdefault(used, set()).add(var)
    for used in used_vars(func.body.body):
        users.setdefault(used, set()).add(None)
    return users


class _Replace(ExprMutator):
    def __init__(self, replaced: dict[Var, Expr], removed: set[Var]) -> None:
        super().__init__()
        self.replaced, self.removed = replaced, removed

    def visit_binding(self, binding: Any) -> list[Any]:
        if binding.var in self.removed:
            return []
        if binding.var in self.replaced:
            return [VarBinding(binding.var, self.replaced[binding.var], span=binding.span)]
        return super().visit_binding(binding)
