"""Parse `@R.function` definitions: signature, shape symbols, blocks, `if`, `return`.

A body is a list of bindings (`lv: R.Tensor(...) = value`, annotation optional),
`with R.dataflow():` blocks ending in `R.output(...)`, `if cond: ... else: ...`
bindings (each branch ends by assigning the same name), and a final `return`.
Shape symbols come from strings in annotations (`R.Tensor(("n", 4), "float32")`) or
from declarations `n = T.int64()`, which may follow the signature that uses them.
Inside an `@I.ir_module` class, a call `cls.f(x)` gets its struct info from `f`'s
signature, so functions may call functions defined later in the class.

Example:
    >>> from unity.script import from_source
    >>> f = from_source('''
    ... @R.function
    ... def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
    ...     y: R.Tensor(("n",), "float32") = R.exp(x)
    ...     return y
    ... ''')
    >>> f.params[0].struct_info.script()
    'R.Tensor((n,), dtype="float32")'
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from unity.relax.expr import (
    Binding, BindingBlock, DataflowBlock, DataflowVar, Expr, Function, If, MatchCast, SeqExpr,
    Var, VarBinding,
)  # fmt: skip
from unity.relax.struct_info import FuncStructInfo, StructInfo, sym
from unity.relax.utils import free_symbols
from unity.script.parser.core import ParseContext
from unity.script.parser.errors import ParseError
from unity.script.parser.relax_check import check_annotation
from unity.script.parser.relax_expr import RelaxEvaluator
from unity.script.parser.relax_specs import (
    DataflowSpec, FuncAttrSpec, MatchCastSpec, as_expr, as_struct_info,
)  # fmt: skip
from unity.script.parser.tir_specs import VarSpec

_STATE_KEY = "relax.signatures"


def parse_relax_function(
    ctx: ParseContext, node: ast.FunctionDef, options: Mapping[str, Any]
) -> Function:
    """Build a `relax.Function` (options: `pure=False`, `private=True`).

    Example:
        >>> parse_relax_function(ctx, function_def, {})  # doctest: +SKIP
    """
    if not isinstance(node, ast.FunctionDef):
        raise ctx.error(node, "@R.function decorates a function")
    parser = _FunctionParser(ctx)
    return parser.function(node, options)


class _FunctionParser(RelaxEvaluator):
    def __init__(self, ctx: ParseContext) -> None:
        super().__init__(ctx.source, ctx.env, ctx.global_vars, lambda: _signatures(ctx))
        self.ctx = ctx
        self.attrs: dict[str, Any] = {}
        self.block_locals: set[str] = set()
        """Names of dataflow variables of closed blocks (for a helpful error)."""
        self.in_annotation = False
        """While evaluating an annotation, an unknown name is a new shape symbol."""

    def lookup(self, name: str, node: ast.AST) -> Any:
        try:
            return super().lookup(name, node)
        except ParseError:
            if self.in_annotation and name not in self.block_locals:
                self.scopes[0][name] = sym(name)
                return self.scopes[0][name]
            if name not in self.block_locals:
                raise
        raise self.error(
            node, f"{name} is local to its dataflow block; export it with R.output({name})"
        )

    # -- the function -----------------------------------------------------------------
    def function(self, node: ast.FunctionDef, options: Mapping[str, Any]) -> Function:
        unknown = set(options) - {"pure", "private"}
        if unknown:
            raise self.error(node, f"@R.function has no option {min(unknown)!r}")
        params, ret = self.signature(node)
        for p in params:
            self.define(p.name_hint, p)
        body_stmts = self._skip_preamble(node.body)
        body = self.seq(body_stmts, node, "the function")
        ret_sinfo = body.struct_info if ret is None else ret
        if ret is not None:
            check_annotation(self, node.returns, ret, body.struct_info, "the return value")
        attrs = dict(self.attrs)
        if not options.get("private", False):
            attrs.setdefault("global_symbol", node.name)
        pure = bool(options.get("pure", True))
        func = Function(tuple(params), body, ret_sinfo, pure, attrs=attrs, span=self.span(node))
        self.ctx.family_state.setdefault(_STATE_KEY + ".parsed", {})[node.name] = func
        return func

    def signature(self, node: ast.FunctionDef) -> tuple[list[Var], StructInfo | None]:
        """Parameters (as `Var`s) and the return annotation, after the body's declarations."""
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
            raise self.error(node, "an R.function takes plain positional parameters only")
        self._declare_symbols(node.body)
        params: list[Var] = []
        for arg in args.args:
            if arg.annotation is None:
                raise self.error(arg, f"parameter {arg.arg} needs struct info, e.g. R.Tensor(...)")
            params.append(Var(arg.arg, self.struct_info(arg.annotation), span=self.span(arg)))
            self.define_symbols(params[-1].struct_info)
        ret = None if node.returns is None else self.struct_info(node.returns)
        return params, ret

    def struct_info(self, node: ast.expr) -> StructInfo:
        """Evaluate an annotation as struct info (an unknown name in it is a shape symbol)."""
        self.in_annotation = True
        try:
            value = self.eval(node)
        finally:
            self.in_annotation = False
        try:
            return as_struct_info(value)
        except TypeError as err:
            raise self.error(node, str(err)) from None

    def define_symbols(self, sinfo: StructInfo) -> None:
        """Make the shape symbols of `sinfo` (`"n"` in `R.Tensor(("n",))`) usable as names."""
        for symbol in free_symbols(sinfo):
            self.scopes[0].setdefault(symbol.name, symbol)

    def _declare_symbols(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            if _is_symbol_declaration(stmt):
                assert isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
                self.define(stmt.targets[0].id, sym(stmt.targets[0].id))

    def _skip_preamble(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        """Drop the docstring and symbol declarations; read `R.func_attr` (first statements)."""
        rest = list(stmts)
        while rest and (_is_docstring(rest[0]) or _is_symbol_declaration(rest[0])):
            rest.pop(0)
        if rest and isinstance(rest[0], ast.Expr):
            value = self.eval(rest[0].value) if isinstance(rest[0].value, ast.Call) else None
            if isinstance(value, FuncAttrSpec):
                self.attrs.update(value.attrs)
                rest.pop(0)
        return rest

    # -- sequences and blocks -----------------------------------------------------------
    def seq(self, stmts: list[ast.stmt], owner: ast.AST, what: str) -> SeqExpr:
        """Blocks of bindings ending in `return` (for a branch: in `name = value`)."""
        if not stmts or not isinstance(stmts[-1], ast.Return) or stmts[-1].value is None:
            raise self.error(owner, f"{what} must end with `return value`")
        blocks: list[BindingBlock] = []
        bindings: list[Binding] = []
        for stmt in stmts[:-1]:
            if isinstance(stmt, ast.With):
                if bindings:
                    blocks.append(BindingBlock(tuple(bindings)))
                    bindings = []
                blocks.append(self.dataflow_block(stmt))
            else:
                binding = self.statement(stmt, dataflow_outputs=None)
                if binding is not None:
                    bindings.append(binding)
        if bindings:
            blocks.append(BindingBlock(tuple(bindings)))
        ret = stmts[-1]
        assert isinstance(ret, ast.Return) and ret.value is not None
        return SeqExpr(tuple(blocks), self.value(ret.value))

    def dataflow_block(self, node: ast.With) -> DataflowBlock:
        if len(node.items) != 1 or node.items[0].optional_vars is not None:
            raise self.error(node, "only `with R.dataflow():` opens a block in a relax function")
        if not isinstance(self.eval(node.items[0].context_expr), DataflowSpec):
            raise self.error(node.items[0].context_expr, "expected `with R.dataflow():`")
        body = [s for s in node.body if not _is_docstring(s) and not isinstance(s, ast.Pass)]
        last = body[-1] if body else None
        if not (isinstance(last, ast.Expr) and _calls(last.value, "output")):
            raise self.error(node, "a dataflow block must end with R.output(...)")
        assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
        outputs = self._output_names(last.value)
        bindings: list[Binding] = []
        with self.scope():
            for stmt in body[:-1]:
                if isinstance(stmt, ast.With):
                    raise self.error(stmt, "dataflow blocks do not nest")
                binding = self.statement(stmt, dataflow_outputs=outputs)
                if binding is not None:
                    bindings.append(binding)
            exported = [self.lookup(name, arg) for name, arg in outputs.items()]
            self.block_locals.update(
                name for name, v in self.scopes[-1].items() if isinstance(v, DataflowVar)
            )
        for (name, arg), var in zip(outputs.items(), exported, strict=True):
            if isinstance(var, DataflowVar) or not isinstance(var, Var):
                raise self.error(arg, f"R.output({name}): {name} is not bound in this block")
            self.define(name, var)
        return DataflowBlock(tuple(bindings), span=self.span(node))

    def _output_names(self, call: ast.Call) -> dict[str, ast.expr]:
        if call.keywords:
            raise self.error(call, "R.output takes variable names only")
        names: dict[str, ast.expr] = {}
        for arg in call.args:
            if not isinstance(arg, ast.Name):
                raise self.error(arg, "R.output takes the names of variables bound in the block")
            names[arg.id] = arg
        return names

    # -- statements -------------------------------------------------------------------
    def statement(
        self, stmt: ast.stmt, dataflow_outputs: Mapping[str, Any] | None
    ) -> Binding | None:
        """One statement of a block: a binding, an `if` binding, or nothing (`pass`)."""
        if isinstance(stmt, ast.Pass) or _is_docstring(stmt):
            return None
        if isinstance(stmt, ast.If):
            return self.if_binding(stmt, dataflow_outputs)
        if isinstance(stmt, ast.Return):
            raise self.error(stmt, "`return` must be the last statement of the function")
        if isinstance(stmt, ast.Expr) and _calls(stmt.value, "output"):
            raise self.error(
                stmt, "R.output(...) belongs at the end of a `with R.dataflow():` block"
            )
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            return self.binding(stmt, dataflow_outputs)
        if isinstance(stmt, ast.Expr):
            raise self.error(stmt, "an expression statement has no effect; bind it: `lv = ...`")
        raise self.error(stmt, f"unsupported statement in a relax function: {type(stmt).__name__}")

    def binding(
        self, stmt: ast.Assign | ast.AnnAssign, dataflow_outputs: Mapping[str, Any] | None
    ) -> Binding | None:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) != 1
            or not isinstance(target, ast.Name)
        ):
            raise self.error(target, "a binding assigns one name: `lv = value`")
        if stmt.value is None:
            raise self.error(stmt, f"{target.id} needs a value")
        if _is_symbol_declaration(stmt):
            self.define(target.id, sym(target.id))
            return None
        annotation = stmt.annotation if isinstance(stmt, ast.AnnAssign) else None
        declared = None if annotation is None else self.struct_info(annotation)
        value = self.eval(stmt.value)
        if isinstance(value, VarSpec):
            self.define(target.id, sym(target.id))
            return None
        in_dataflow = dataflow_outputs is not None and target.id not in dataflow_outputs
        var_cls = DataflowVar if in_dataflow else Var
        if isinstance(value, MatchCastSpec):
            sinfo = value.struct_info if declared is None else declared
            self.define_symbols(value.struct_info)
            var = var_cls(target.id, sinfo, span=self.span(target))
            binding: Binding = MatchCast(var, value.value, value.struct_info, span=self.span(stmt))
        else:
            expr = self.value_at(stmt.value, value)
            if declared is not None:
                check_annotation(self, annotation, declared, expr.struct_info, target.id)
            sinfo = expr.struct_info if declared is None else declared
            var = var_cls(target.id, sinfo, span=self.span(target))
            binding = VarBinding(var, expr, span=self.span(stmt))
        self.define(target.id, var)
        return binding

    def if_binding(self, stmt: ast.If, dataflow_outputs: Mapping[str, Any] | None) -> Binding:
        if not stmt.orelse:
            raise self.error(stmt, "an `if` in a relax function needs an `else` branch")
        cond = self.value(stmt.test)
        name = _branch_result(self, stmt.body, stmt)
        if _branch_result(self, stmt.orelse, stmt) != name:
            raise self.error(stmt, f"both branches must end by assigning {name}")
        branches = [self.branch(stmts, stmt) for stmts in (stmt.body, stmt.orelse)]
        value = self.normalize(stmt, If(cond, branches[0], branches[1], span=self.span(stmt)))
        in_dataflow = dataflow_outputs is not None and name not in dataflow_outputs
        var = (DataflowVar if in_dataflow else Var)(name, value.struct_info, span=self.span(stmt))
        self.define(name, var)
        return VarBinding(var, value, span=self.span(stmt))

    def branch(self, stmts: list[ast.stmt], owner: ast.If) -> SeqExpr:
        last = stmts[-1]
        assert isinstance(last, ast.Assign | ast.AnnAssign) and last.value is not None
        with self.scope():
            as_return = ast.Return(value=last.value, lineno=last.lineno, col_offset=last.col_offset)
            return self.seq([*stmts[:-1], as_return], owner, "a branch")

    # -- values -----------------------------------------------------------------------
    def value(self, node: ast.expr) -> Expr:
        """Evaluate `node` as a relax expression (a Python tuple becomes a relax `Tuple`)."""
        return self.value_at(node, self.eval(node))

    def value_at(self, node: ast.expr, value: Any) -> Expr:
        """`value` (already evaluated from `node`) as a normalized relax expression."""
        try:
            expr = as_expr(value)
        except TypeError as err:
            raise self.error(node, str(err)) from None
        return self.normalize(node, expr)


def _branch_result(parser: _FunctionParser, stmts: list[ast.stmt], owner: ast.If) -> str:
    last = stmts[-1] if stmts else None
    target = None
    if isinstance(last, ast.Assign) and len(last.targets) == 1:
        target = last.targets[0]
    elif isinstance(last, ast.AnnAssign):
        target = last.target
    if not isinstance(target, ast.Name):
        raise parser.error(
            last or owner, "each branch must end by assigning its result: `y = value`"
        )
    return target.id


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _calls(node: ast.expr, name: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
    )


def _is_symbol_declaration(stmt: ast.stmt) -> bool:
    """`n = T.int64()` / `n = T.int32()` (no arguments): a shape symbol."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return False
    value = stmt.value
    return (
        isinstance(stmt.targets[0], ast.Name)
        and isinstance(value, ast.Call)
        and not value.args
        and not value.keywords
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in ("int64", "int32")
    )


# -- signatures of a module's functions (for calls between them) -------------------------
def _signatures(ctx: ParseContext) -> Mapping[str, FuncStructInfo]:
    cached = ctx.family_state.get(_STATE_KEY)
    if cached is None:
        cached = ctx.family_state[_STATE_KEY] = _scan_signatures(ctx)
    parsed: dict[str, Function] = ctx.family_state.get(_STATE_KEY + ".parsed", {})
    return {**cached, **{name: f.struct_info for name, f in parsed.items()}}


def _scan_signatures(ctx: ParseContext) -> dict[str, FuncStructInfo]:
    """Signatures of the `@R.function`s of the module class, from their annotations."""
    out: dict[str, FuncStructInfo] = {}
    tree = ast.parse(ctx.source.text)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    for method in (m for c in classes for m in c.body if isinstance(m, ast.FunctionDef)):
        if method.returns is None or not any(_is_relax_decorator(d) for d in method.decorator_list):
            continue
        parser = _FunctionParser(ParseContext(ctx.source, ctx.env, ctx.global_vars))
        params, ret = parser.signature(method)
        assert ret is not None
        pure = not any(_is_impure_decorator(d) for d in method.decorator_list)
        out[method.name] = FuncStructInfo(tuple(p.struct_info for p in params), ret, pure)
    return out


def _is_relax_decorator(node: ast.expr) -> bool:
    func = node.func if isinstance(node, ast.Call) else node
    return isinstance(func, ast.Attribute) and func.attr == "function"


def _is_impure_decorator(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and any(
        k.arg == "pure" and isinstance(k.value, ast.Constant) and k.value.value is False
        for k in node.keywords
    )
