"""Every public API has a docstring with an example; every pass module opens with before/after.

The definition of done asks for a short `Example:` on every public function, method and
class, and for every pass file to start with a before/after example of what it does.
This test walks `unity/` with `ast` (nothing is imported) and lists what is missing;
a second test runs the examples of every module with `doctest` (`# doctest: +SKIP` marks
the few that need a GPU or a long build).

Skipped on purpose: names starting with `_` (and everything inside them), dunder methods,
dispatch hooks (`visit_*_`, `e_*_` and other `verb_<node>_` per IR node class, `eval_Call` per
Python `ast` class), property getters/setters, `@overload` stubs, nested functions,
and methods that override a documented method of a base class defined in `unity/`
(`transform_module`, `transform_function`, ...: the base documents the contract).
"""

from __future__ import annotations

import ast
import doctest
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent / "unity"
EXAMPLE = re.compile(r"^\s*(Examples?:|>>>)", re.MULTILINE)
BEFORE_AFTER = re.compile(r"\bBefore\b.*\bAfter\b", re.DOTALL)
HOOK = re.compile(r"[a-z]+_\w*[a-z0-9]_|[a-z]+_[A-Z]\w*")
"""Dispatch hooks: `visit_add_`/`e_add_` per IR node class, `eval_Call` per Python `ast` class."""
PASS_BASES = {"Pass", "ModulePass", "FunctionPass"}
SKIP_DECORATORS = {"property", "cached_property", "overload", "setter", "deleter", "getter"}


@dataclass
class ClassInfo:
    """What the override check needs from a class: its base names and documented methods."""

    bases: list[str]
    documented: set[str] = field(default_factory=lambda: set[str]())


def _files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT.parent))


def _base_name(expr: ast.expr) -> str:
    if isinstance(expr, ast.Subscript):
        return _base_name(expr.value)
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else ""


def _decorator_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = {_base_name(d.func if isinstance(d, ast.Call) else d) for d in func.decorator_list}
    return names


def _defs(body: list[ast.stmt]) -> list[ast.stmt]:
    """Definitions in `body`, looking through module-level `if`/`try` blocks."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.If | ast.Try):
            for block in (stmt.body, stmt.orelse, getattr(stmt, "finalbody", [])):
                out.extend(_defs(block))
        else:
            out.append(stmt)
    return out


def _class_table(trees: dict[Path, ast.Module]) -> dict[str, list[ClassInfo]]:
    table: dict[str, list[ClassInfo]] = {}
    for tree in trees.values():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            info = ClassInfo([_base_name(b) for b in cls.bases])
            for item in cls.body:
                is_def = isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                if is_def and ast.get_docstring(item):
                    info.documented.add(item.name)
            table.setdefault(cls.name, []).append(info)
    return table


def _overrides(bases: list[str], name: str, table: dict[str, list[ClassInfo]]) -> bool:
    seen: set[str] = set()
    todo = list(bases)
    while todo:
        base = todo.pop()
        if base in seen:
            continue
        seen.add(base)
        for info in table.get(base, []):
            if name in info.documented:
                return True
            todo.extend(info.bases)
    return False


def _has_example(node: ast.AST) -> bool:
    doc = ast.get_docstring(node)  # type: ignore[arg-type]  # only defs/modules reach here
    return bool(doc and EXAMPLE.search(doc))


def _check_class(cls: ast.ClassDef, where: str, table: dict[str, list[ClassInfo]]) -> list[str]:
    bad = [] if _has_example(cls) else [f"{where}:{cls.lineno} class {cls.name}"]
    bases = [_base_name(b) for b in cls.bases]
    for item in cls.body:
        if isinstance(item, ast.ClassDef) and not item.name.startswith("_"):
            bad += _check_class(item, where, table)
        if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if item.name.startswith("_") or HOOK.fullmatch(item.name):
            continue
        if _decorator_names(item) & SKIP_DECORATORS or _overrides(bases, item.name, table):
            continue
        if not _has_example(item):
            bad.append(f"{where}:{item.lineno} method {cls.name}.{item.name}")
    return bad


def _check_module(where: str, tree: ast.Module, table: dict[str, list[ClassInfo]]) -> list[str]:
    bad: list[str] = []
    for item in _defs(tree.body):
        if isinstance(item, ast.ClassDef) and not item.name.startswith("_"):
            bad += _check_class(item, where, table)
        elif isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            if item.name.startswith("_") or HOOK.fullmatch(item.name):
                continue
            if _decorator_names(item) & SKIP_DECORATORS:
                continue
            if not _has_example(item):
                bad.append(f"{where}:{item.lineno} function {item.name}")
    return bad


def _is_pass_module(path: Path, tree: ast.Module) -> bool:
    if "transform" not in path.relative_to(ROOT).parts[:-1]:
        return False
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    return any({_base_name(b) for b in c.bases} & PASS_BASES for c in classes)


def find_offenders() -> list[str]:
    """List every public definition without an example and every pass file without before/after.

    Example:
        >>> isinstance(find_offenders(), list)
        True
    """
    trees = {p: ast.parse(p.read_text(), filename=str(p)) for p in _files()}
    table = _class_table(trees)
    bad: list[str] = []
    for path, tree in trees.items():
        if path.name.startswith("_") and path.name != "__init__.py":
            continue  # a private module: its names are not public API
        bad += _check_module(_rel(path), tree, table)
        if _is_pass_module(path, tree):
            doc = ast.get_docstring(tree) or ""
            if not BEFORE_AFTER.search(doc):
                bad.append(f"{_rel(path)}:1 pass module docstring has no Before/After example")
    return bad


def test_checker_flags_missing_examples(tmp_path: Path):
    src = 'def f():\n    """Doc."""\n\n\nclass A:\n    """Doc.\n\n    Example:\n        >>> 1\n'
    src += '        1\n    """\n\n    def __init__(self): ...\n\n    def visit_x_(self): ...\n'
    tree = ast.parse(src)
    assert _check_module("m.py", tree, _class_table({tmp_path: tree})) == ["m.py:1 function f"]


def test_every_public_api_has_an_example():
    offenders = find_offenders()
    if offenders:
        pytest.fail(f"{len(offenders)} missing examples:\n" + "\n".join(offenders))


def _module_names() -> list[str]:
    names = []
    for path in _files():
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _extra_globals() -> dict[str, Any]:
    """Names the older examples assume without importing (as the per-package runners give)."""
    from unity import tir
    from unity.ir.module import IRModule
    from unity.runtime.device import Device
    from unity.tir.expr import const

    return {"np": np, "tir": tir, "IRModule": IRModule, "const": const, "Device": Device}


@pytest.mark.parametrize("name", _module_names())
def test_examples_run(name: str):
    module = importlib.import_module(name)
    globs = {**_extra_globals(), **vars(module)}  # the module's own names win
    result = doctest.testmod(module, globs=globs, optionflags=doctest.ELLIPSIS, report=False)
    assert result.failed == 0, f"{result.failed} failing example(s) in {name}; run doctest on it"
