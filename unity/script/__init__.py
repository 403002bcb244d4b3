"""Script: IR as decorated Python (`@T.prim_func`, `@R.function`, `@I.ir_module`), and back.

`from_source(text)` parses what `func.script()` / `mod.script()` print.

Example:
    >>> from unity.script import from_source, tir as T
    >>> text = '@T.prim_func\\ndef main(A: T.Buffer((4,), "float32")):\\n    A[0] = T.float32(2)\\n'
    >>> f = from_source(text)
    >>> from_source(f.script()).script() == f.script()
    True
"""

from unity.script import ir, relax, tir
from unity.script.parser import ParseError, ScriptDecorator, Source, from_source, register_namespace

__all__ = [
    "ParseError",
    "ScriptDecorator",
    "Source",
    "from_source",
    "ir",
    "register_namespace",
    "relax",
    "tir",
]

register_namespace("T", tir)
register_namespace("I", ir)
register_namespace("R", relax)
