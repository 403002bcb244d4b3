"""Group `call_tir`s into fused relax functions, with TVM's dominator-based rules.

Before (after ``AnnotateTIROpPattern()``; `matmul` is out-elemwise-fusable, `add`
broadcast, `relu` elementwise)::

    @R.function
    def main(x: R.Tensor((n, 4), "float32"), w: R.Tensor((4, 4), "float32"),
             b: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((n, 4), "float32"))
            lv1 = R.call_tir(cls.add, (lv, b), out_sinfo=R.Tensor((n, 4), "float32"))
            gv = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((n, 4), "float32"))
            R.output(gv)
        return gv

After ``FuseOps()``::

    @R.function(private=True)
    def fused_matmul_add_relu(x: R.Tensor((n, 4), "float32"), w: R.Tensor((4, 4), "float32"),
                              b: R.Tensor((4,), "float32")):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((n, 4), "float32"))
            lv1 = R.call_tir(cls.add, (lv, b), out_sinfo=R.Tensor((n, 4), "float32"))
            gv = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((n, 4), "float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((n, 4), "float32"), w: R.Tensor((4, 4), "float32"),
             b: R.Tensor((4,), "float32")):
        with R.dataflow():
            gv = cls.fused_matmul_add_relu(x, w, b)
            R.output(gv)
        return gv

An injective chain whose only consumer is a conv that reads it through its padding
copy (a channel shuffle before a padded depthwise conv) joins the conv's group, so the
shuffle is computed inside the copy.  Only dataflow blocks are fused; a group of one
binding stays as it is.  The PrimFuncs are left in the module: `FuseTIR` merges each
fused function into one PrimFunc.  Values from outside a group (parameters, other
bindings, constants) become parameters of its function; a group with several values
used outside returns a tuple.  A group that uses shape symbols no input has as a whole
dim (``ones((batch,))`` reads no tensor; ``(batch * seq, 16)`` rows define neither) takes
them in a trailing ``symbols: R.Shape([batch, seq])`` parameter, so that the function
can run on its own; `FuseTIR` passes them to the kernel as scalars.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from unity.ir.module import GlobalVar, IRModule
from unity.ir.pass_context import register_config
from unity.ir.transform import ModulePass, PassContext
from unity.relax.analysis.fusion_graph import called_prim_func, create_fusion_graph
from unity.relax.analysis.graph_partitioner import Group, partition_graph
from unity.relax.expr import (
    Binding, BindingBlock, Call, Constant, DataflowBlock, DataflowVar, Expr, Function, SeqExpr,
    ShapeExpr, Tuple, TupleGetItem, Var, VarBinding,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator
from unity.relax.op.call_tir import call_tir
from unity.relax.struct_info import TensorStructInfo, TupleStructInfo
from unity.relax.utils import free_symbols

register_config("relax.FuseOps.max_depth", int, 256)


@dataclass(frozen=True)
class FuseOps(ModulePass):
    """Fuse chains of `call_tir`s into functions marked ``Primitive``.

    Example:
        >>> FuseOps()(IRModule()).functions
        {}
    """

    fuse_opt_level: int = -1
    """Fusion happens above level 0; -1 takes the level of the current `PassContext`."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Return `mod` with fused functions added (`mod` itself when nothing fuses)."""
        level = ctx.opt_level if self.fuse_opt_level == -1 else self.fuse_opt_level
        if level <= 0:
            return mod
        max_depth = int(ctx.get_config("relax.FuseOps.max_depth"))
        out = mod.copy()
        changed = False
        for gv, func in mod.items():
            if not isinstance(func, Function) or func.attrs.get("Primitive"):
                continue
            new = _fuse_function(func, mod, out, max_depth)
            if new is not func:
                out.update_func(gv, new)
                changed = True
        return out if changed else mod


def _fuse_function(func: Function, mod: IRModule, out: IRModule, max_depth: int) -> Function:
    blocks = tuple(
        _fuse_block(b, mod, out, max_depth) if isinstance(b, DataflowBlock) else b
        for b in func.body.blocks
    )
    if all(a is b for a, b in zip(blocks, func.body.blocks, strict=True)):
        return func
    return func.replace(body=SeqExpr(blocks, func.body.body, span=func.body.span))


def _fuse_block(block: DataflowBlock, mod: IRModule, out: IRModule, max_depth: int) -> BindingBlock:
    graph = create_fusion_graph(block, mod)
    groups = partition_graph(graph, max_depth)
    group_of: dict[Binding, Group] = {}
    for node, group in zip(graph.nodes, groups, strict=True):
        if isinstance(node.ref, Binding):
            group_of[node.ref] = group.find_root()
    defining = {b.var: b for b in block.bindings}
    members: dict[int, list[Binding]] = {}
    for binding in block.bindings:
        if not _reads_tuple_of_other_group(binding, defining, group_of):
            members.setdefault(id(group_of[binding]), []).append(binding)
    fused = {k: v for k, v in members.items() if len(v) > 1}
    if not fused:
        return block
    bindings: list[Binding] = []
    for binding in block.bindings:
        group = fused.get(id(group_of[binding]))
        if group is None or binding not in group:
            bindings.append(binding)
        elif binding is group[-1]:
            bindings.extend(_emit_group(group, block, mod, out))
    return block.replace(bindings=tuple(bindings))


def _reads_tuple_of_other_group(binding: Binding, defining: dict[Var, Binding],
                                group_of: dict[Binding, Group]) -> bool:  # fmt: skip
    """A tuple item whose tuple comes from outside its group stays out of the group, so that
    fused functions only take tensors (`FuseTIR` makes one buffer per parameter)."""
    value = binding.value  # type: ignore[attr-defined]  # both binding kinds have it
    if not isinstance(value, TupleGetItem):
        return False
    producer = defining.get(value.tuple_value)  # type: ignore[arg-type]  # None for non-vars
    return producer is None or group_of[producer] is not group_of[binding]


def _emit_group(group: list[Binding], block: DataflowBlock, mod: IRModule,
                out: IRModule) -> list[Binding]:  # fmt: skip
    """Make the group's function; return the bindings that call it in place of the group."""
    inside = {b.var for b in group}
    params = _group_inputs(group, inside)
    symbols = _undefined_symbols(group, params)
    if symbols:  # a shape argument defines them (`FuseTIR` passes them as scalars)
        params.append(ShapeExpr(symbols))
    outputs = _group_outputs(group, block)
    func = _make_function(group, params, outputs)
    gv = out.add(_group_name(group, mod), func)
    call = Call(gv, tuple(params), struct_info_=func.ret_struct_info)
    if len(outputs) == 1:
        return [VarBinding(outputs[0], call)]
    tup = DataflowVar(f"{outputs[0].name_hint}_tuple", func.ret_struct_info)
    items: list[Binding] = [VarBinding(tup, call)]
    for k, var in enumerate(outputs):
        items.append(VarBinding(var, TupleGetItem(tup, k, struct_info_=var.struct_info)))
    return items


def _group_inputs(group: list[Binding], inside: set[Var]) -> list[Expr]:
    """Vars and constants the group reads but does not define, in first-use order."""
    seen: dict[int, Expr] = {}

    def walk(expr: object) -> None:
        if isinstance(expr, Var | Constant):
            if expr not in inside:
                seen.setdefault(id(expr), expr)
        elif isinstance(expr, Tuple):
            for f in expr.fields:
                walk(f)
        elif isinstance(expr, TupleGetItem):
            walk(expr.tuple_value)
        elif isinstance(expr, Call):
            for a in expr.args:
                walk(a)

    for binding in group:
        walk(binding.value)  # type: ignore[attr-defined]  # fused bindings are VarBindings
    return list(seen.values())


def _undefined_symbols(group: list[Binding], inputs: list[Expr]) -> tuple[sympy.Symbol, ...]:
    """Shape symbols the group's bindings use (in their shapes or `tir_vars`) that no
    input has as a whole dim (``ones((batch,))`` reads no tensor; ``(batch * seq, 16)``
    rows define neither symbol), sorted by name."""
    defined: set[object] = set()
    for value in inputs:
        sinfo = value.struct_info
        if isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None:
            defined.update(d for d in sinfo.shape if isinstance(d, sympy.Symbol))
    used: set[sympy.Symbol] = set()
    for binding in group:
        used |= free_symbols(binding.var.struct_info)
        value = binding.value  # type: ignore[attr-defined]  # fused bindings are VarBindings
        if isinstance(value, Call) and value.op is call_tir and len(value.args) > 2:
            used |= free_symbols(value.args[2].struct_info)
    return tuple(sorted(used - defined, key=str))


def _group_outputs(group: list[Binding], block: DataflowBlock) -> list[Var]:
    """Vars of the group used after the block or by bindings outside the group."""
    inside = {id(b) for b in group}
    used_outside: set[Var] = set()
    for binding in block.bindings:
        if id(binding) not in inside:
            _collect_vars(binding.value, used_outside)  # type: ignore[attr-defined]
    return [b.var for b in group if not isinstance(b.var, DataflowVar) or b.var in used_outside]


def _collect_vars(expr: object, out: set[Var]) -> None:
    if isinstance(expr, Var):
        out.add(expr)
    elif isinstance(expr, Tuple):
        for f in expr.fields:
            _collect_vars(f, out)
    elif isinstance(expr, TupleGetItem):
        _collect_vars(expr.tuple_value, out)
    elif isinstance(expr, Call):
        for a in expr.args:
            _collect_vars(a, out)


def _make_function(group: list[Binding], inputs: list[Expr], outputs: list[Var]) -> Function:
    """The fused function: fresh params for the inputs, fresh vars for the bindings."""
    renamer = _Renamer()
    params: list[Var] = []
    for k, value in enumerate(inputs):
        if isinstance(value, Var):
            param = renamer.var_remap[value] = Var(value.name_hint, value.struct_info)
        elif isinstance(value, ShapeExpr):
            param = Var("symbols", value.struct_info)
        else:
            assert isinstance(value, Constant)
            param = renamer.constants[value] = Var(f"param_{k}", value.struct_info)
        params.append(param)
    bindings: list[Binding] = []
    for binding in group:
        value = renamer.visit_expr(binding.value)  # type: ignore[attr-defined]
        var_cls = Var if binding.var in outputs else DataflowVar
        var = var_cls(binding.var.name_hint, binding.var.struct_info_, span=binding.var.span)
        renamer.var_remap[binding.var] = var
        bindings.append(VarBinding(var, value))
    results = [renamer.var_remap[v] for v in outputs]
    body: Expr = results[0] if len(results) == 1 else Tuple(tuple(results))
    ret = body.struct_info
    if isinstance(body, Tuple):
        ret = TupleStructInfo(tuple(r.struct_info for r in results))
    seq = SeqExpr((DataflowBlock(tuple(bindings)),), body)
    return Function(tuple(params), seq, ret, attrs={"Primitive": True})


class _Renamer(ExprMutator):
    """Send uses of the group's inputs (vars and constants) to the new parameters."""

    def __init__(self) -> None:
        super().__init__()
        self.constants: dict[Constant, Var] = {}

    def visit_constant_(self, const: Constant) -> Expr:
        return self.constants.get(const, const)


def _group_name(group: list[Binding], mod: IRModule) -> str:
    names: list[str] = []
    for binding in group:
        func = called_prim_func(binding.value, mod)  # type: ignore[attr-defined]
        if func is not None:
            gvar = binding.value.args[0]  # type: ignore[attr-defined]  # the call_tir callee
            assert isinstance(gvar, GlobalVar)
            names.append(gvar.name_hint)
    return "fused_" + "_".join(names or ["group"])


__all__ = ["FuseOps"]
