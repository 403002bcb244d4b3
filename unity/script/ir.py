"""The `I` namespace of script: `@I.ir_module` on a class of decorated functions.

Example:
    >>> from unity.script import ir as I, tir as T
    >>> @I.ir_module
    ... class Module:
    ...     @T.prim_func
    ...     def main(A: T.Buffer((4,), "float32")):
    ...         A[0] = T.float32(1)
    >>> Module["main"].params[0].name
    'A'
"""

from __future__ import annotations

from typing import Any

from unity.ir.module import GlobalVar
from unity.script.parser.core import ScriptDecorator
from unity.script.parser.module import ModuleAttrs, parse_ir_module

ir_module = ScriptDecorator("I.ir_module", parse_ir_module)
"""Decorator: parse a class whose methods are script functions into an `IRModule`."""


def module_attrs(attrs: dict[str, Any]) -> ModuleAttrs:
    """Module attributes, written first in an `@I.ir_module` class: `I.module_attrs({...})`.

    Example:
        >>> module_attrs({"target": "llvm"}).attrs
        {'target': 'llvm'}
    """
    return ModuleAttrs(attrs)


__all__ = ["GlobalVar", "ir_module", "module_attrs"]
