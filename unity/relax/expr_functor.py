"""Visitors and mutators over relax functions (TVM's `PyExprVisitor`/`PyExprMutator` hooks).

Hooks are found by the node's MRO (`visit_dataflow_var_` falls back to
`visit_var_`).  `ExprMutator` memoizes by identity, returns the input node when
nothing changed, and renames uses of a var when its definition is replaced
(`self.var_remap`).

Example:
    >>> from unity.relax.expr import Var, Tuple
    >>> from unity.relax.struct_info import ObjectStructInfo
    >>> x = Var("x", ObjectStructInfo())
    >>> seen = []
    >>> class Names(ExprVisitor):
    ...     def visit_var_(self, var):
    ...         seen.append(var.name_hint)
    >>> Names().visit_expr(Tuple((x, x)))
    >>> seen
    ['x', 'x']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unity.ir.module import GlobalVar, IRModule
from unity.ir.node import dispatch_table
from unity.relax.expr import (
    Binding, BindingBlock, Call, DataflowBlock, DataflowVar, Expr, Function, If, MatchCast,
    SeqExpr, Tuple, TupleGetItem, Var, VarBinding,
)  # fmt: skip
from unity.relax.infer import infer_struct_info
from unity.relax.utils import struct_info_equal


class ExprVisitor:
    """Walk every expression, binding and block; override `visit_<node>_` hooks.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
        >>> class Calls(ExprVisitor):
        ...     def visit_call_(self, call):
        ...         print(call.op.name)
        ...         super().visit_call_(call)
        >>> Calls().visit_expr(relax.op.add(x, relax.op.exp(x)))
        relax.add
        relax.exp
    """

    def visit_expr(self, expr: Expr | Function) -> None:
        """Visit `expr` through its hook (default: visit the children).

        Example:
            >>> from unity import relax
            >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
            >>> ExprVisitor().visit_expr(relax.op.exp(x)) is None
            True
        """
        hook = dispatch_table(type(self), type(expr))
        if hook is None:
            return None
        return hook(self, expr)

    def visit_expr_(self, expr: Expr) -> None:
        """Default for leaf expressions (hook of the `Expr` base): nothing to walk."""

    def visit_tuple_(self, expr: Tuple) -> None:
        """Visit the fields."""
        for f in expr.fields:
            self.visit_expr(f)

    def visit_tuple_get_item_(self, expr: TupleGetItem) -> None:
        """Visit the tuple."""
        self.visit_expr(expr.tuple_value)

    def visit_call_(self, expr: Call) -> None:
        """Visit the callee (when an expression) and the arguments."""
        if isinstance(expr.op, Expr):
            self.visit_expr(expr.op)
        for a in expr.args:
            self.visit_expr(a)

    def visit_if_(self, expr: If) -> None:
        """Visit the condition and both branches."""
        self.visit_expr(expr.cond)
        self.visit_expr(expr.true_branch)
        self.visit_expr(expr.false_branch)

    def visit_seq_expr_(self, expr: SeqExpr) -> None:
        """Visit the blocks, then the body."""
        for block in expr.blocks:
            self.visit_binding_block(block)
        self.visit_expr(expr.body)

    def visit_function_(self, func: Function) -> None:
        """Visit the parameter definitions, then the body."""
        for p in func.params:
            self.visit_var_def(p)
        self.visit_expr(func.body)

    def visit_binding_block(self, block: BindingBlock) -> None:
        """Visit each binding.

        Example:
            >>> from unity import relax
            >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
            >>> y = relax.Var("y", relax.TensorStructInfo((2,), "float32"))
            >>> binding = VarBinding(y, relax.op.exp(x))
            >>> class Defs(ExprVisitor):
            ...     def visit_var_def(self, var):
            ...         print(var.name_hint)
            >>> Defs().visit_binding_block(BindingBlock((binding,)))
            y
        """
        for b in block.bindings:
            self.visit_binding(b)

    def visit_binding(self, binding: Binding) -> None:
        """Visit the value, then the defined var.

        Example:
            >>> from unity import relax
            >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
            >>> y = relax.Var("y", relax.TensorStructInfo((2,), "float32"))
            >>> binding = VarBinding(y, relax.op.exp(x))
            >>> class Uses(ExprVisitor):
            ...     def visit_var_(self, var):
            ...         print("use", var.name_hint)
            ...     def visit_var_def(self, var):
            ...         print("def", var.name_hint)
            >>> Uses().visit_binding(binding)
            use x
            def y
        """
        value = binding.value  # type: ignore[attr-defined]  # both binding kinds have it
        self.visit_expr(value)
        self.visit_var_def(binding.var)

    def visit_var_def(self, var: Var) -> None:
        """Called where `var` is defined (parameters, bindings).

        Example:
            >>> from unity import relax
            >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
            >>> class Params(ExprVisitor):
            ...     def visit_var_def(self, var):
            ...         print(var.name_hint)
            >>> func = Function((x,), SeqExpr((), x), relax.TensorStructInfo((2,), "float32"))
            >>> Params().visit_expr(func)
            x
        """


class ExprMutator:
    """Rebuild expressions bottom-up; return the same node when nothing changed.

    A rebuilt call, tuple or tuple item gets its struct info inferred again (`mod`
    resolves calls of module functions), and a binding whose value's struct info
    changed binds a fresh var that later uses follow.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
        >>> y = relax.Var("y", relax.TensorStructInfo((2,), "float32"))
        >>> class Swap(ExprMutator):
        ...     def visit_var_(self, var):
        ...         return y if var is x else var
        >>> Swap().visit_expr(relax.op.add(x, x)).args[0].name_hint
        'y'
    """

    def __init__(self, mod: IRModule | None = None) -> None:
        self.mod = mod
        self.memo: dict[int, Any] = {}
        self.var_remap: dict[Var, Expr] = {}
        self.in_dataflow = False
        """True while the bindings of a `DataflowBlock` are visited."""

    def refresh(self, expr: Expr) -> Expr:
        """Re-infer the struct info of a rebuilt `expr` (None if a child has none yet).

        Example:
            >>> ExprMutator().refresh(Tuple((x,))).struct_info_ is not None  # doctest: +SKIP
            True
        """
        if not all(_has_sinfo(c) for c in _children(expr)):
            return expr.replace(struct_info_=None)
        if (isinstance(expr, Call) and isinstance(expr.op, GlobalVar) and expr.struct_info_ is not None
                and (self.mod is None or expr.op not in self.mod.functions)):
            return expr  # a module function's call, rebuilt by a mutator that has no module
        return expr.replace(struct_info_=infer_struct_info(expr, self.mod))

    def visit_expr(self, expr: Any) -> Any:
        """Mutate `expr` through its hook (memoized by identity).

        Example:
            >>> from unity import relax
            >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
            >>> e = relax.op.exp(x)
            >>> ExprMutator().visit_expr(e) is e  # nothing changed: the same node
            True
        """
        key = id(expr)
        if key in self.memo:
            return self.memo[key][1]
        hook = dispatch_table(type(self), type(expr))
        out = expr if hook is None else hook(self, expr)
        self.memo[key] = (expr, out)  # keep `expr` alive so its id is not reused
        return out

    def visit_var_(self, var: Var) -> Expr:
        """Uses of a var follow `var_remap`."""
        return self.var_remap.get(var, var)

    def visit_tuple_(self, expr: Tuple) -> Expr:
        """Mutate the fields."""
        fields = tuple(self.visit_expr(f) for f in expr.fields)
        if all(a is b for a, b in zip(fields, expr.fields, strict=True)):
            return expr
        return self.refresh(Tuple(fields, span=expr.span))

    def visit_tuple_get_item_(self, expr: TupleGetItem) -> Expr:
        """Mutate the tuple."""
        new = expr.replace(tuple_value=self.visit_expr(expr.tuple_value))
        return new if new is expr else self.refresh(new)

    def visit_call_(self, expr: Call) -> Expr:
        """Mutate the callee (when an expression) and the arguments."""
        op = self.visit_expr(expr.op) if isinstance(expr.op, Expr) else expr.op
        args = tuple(self.visit_expr(a) for a in expr.args)
        if op is expr.op and all(a is b for a, b in zip(args, expr.args, strict=True)):
            return expr
        return self.refresh(expr.replace(op=op, args=args))

    def visit_if_(self, expr: If) -> Expr:
        """Mutate the condition and both branches."""
        cond = self.visit_expr(expr.cond)
        t, f = self.visit_expr(expr.true_branch), self.visit_expr(expr.false_branch)
        new = expr.replace(cond=cond, true_branch=t, false_branch=f)
        return new if new is expr else self.refresh(new)

    def visit_seq_expr_(self, expr: SeqExpr) -> Expr:
        """Mutate the blocks, then the body."""
        blocks = tuple(self.visit_binding_block(b) for b in expr.blocks)
        body = self.visit_expr(expr.body)
        if body is expr.body and all(a is b for a, b in zip(blocks, expr.blocks, strict=True)):
            return expr
        return SeqExpr(blocks, body, span=expr.span)

    def visit_function_(self, func: Function) -> Function:
        """Mutate the parameters and the body."""
        params = tuple(self.visit_var_def(p) for p in func.params)
        if all(a is b for a, b in zip(params, func.params, strict=True)):
            params = func.params
        body = self.visit_expr(func.body)
        ret = func.ret_struct_info
        changed = body is not func.body and body.struct_info_ is not None
        if changed and not struct_info_equal(ret, body.struct_info_):
            ret = body.struct_info_
        return func.replace(params=params, body=body, ret_struct_info=ret)

    def visit_binding_block(self, block: BindingBlock) -> BindingBlock:
        """Mutate each binding (a binding may expand to several or to none).

        Example:
            >>> from unity import relax
            >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
            >>> y = relax.Var("y", relax.TensorStructInfo((2,), "float32"))
            >>> binding = VarBinding(y, relax.op.exp(x))
            >>> block = BindingBlock((binding,))
            >>> ExprMutator().visit_binding_block(block) is block
            True
        """
        out: list[Binding] = []
        outer, self.in_dataflow = self.in_dataflow, isinstance(block, DataflowBlock)
        try:
            for b in block.bindings:
                out.extend(self.visit_binding(b))
        finally:
            self.in_dataflow = outer
        if len(out) == len(block.bindings) and all(
            a is b for a, b in zip(out, block.bindings, strict=True)
        ):
            return block
        return block.replace(bindings=tuple(out))

    def visit_binding(self, binding: Binding) -> list[Binding]:
        """Mutate the value, then the defined var; return the new bindings.

        Example:
            >>> from unity import relax
            >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
            >>> y = relax.Var("y", relax.TensorStructInfo((2,), "float32"))
            >>> binding = VarBinding(y, relax.op.exp(x))
            >>> ExprMutator().visit_binding(binding) == [binding]
            True
        """
        assert isinstance(binding, VarBinding | MatchCast)
        value = self.visit_expr(binding.value)
        var = binding.var
        if isinstance(binding, VarBinding) and value is not binding.value and _sinfo_changed(var, value):
            new = type(var)(var.name_hint, value.struct_info_, span=var.span)
            self.var_remap[var] = new
            var = new
        var = self.visit_var_def(var)
        return [binding.replace(var=var, value=value)]

    def fresh_var(self, name_hint: str, struct_info: Any) -> Var:
        """A new var to bind in the block being visited: a `DataflowVar` in a dataflow block.

        Example:
            >>> from unity import relax
            >>> ExprMutator().fresh_var("lv", relax.TensorStructInfo((2,), "float32")).name_hint
            'lv'
        """
        return (DataflowVar if self.in_dataflow else Var)(name_hint, struct_info)

    def visit_var_def(self, var: Var) -> Var:
        """Mutate a var where it is defined; record the renaming for its uses.

        Example:
            >>> from unity import relax
            >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
            >>> class Rename(ExprMutator):
            ...     def rewrite_var_def(self, var):
            ...         return relax.Var("x2", var.struct_info_)
            >>> m = Rename()
            >>> m.visit_var_def(x).name_hint, m.var_remap[x].name_hint
            ('x2', 'x2')
        """
        new = self.rewrite_var_def(var)
        if new is not var:
            original = next((k for k, v in self.var_remap.items() if v is var), var)
            self.var_remap[original] = new
        return new

    def rewrite_var_def(self, var: Var) -> Var:
        """Override to replace defined vars (default: keep).

        Example:
            >>> from unity import relax
            >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
            >>> ExprMutator().rewrite_var_def(x) is x
            True
        """
        return var


def _children(expr: Expr) -> tuple[Any, ...]:
    if isinstance(expr, Call):
        return expr.args
    if isinstance(expr, Tuple):
        return expr.fields
    if isinstance(expr, TupleGetItem):
        return (expr.tuple_value,)
    if isinstance(expr, If):
        return (expr.cond, expr.true_branch, expr.false_branch)
    return ()


def _has_sinfo(child: Any) -> bool:
    return not isinstance(child, Expr) or child.struct_info_ is not None


def _sinfo_changed(var: Var, value: Expr) -> bool:
    if value.struct_info_ is None or var.struct_info_ is value.struct_info_:
        return False
    return var.struct_info_ is None or not struct_info_equal(var.struct_info_, value.struct_info_)


class VarRenamer(ExprMutator):
    """An `ExprMutator` sending uses of the vars of `remap` to their replacements (more
    can be added to `var_remap` between visits).

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
        >>> p = relax.Var("p", relax.TensorStructInfo((2,), "float32"))
        >>> VarRenamer({x: p}).visit_expr(relax.op.exp(x)).args[0].name_hint
        'p'
    """

    def __init__(self, remap: Mapping[Var, Expr]) -> None:
        super().__init__()
        self.var_remap.update(remap)
