"""The script parser: a generic core (`core`, `evaluator`, `errors`) and the TIR family.

Example:
    >>> from unity.script.parser import ParseError
    >>> issubclass(ParseError, Exception)
    True
"""

from unity.script.parser.core import ScriptDecorator, from_source, register_namespace
from unity.script.parser.errors import ParseError, Source

__all__ = ["ParseError", "ScriptDecorator", "Source", "from_source", "register_namespace"]
