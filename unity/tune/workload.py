"""Workloads: the distinct PrimFuncs of a module, each with a key stable across processes.

`structural_hash` is built on Python's `hash`, whose value for strings changes from one
process to the next (hash randomization), so it cannot key a database file.
`workload_key` walks the same structural fields (`unity.ir.path.structural_fields`:
spans and name hints skipped, variables numbered by first encounter) into a SHA-256
digest instead.  Function attributes are left out: ``tir.is_scheduled`` or
``op_pattern`` do not change what a function computes.

Example:
    >>> from unity import te
    >>> A = te.placeholder((4,), name="A")
    >>> f = te.create_prim_func([A, te.compute((4,), lambda i: A[i] + 1.0, name="B")])
    >>> len(workload_key(f))
    16
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from numbers import Integral, Real
from typing import Any

from unity.ir.module import GlobalVar, IRModule
from unity.ir.op import Op
from unity.ir.path import structural_fields
from unity.tir.function import PrimFunc

__all__ = ["Task", "extract_tasks", "workload_key"]


def workload_key(func: PrimFunc) -> str:
    """A 16-hex-digit key equal for structurally equal PrimFuncs, in any process.

    Example:
        >>> workload_key(f) == workload_key(f.with_attr("tir.is_scheduled", True))  # doctest: +SKIP
        True
    """
    if sys.getrecursionlimit() < 20000:
        sys.setrecursionlimit(20000)
    digest = hashlib.sha256()
    _Keyer(digest).visit(func.replace(attrs={}))
    return digest.hexdigest()[:16]


class _Keyer:
    """Feed a canonical token stream of an IR value into a hash."""

    def __init__(self, digest: Any) -> None:
        self.digest = digest
        self.var_ids: dict[int, int] = {}
        self.keep: list[object] = []  # keep numbered vars alive: ids stay unique

    def emit(self, *tokens: object) -> None:
        self.digest.update(("\x1f".join(str(t) for t in tokens) + "\x1e").encode())

    def visit(self, obj: object) -> None:
        if obj is None or isinstance(obj, str | bytes | Enum | Integral | Real):
            self.emit(type(obj).__name__, obj)
        elif isinstance(obj, Op):
            self.emit("op", obj.name)
        elif isinstance(obj, GlobalVar):
            self.emit("gvar", obj.name_hint)
        elif isinstance(obj, tuple | list):
            self._sequence(obj)
        elif isinstance(obj, Mapping):
            self._mapping(obj)
        elif dataclasses.is_dataclass(obj):
            self._node(obj)
        elif isinstance(obj, IRModule):
            self._mapping({gv.name_hint: f for gv, f in obj.items()})
        else:
            self._other(obj)

    def _node(self, obj: Any) -> None:
        if getattr(type(obj), "structural_kind", None) == "var":
            index = self.var_ids.get(id(obj))
            if index is not None:
                self.emit("var-use", index)
                return
            self.var_ids[id(obj)] = len(self.var_ids)
            self.keep.append(obj)
            self.emit("var-def")
        self.emit("node", type(obj).__qualname__)
        for name in structural_fields(type(obj)):
            self.visit(getattr(obj, name))
        self.emit("end")

    def _sequence(self, items: Any) -> None:
        self.emit("seq", len(items))
        for item in items:
            self.visit(item)

    def _mapping(self, obj: Mapping[Any, Any]) -> None:
        self.emit("map", len(obj))
        for key in sorted(obj, key=str):
            self.emit(str(key))
            self.visit(obj[key])

    def _other(self, obj: object) -> None:
        import numpy as np

        if isinstance(obj, np.ndarray):
            self.emit("ndarray", obj.dtype.str, obj.shape)
            self.digest.update(np.asarray(obj, order="C").tobytes())
        else:  # sympy and other leaves: their printed form is canonical enough
            self.emit(type(obj).__qualname__, obj)


@dataclass(frozen=True)
class Task:
    """One distinct workload to tune.

    Attributes:
        key: `workload_key` of the function.
        name: A readable name (the first function name it was found under).
        func: The unscheduled PrimFunc.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((8,), name="A")
        >>> func = te.create_prim_func([A, te.compute((8,), lambda i: A[i] * 2.0, name="B")])
        >>> task = Task(workload_key(func), "scale", func)
        >>> task.key == workload_key(func), task.name
        (True, 'scale')
    """

    key: str
    name: str
    func: PrimFunc


def extract_tasks(mod: IRModule | PrimFunc) -> list[Task]:
    """The distinct unscheduled PrimFuncs of `mod`, after legalization and fusion.

    A relax module goes through the default pipeline up to (not including) the default
    schedules, exactly as `unity.compile` would run it, so the keys found here are the
    keys `ApplyTuningDatabase` meets at compile time.

    Example:
        >>> [t.name for t in extract_tasks(mod)]  # doctest: +SKIP
        ['fused_matmul_add', 'relu']
    """
    if isinstance(mod, PrimFunc):
        mod = IRModule({"main": mod})
    if not isinstance(mod, IRModule):
        raise TypeError(f"unity.tune: expected an IRModule or a PrimFunc, got {type(mod).__name__}")
    if any(not isinstance(f, PrimFunc) for _, f in mod.items()):
        mod = _legalize_and_fuse(mod)
    tasks: dict[str, Task] = {}
    for gv, func in mod.items():
        if isinstance(func, PrimFunc) and not func.attrs.get("tir.is_scheduled"):
            key = workload_key(func)
            tasks.setdefault(key, Task(key, gv.name_hint, func))
    return list(tasks.values())


def _legalize_and_fuse(mod: IRModule) -> IRModule:
    from unity.ir.transform import PassContext, Sequential
    from unity.relax.pipeline import get_pipeline

    passes = get_pipeline("default", PassContext.current().opt_level).passes
    prefix = []
    for p in passes:
        if type(p).__name__ == "DefaultSchedules":  # the first pass that schedules
            break
        prefix.append(p)
    return Sequential(prefix, name="unity.tune.extract")(mod)
