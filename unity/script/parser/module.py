"""Parse an `@I.ir_module` class: each decorated method becomes a function of the module.

Example:
    >>> from unity.script import from_source
    >>> mod = from_source('''
    ... @I.ir_module
    ... class Module:
    ...     @T.prim_func
    ...     def f(n: T.int32):
    ...         T.evaluate(n)
    ... ''')
    >>> [gv.name_hint for gv in mod.get_global_vars()]
    ['f']
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from unity.ir.module import BaseFunc, GlobalVar, IRModule
from unity.script.parser.core import ParseContext, find_decorator
from unity.script.parser.evaluator import Evaluator


def parse_ir_module(ctx: ParseContext, node: ast.ClassDef, options: Mapping[str, Any]) -> IRModule:
    """Build an `IRModule` from a class body; the method names are the global names.

    Example:
        >>> parse_ir_module(ctx, class_def, {})  # doctest: +SKIP
    """
    if not isinstance(node, ast.ClassDef):
        raise ctx.error(node, "@I.ir_module decorates a class")
    methods = [s for s in node.body if isinstance(s, ast.FunctionDef)]
    ctx.global_vars.update({m.name: GlobalVar(m.name) for m in methods})
    mod = IRModule()
    for method in methods:
        decorator = find_decorator(ctx, method)
        func = decorator.handler(ctx, method, decorator.options)
        if not isinstance(func, BaseFunc):
            raise ctx.error(method, f"{method.name} did not parse to a function")
        mod.update_func(ctx.global_vars[method.name], func)
    for stmt in node.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            mod.attrs.update(_module_attrs(ctx, stmt.value))
        elif not isinstance(stmt, ast.FunctionDef | ast.Pass | ast.Expr):
            raise ctx.error(stmt, "an @I.ir_module class holds only decorated functions")
    return mod


def _module_attrs(ctx: ParseContext, call: ast.Call) -> dict[str, Any]:
    evaluator = Evaluator(ctx.source, ctx.env)
    attrs = evaluator.eval(call)
    if not isinstance(attrs, ModuleAttrs):
        raise ctx.error(call, "only I.module_attrs({...}) may stand in an @I.ir_module class body")
    return attrs.attrs


class ModuleAttrs:
    """What `I.module_attrs({...})` returns: the module's attributes.

    Example:
        >>> from unity.script import ir as I
        >>> I.module_attrs({"target": "llvm"}).attrs
        {'target': 'llvm'}
    """

    def __init__(self, attrs: Mapping[str, Any]) -> None:
        self.attrs = dict(attrs)
