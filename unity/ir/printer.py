"""Printer core: `script(obj, underline=...)` dispatches to the printer of each IR family.

Each layer registers how to print its nodes (`register_printer(tir.PrimFunc, fn)`);
this module only dispatches, so `unity.ir` never imports the layers above it.  It also
holds what every family's printer shares: `Text` (a string that remembers where the
underlined nodes are), `Line`, `render` (draws `^^^` beneath marked spans), `NameTable`
(unique names by identity) and the `IRModule` printer (`@I.ir_module class Module:`).

Underlining: an expression is marked over its exact printed span; a statement that
prints on several lines (a loop, a block, an `if`) is marked on its first line only.

Example:
    >>> from unity import tir
    >>> print(script(tir.Var("n", "int32") * 2))
    n * 2
"""

from __future__ import annotations

import json
import keyword
import math
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from unity.ir.module import GlobalVar, IRModule

Printer = Callable[..., str]
"""`printer(obj, *, underline: Collection[object], **options) -> str`."""

_PRINTERS: dict[type, Printer] = {}


def register_printer(cls: type, printer: Printer) -> None:
    """Register `printer` for instances of `cls` (and subclasses without their own).

    Example:
        >>> register_printer(MyNode, lambda n, **_: "my node")  # doctest: +SKIP
    """
    _PRINTERS[cls] = printer


def script(obj: object, *, underline: Collection[object] = (), **options: Any) -> str:
    """Print `obj` as script; nodes in `underline` are marked with `^^^` beneath them.

    Example:
        >>> script(mod, underline={bad_block})  # doctest: +SKIP
    """
    for base in type(obj).__mro__:
        printer = _PRINTERS.get(base)
        if printer is not None:
            return printer(obj, underline=underline, **options)
    raise TypeError(f"no printer registered for {type(obj).__name__}")


# -- text with marks ----------------------------------------------------------------------
@dataclass(slots=True)
class Text:
    """A piece of one printed line plus the `[start, end)` spans to underline in it.

    Example:
        >>> t = Text("x") + " + " + Text("y", [(0, 1)])
        >>> t.text, t.marks
        ('x + y', [(4, 5)])
    """

    text: str
    marks: list[tuple[int, int]] = field(default_factory=list)

    def __add__(self, other: Text | str) -> Text:
        if isinstance(other, str):
            return Text(self.text + other, self.marks)
        shift = len(self.text)
        return Text(
            self.text + other.text, self.marks + [(a + shift, b + shift) for a, b in other.marks]
        )

    def __radd__(self, other: str) -> Text:
        return Text(other + self.text, [(a + len(other), b + len(other)) for a, b in self.marks])

    def marked(self, on: bool = True) -> Text:
        """This text with its whole span marked when `on`.

        Example:
            >>> Text("x").marked().marks, Text("x").marked(False).marks
            ([(0, 1)], [])
        """
        return Text(self.text, self.marks + [(0, len(self.text))]) if on else self

    @staticmethod
    def join(sep: str, parts: Iterable[Text | str]) -> Text:
        """Join `parts` with `sep`, keeping their marks.

        Example:
            >>> Text.join(", ", ["a", Text("b")]).text
            'a, b'
        """
        out = Text("")
        for i, part in enumerate(parts):
            out = out + sep + part if i else out + part
        return out


@dataclass(slots=True)
class Line:
    """One output line: indentation level and its `Text`.

    Example:
        >>> render([Line(1, Text("return x"))])
        '    return x'
    """

    indent: int
    text: Text


def render(lines: Iterable[Line], indent_width: int = 4) -> str:
    """Join lines; under each line with marks, draw `^` beneath the marked columns.

    Example:
        >>> print(render([Line(0, Text("a = b", [(4, 5)]))]))
        a = b
            ^
    """
    out: list[str] = []
    for line in lines:
        pad = " " * (line.indent * indent_width)
        out.append(pad + line.text.text)
        if line.text.marks:
            width = max(end for _, end in line.text.marks)
            carets = [" "] * width
            for start, end in line.text.marks:
                carets[start:end] = "^" * (end - start)
            out.append(pad + "".join(carets).rstrip())
    return "\n".join(out)


# -- unique names -------------------------------------------------------------------------
RESERVED = frozenset(keyword.kwlist) | {"T", "I", "R", "True", "False", "None"}
"""Names the printer never gives to a variable (namespaces and Python keywords)."""

_NOT_IDENT = re.compile(r"[^0-9a-zA-Z_]")


class NameTable:
    """Give each object (by identity) a unique, valid Python name derived from its hint.

    Example:
        >>> names = NameTable()
        >>> a, b = object(), object()
        >>> names.name(a, "i"), names.name(b, "i"), names.name(a, "x")
        ('i', 'i_1', 'i')
    """

    def __init__(self) -> None:
        self._by_id: dict[int, str] = {}
        self._keep: list[object] = []  # keep the objects alive so ids stay unique
        self._used: set[str] = set(RESERVED)

    def name(self, obj: object, hint: str) -> str:
        """The name of `obj`, choosing one from `hint` the first time.

        Example:
            >>> names = NameTable()
            >>> names.name(object(), "for"), names.name(object(), "0x")
            ('for_1', 'v_0x')
        """
        found = self._by_id.get(id(obj))
        if found is not None:
            return found
        base = _NOT_IDENT.sub("_", hint) or "v"
        if base[0].isdigit():
            base = "v_" + base
        unique, i = base, 0
        while unique in self._used:
            i += 1
            unique = f"{base}_{i}"
        self._used.add(unique)
        self._by_id[id(obj)] = unique
        self._keep.append(obj)
        return unique

    def has(self, obj: object) -> bool:
        """Whether `obj` already has a name.

        Example:
            >>> names, a = NameTable(), object()
            >>> names.has(a), names.name(a, "a"), names.has(a)
            (False, 'a', True)
        """
        return id(obj) in self._by_id


# -- IRModule -----------------------------------------------------------------------------
def _print_module(mod: IRModule, *, underline: Collection[object] = (), **options: Any) -> str:
    """Print a module as `@I.ir_module class Module:` with each function as a method."""
    parts = ["@I.ir_module", "class Module:"]
    if mod.attrs:
        parts.append(f"    I.module_attrs({py_value(mod.attrs)})")
    for i, (gv, func) in enumerate(mod.items()):
        text = script(func, underline=underline, name=gv.name_hint, **options)
        if i:
            parts.append("")
        parts.extend(("    " + line) if line else line for line in text.split("\n"))
    if not mod.functions:
        parts.append("    pass")
    return "\n".join(parts)


def py_value(value: object) -> str:
    """Python text for a plain attribute value (numbers, strings, tuples, lists, dicts).

    Example:
        >>> py_value({"a": (1, "x"), "b": [True, None]})
        '{"a": (1, "x"), "b": [True, None]}'
    """
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    if isinstance(value, tuple):
        items = [py_value(v) for v in value]  # type: ignore[union-attr]  # a tuple of values
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(py_value(v) for v in value) + "]"  # type: ignore[union-attr]
    if isinstance(value, dict):
        pairs = (f"{py_value(k)}: {py_value(v)}" for k, v in value.items())  # type: ignore[union-attr]
        return "{" + ", ".join(pairs) + "}"
    return script(value)


register_printer(IRModule, _print_module)
register_printer(GlobalVar, lambda gv, **_: f"I.GlobalVar({json.dumps(gv.name_hint)})")
