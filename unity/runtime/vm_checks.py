"""Input checks of the VM: struct-info specs compiled to closures, and shape trees.

The bytecode (see `unity.runtime.vm`) describes what a parameter or a `match_cast`
expects with a plain JSON *spec*::

    ["tensor", dtype | null, ndim (-1: any), dims | null, "(batch, 256)"]
    ["shape", ndim, dims | null, "(n, 4)"]
    ["prim", dtype, dim | null]
    ["tuple", [spec, ...]]
    ["object"]

Each dim is an int (a fixed size), ``["bind", slot]`` (the first use of a symbol:
its value is stored in slot `slot`), ``["check", tree, "n * 2"]`` (checked once every
symbol is bound) or null (anything).  A *tree* is an int, ``["slot", i]`` or
``[op, a, b]`` with op in ``+ - * // % min max``; `tree_code` turns it into Python
source over the slot list ``S`` (compiled once when the VM loads).

Example:
    >>> fn = compile_tree(["+", ["*", ["slot", 0], 2], 1])
    >>> fn([5])
    11
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from unity.runtime.narrow import held_as
from unity.runtime.tensor import Tensor, numpy_dtype

Tree = int | list[Any]
Checker = Callable[[object, list[int], list[Any]], object]
"""`check(value, slots, pending) -> value as the VM holds it` (raises ValueError)."""

_BINARY = {"+", "-", "*", "//", "%"}

TREE_OPERATORS = frozenset({*_BINARY, "min", "max"})
"""The operators of a compound shape tree ``[op, a, b]``."""


def tree_code(tree: Tree) -> str:
    """Python source of a shape tree over the slot list `S`.

    Example:
        >>> tree_code(["max", ["slot", 1], 3])
        'max(S[1], 3)'
    """
    if isinstance(tree, bool) or not isinstance(tree, int | list):
        raise ValueError(f"vm: malformed shape tree {tree!r}")  # noqa: TRY004 - bad bytecode
    if isinstance(tree, int):
        return str(int(tree))
    if tree[0] == "slot":
        return f"S[{int(tree[1])}]"
    op, a, b = tree
    if op in _BINARY:
        return f"({tree_code(a)} {op} {tree_code(b)})"
    if op in ("min", "max"):
        return f"{op}({tree_code(a)}, {tree_code(b)})"
    raise ValueError(f"vm: unknown shape operator {op!r}")


def compile_tree(tree: Tree) -> Callable[[list[int]], int]:
    """A function of the slot list computing `tree` (source from `tree_code` only).

    Example:
        >>> compile_tree(7)([])
        7
    """
    return eval(f"lambda S: {tree_code(tree)}", {"__builtins__": {"min": min, "max": max}})


def run_pending(pending: list[Any], slots: list[int]) -> None:
    """Check the dims that are expressions, once every symbol is bound.

    Example:
        >>> run_pending([], [])
    """
    for fn, actual, info in pending:
        if fn(slots) != actual:
            where, what, spec_text, shape, axis, text, slot_info = info
            raise ValueError(
                f"{where}: expected {what} {spec_text}, got {shape}: dim {axis} must be "
                f"{text} = {fn(slots)}{_slot_notes(text, slot_info, slots)}"
            )


def make_checker(spec: list[Any], where: str, slot_info: list[list[str]]) -> Checker:
    """Compile `spec` into a checker; `where` names the value in error messages.

    `slot_info[i]` is ``[symbol name, where it is bound]`` for messages.

    Example:
        >>> check = make_checker(["tensor", "float32", 1, [["bind", 0]], "(n,)"], "x", [["n", ""]])
        >>> S = [0]; _ = check(np.zeros(3, "float32"), S, []); S
        [3]
    """
    kind = spec[0]
    if kind == "tensor":
        return _tensor_checker(spec, where, slot_info)
    if kind == "shape":
        return _shape_checker(spec, where, slot_info)
    if kind == "prim":
        return _prim_checker(spec, where, slot_info)
    if kind == "tuple":
        fields = [make_checker(f, f"{where} field {i}", slot_info) for i, f in enumerate(spec[1])]
        return _tuple_checker(fields, where)
    return lambda value, S, pending: value


def _dims_plan(dims: list[Any] | None) -> tuple[list[Any], list[Any], list[Any]]:
    consts, binds, checks = [], [], []
    for axis, d in enumerate(dims or ()):
        if isinstance(d, int):
            consts.append((axis, d))
        elif isinstance(d, list) and d[0] == "bind":
            binds.append((axis, int(d[1])))
        elif isinstance(d, list) and d[0] == "check":
            checks.append((axis, compile_tree(d[1]), d[2]))
    return consts, binds, checks


def _slot_notes(tree_text: str, slot_info: list[list[str]], slots: list[int]) -> str:
    notes = [
        f"{name} = {slots[i]} from {origin}"
        for i, (name, origin) in enumerate(slot_info)
        if name in tree_text.replace("(", " ").replace(")", " ").replace(",", " ").split()
    ]
    return f" ({'; '.join(notes)})" if notes else ""


def _dim_checks(
    shape: tuple[int, ...], spec_text: str, what: str, where: str,
    consts: list[Any], binds: list[Any], checks: list[Any], S: list[int], pending: list[Any],
    slot_info: list[list[str]],
) -> None:  # fmt: skip
    for axis, d in consts:
        if shape[axis] != d:
            raise ValueError(
                f"{where}: expected {what} {spec_text}, got {shape}: dim {axis} must be {d}"
            )
    for axis, slot in binds:
        S[slot] = shape[axis]
    for axis, fn, text in checks:
        pending.append((fn, shape[axis], (where, what, spec_text, shape, axis, text, slot_info)))


def _tensor_checker(spec: list[Any], where: str, slot_info: list[list[str]]) -> Checker:
    _, dtype, ndim, dims, text = spec
    np_dtype = numpy_dtype(dtype) if dtype not in (None, "void") else None
    consts, binds, checks = _dims_plan(dims)
    what = f"a {dtype if np_dtype is not None else ''} tensor of shape".replace("a  ", "a ")

    def check(value: object, S: list[int], pending: list[Any]) -> object:
        arr = value._array if type(value) is Tensor else value
        if type(arr) is not np.ndarray:
            if not isinstance(arr, np.ndarray | np.generic):  # a numpy scalar: a 0-d array
                raise ValueError(f"{where}: expected {what} {text}, got {type(value).__name__}")
            arr = np.asarray(arr)
        if np_dtype is not None and arr.dtype != np_dtype:
            held = held_as(arr, dtype)  # a narrow type held widened
            if held is None:
                raise ValueError(f"{where}: expected dtype {dtype}, got {arr.dtype.name}")
            arr = held
        shape = arr.shape
        if ndim >= 0 and len(shape) != ndim:
            raise ValueError(
                f"{where}: expected rank {ndim} ({what} {text}), got rank {len(shape)} "
                f"with shape {shape}"
            )
        _dim_checks(shape, text, what, where, consts, binds, checks, S, pending, slot_info)
        return arr if arr.flags.c_contiguous else np.asarray(arr, order="C")

    return check


def _shape_checker(spec: list[Any], where: str, slot_info: list[list[str]]) -> Checker:
    _, ndim, dims, text = spec
    consts, binds, checks = _dims_plan(dims)

    def check(value: object, S: list[int], pending: list[Any]) -> object:
        if not isinstance(value, tuple | list) or not all(
            isinstance(v, int | np.integer) for v in value
        ):
            raise ValueError(f"{where}: expected a shape {text}, got {value!r}")
        shape = tuple(int(v) for v in value)
        if ndim >= 0 and len(shape) != ndim:
            raise ValueError(f"{where}: expected a shape of {ndim} dims {text}, got {shape}")
        _dim_checks(shape, text, "a shape", where, consts, binds, checks, S, pending, slot_info)
        return shape

    return check


def _prim_checker(spec: list[Any], where: str, slot_info: list[list[str]]) -> Checker:
    _, dtype, dim = spec
    is_int = dtype.startswith(("int", "uint")) or dtype == "bool"
    consts, binds, checks = _dims_plan([dim])

    def check(value: object, S: list[int], pending: list[Any]) -> object:
        if isinstance(value, Tensor):
            value = value._array
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if not isinstance(value, int | float | np.number) or (
            is_int and not float(value).is_integer()
        ):
            raise ValueError(f"{where}: expected a {dtype} scalar, got {value!r}")
        value = int(value) if is_int else float(value)
        if is_int:
            _dim_checks(
                (value,), dtype, "a scalar", where, consts, binds, checks, S, pending, slot_info
            )
        return value

    return check


def _tuple_checker(fields: list[Checker], where: str) -> Checker:
    def check(value: object, S: list[int], pending: list[Any]) -> object:
        if not isinstance(value, tuple | list) or len(value) != len(fields):
            raise ValueError(f"{where}: expected a tuple of {len(fields)} fields, got {value!r}")
        return tuple(f(v, S, pending) for f, v in zip(fields, value, strict=True))

    return check
