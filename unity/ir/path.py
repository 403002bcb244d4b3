"""Paths to nodes inside an IR tree, written as `root.body.seq[1].value` or `@main.body`.

A path is a list of steps from the root: a field (`.body`), a sequence index (`[1]`),
a mapping key (`["key"]`) or, at the top of an `IRModule`, a function (`@main`).
Structural equality reports the first mismatch with one; `DiagnosticError` says where
its node sits in the module with `find_path`.

Example:
    >>> from unity import tir
    >>> x = tir.Var("x")
    >>> e = (x + 1) * 2
    >>> find_path(e, x)
    'root.a.a'
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from unity.ir.module import IRModule
from unity.ir.node import STRUCTURAL, Node

Step = tuple[str, Any]
"""One step: ("attr", name), ("index", i), ("key", k) or ("func", name)."""

_FIELDS: dict[type, tuple[str, ...]] = {}


def structural_fields(cls: type) -> tuple[str, ...]:
    """Names of the fields of dataclass `cls` that structural equality looks at.

    Fields that bind variables (`binds()`) come first, so definitions are met before uses;
    fields marked `ignored()` / `hint()` are left out.

    Example:
        >>> from unity import tir
        >>> structural_fields(tir.For)[:3]
        ('loop_var', 'min', 'extent')
    """
    names = _FIELDS.get(cls)
    if names is None:
        fields = [f for f in dataclasses.fields(cls) if f.metadata.get(STRUCTURAL) != "ignore"]
        defs = [f.name for f in fields if f.metadata.get(STRUCTURAL) == "def"]
        rest = [f.name for f in fields if f.metadata.get(STRUCTURAL) != "def"]
        names = _FIELDS[cls] = (*defs, *rest)
    return names


def format_path(steps: Sequence[Step], root: str = "root") -> str:
    """Write `steps` as text, starting at `root` (or at the function of a module).

    Example:
        >>> format_path([("attr", "body"), ("index", 1)])
        'root.body[1]'
        >>> format_path([("func", "main"), ("attr", "body")])
        '@main.body'
    """
    parts: list[str] = []
    for i, (kind, value) in enumerate(steps):
        if kind == "func":
            parts.append(f"@{value}" if i == 0 else f"[@{value}]")
        elif kind == "attr":
            parts.append(f".{value}")
        elif kind == "index":
            parts.append(f"[{value}]")
        else:
            parts.append(f"[{value!r}]")
    if steps and steps[0][0] == "func":
        return "".join(parts)
    return root + "".join(parts)


def find_path(root: object, target: object) -> str | None:
    """The path of `target` (by identity) inside `root`, or None when it is not there.

    Example:
        >>> from unity import tir
        >>> i = tir.Var("i")
        >>> find_path(tir.Evaluate(i + 1), i)
        'root.value.a'
    """
    if sys.getrecursionlimit() < 20000:
        sys.setrecursionlimit(20000)
    steps: list[Step] = []
    if _search(root, target, steps, set()):
        return format_path(steps[::-1])
    return None


def _search(obj: object, target: object, steps: list[Step], seen: set[int]) -> bool:
    """Depth-first search; on success `steps` holds the path, innermost step first."""
    if obj is target:
        return True
    if isinstance(obj, str | int | float | type(None)) or id(obj) in seen:
        return False
    seen.add(id(obj))
    for step, child in _children(obj):
        if _search(child, target, steps, seen):
            steps.append(step)
            return True
    return False


def _children(obj: object) -> list[tuple[Step, object]]:
    if isinstance(obj, IRModule):
        return [(("func", gv.name_hint), f) for gv, f in obj.functions.items()]
    if isinstance(obj, Node) or dataclasses.is_dataclass(obj):
        return [(("attr", n), getattr(obj, n)) for n in structural_fields(type(obj))]
    if isinstance(obj, tuple | list):
        return [(("index", i), c) for i, c in enumerate(obj)]
    if isinstance(obj, Mapping):
        return [(("key", k), v) for k, v in obj.items()]
    return []
