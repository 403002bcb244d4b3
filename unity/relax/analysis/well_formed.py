"""Well-formedness of relax functions: scoping, SSA, dataflow rules, ANF, struct info.

Rules checked (the first violation is reported, pointing at the node):

- a var is used only after its definition and within its scope (If branches are scopes);
- a var is defined once (params and bindings);
- `DataflowVar`s are bound only in dataflow blocks and never used outside their block;
- call arguments are in A-normal form (leaves, or tuples of leaves);
- every bound value carries struct info, and its shape symbols were defined by a
  parameter's struct info or a `MatchCast`;
- a called `GlobalVar` names a function of the module.

Example:
    >>> from unity.ir import IRModule
    >>> check_well_formed(IRModule()) is None
    True
"""

from __future__ import annotations

import sympy

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import GlobalVar, IRModule
from unity.relax.expr import (
    Binding, BindingBlock, Call, DataflowBlock, DataflowVar, Expr, Function, If, LeafExpr,
    MatchCast, SeqExpr, Tuple, Var,
)  # fmt: skip
from unity.relax.expr_functor import ExprVisitor
from unity.relax.utils import free_symbols


def well_formed(mod: IRModule) -> bool:
    """True when every relax function of `mod` is well formed.

    Example:
        >>> well_formed(IRModule())
        True
    """
    try:
        check_well_formed(mod)
    except DiagnosticError:
        return False
    return True


def check_well_formed(mod: IRModule) -> None:
    """Raise a `DiagnosticError` naming the first ill-formed construct of `mod`.

    Example:
        >>> check_well_formed(IRModule())
    """
    for gv, func in mod.functions.items():
        if isinstance(func, Function):
            try:
                _Checker(mod, gv).visit_expr(func)
            except DiagnosticError as err:
                raise err.with_context(module=mod) from None


class _Checker(ExprVisitor):
    def __init__(self, mod: IRModule, gv: GlobalVar) -> None:
        self.mod = mod
        self.where = f"in @{gv.name_hint}"
        self.defined: set[Var] = set()
        self.scopes: list[set[Var]] = [set()]
        self.symbols: set[sympy.Symbol] = set()
        self.block: DataflowBlock | None = None
        self.block_vars: set[Var] = set()

    def error(self, message: str, node: object) -> DiagnosticError:
        return DiagnosticError(f"{message} ({self.where})", node)

    def visit_function_(self, func: Function) -> None:
        for p in func.params:
            if isinstance(p, DataflowVar):
                raise self.error(f"parameter {p.name_hint} is a DataflowVar", p)
            self.visit_var_def(p)
            self.symbols |= free_symbols(p.struct_info)
        self.visit_expr(func.body)
        if isinstance(func.body.body, DataflowVar):
            raise self.error(f"function returns DataflowVar {func.body.body.name_hint}", func.body.body)

    def visit_var_def(self, var: Var) -> None:
        if var in self.defined:
            raise self.error(f"var {var.name_hint} is defined more than once", var)
        if var.struct_info_ is None:
            raise self.error(f"var {var.name_hint} has no struct info", var)
        self.defined.add(var)
        self.scopes[-1].add(var)

    def visit_var_(self, var: Var) -> None:
        if not any(var in scope for scope in self.scopes):
            raise self.error(f"var {var.name_hint} is used before it is defined or out of scope", var)
        if isinstance(var, DataflowVar) and var not in self.block_vars:
            raise self.error(f"DataflowVar {var.name_hint} is used outside its dataflow block", var)

    def visit_seq_expr_(self, expr: SeqExpr) -> None:
        for block in expr.blocks:
            self.visit_binding_block(block)
        self.visit_expr(expr.body)

    def visit_if_(self, expr: If) -> None:
        self.visit_expr(expr.cond)
        for branch in (expr.true_branch, expr.false_branch):
            self.scopes.append(set())
            self.visit_expr(branch)
            self.scopes.pop()

    def visit_binding_block(self, block: BindingBlock) -> None:
        outer = (self.block, self.block_vars)
        if isinstance(block, DataflowBlock):
            self.block, self.block_vars = block, set()
        for b in block.bindings:
            self.visit_binding(b)
        self.block, self.block_vars = outer

    def visit_binding(self, binding: Binding) -> None:
        value: Expr = binding.value  # type: ignore[attr-defined]  # both binding kinds have it
        if value.struct_info_ is None and not isinstance(value, Function):
            raise self.error(f"the value bound to {binding.var.name_hint} has no struct info", value)
        self.visit_expr(value)
        var = binding.var
        if isinstance(var, DataflowVar):
            if self.block is None:
                raise self.error(f"DataflowVar {var.name_hint} is bound outside a dataflow block", var)
            self.block_vars.add(var)
        if isinstance(binding, MatchCast):
            self.symbols |= free_symbols(binding.struct_info)
        self.visit_var_def(var)
        unknown = free_symbols(var.struct_info) - self.symbols
        if unknown:
            names = ", ".join(sorted(map(str, unknown)))
            raise self.error(f"shape symbol {names} of {var.name_hint} is never defined", binding)

    def visit_call_(self, expr: Call) -> None:
        if isinstance(expr.op, GlobalVar) and expr.op not in self.mod.functions:
            raise self.error(f"call of @{expr.op.name_hint}, which the module does not have", expr)
        for arg in expr.args:
            if not _is_anf_arg(arg):
                raise self.error("call argument is not a var, constant or tuple of those (not ANF)", arg)
            if isinstance(arg, GlobalVar) and arg not in self.mod.functions:
                raise self.error(f"@{arg.name_hint} is not a function of the module", expr)
        super().visit_call_(expr)


def _is_anf_arg(arg: object) -> bool:
    if isinstance(arg, Tuple):
        return all(_is_anf_arg(f) for f in arg.fields)
    return isinstance(arg, LeafExpr | GlobalVar)
