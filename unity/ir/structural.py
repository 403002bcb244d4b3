"""Structural equality and hashing of IR, up to renaming of bound variables.

Two IRs are structurally equal when they have the same node types and the same field
values, where:

- fields declared `ignored()` / `hint()` (spans, name hints) are skipped;
- variables (any class with `structural_kind = "var"`, such as `tir.Var` and
  `tir.Buffer`) match through a bijection built on first encounter: a variable in a
  `binds()` field is always a definition; a free variable is mapped on first encounter
  too when `map_free_vars=True`, else it must be the very same object. The fields of a
  variable (a buffer's shape, dtype, strides, scope, ...) are compared when it is mapped;
- `GlobalVar`s compare by name, `Op`s by identity, `IRModule`s function by function
  (matched by name) and by attributes;
- leaves: enums, strings, numbers (NaN equals NaN), None, tuples/lists, mappings (same
  keys, values compared structurally), numpy arrays (dtype, shape, values), sympy
  expressions (equal after `sympy.expand`); `register_leaf_equal` adds more.

Values of different kinds are simply unequal (no exception). `structural_hash` agrees
with equality: variables hash by the order in which they are first met, not identity.

Example:
    >>> from unity import tir
    >>> x, y = tir.Var("x"), tir.Var("y")
    >>> structural_equal(x + 1, y + 1), structural_equal(x + 1, y + 2)
    (True, False)
    >>> structural_hash(x + 1) == structural_hash(y + 1)
    True
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable, Mapping
from enum import Enum
from numbers import Integral, Real
from typing import Any

from unity.ir.module import GlobalVar, IRModule
from unity.ir.node import STRUCTURAL, Node
from unity.ir.op import Op
from unity.ir.path import Step, format_path, structural_fields

LeafEqual = Callable[[Any, Any], bool]
LeafHash = Callable[[Any], int]

_LEAVES: dict[type, tuple[LeafEqual, LeafHash | None]] = {}
_KINDS: dict[type, str] = {}
_MIN_RECURSION = 20000


def register_leaf_equal(cls: type, equal: LeafEqual, hash_fn: LeafHash | None = None) -> None:
    """Compare instances of `cls` (and subclasses) with `equal` instead of field by field.

    `hash_fn` must give equal values the same hash; without it all instances of `cls`
    hash alike (correct, only slower in hash tables).

    Example:
        >>> import fractions
        >>> register_leaf_equal(fractions.Fraction, lambda a, b: a == b, hash)
    """
    _LEAVES[cls] = (equal, hash_fn)
    _KINDS.clear()


def structural_equal(lhs: object, rhs: object, map_free_vars: bool = True) -> bool:
    """Whether `lhs` and `rhs` are the same IR up to renaming of variables.

    Example:
        >>> from unity import tir
        >>> i, j = tir.Var("i"), tir.Var("j")
        >>> structural_equal(tir.Evaluate(i * 2), tir.Evaluate(j * 2))
        True
        >>> structural_equal(tir.Evaluate(i * 2), tir.Evaluate(j * 2), map_free_vars=False)
        False
    """
    _ensure_recursion_limit()
    return _Equal(map_free_vars).equal(lhs, rhs)


def assert_structural_equal(lhs: object, rhs: object, map_free_vars: bool = True) -> None:
    """Raise `AssertionError` naming and underlining the first mismatch unless equal.

    The message gives the path of the mismatching node on each side
    (`root.body.seq[1].value.b`, or `@main.body...` inside a module), what differs,
    and both IRs printed with that node underlined.

    Example:
        >>> from unity import tir
        >>> x = tir.Var("x")
        >>> assert_structural_equal(x + 1, x + 2)
        Traceback (most recent call last):
        ...
        AssertionError: not structurally equal: IntImm.value differs: 1 vs 2
        lhs at root.b:
        x + 1
            ^
        rhs at root.b:
        x + 2
            ^
    """
    _ensure_recursion_limit()
    checker = _Equal(map_free_vars)
    if checker.equal(lhs, rhs):
        return
    raise AssertionError(checker.report(lhs, rhs))


def structural_hash(obj: object, map_free_vars: bool = True) -> int:
    """A hash that agrees with `structural_equal`: equal IRs hash alike.

    Example:
        >>> from unity import tir
        >>> a, b = tir.Var("a"), tir.Var("b")
        >>> structural_hash(a * b) == structural_hash(b * a)  # both are `v0 * v1`
        True
    """
    del map_free_vars  # free variables hash by first-encounter order either way
    _ensure_recursion_limit()
    return _Hasher().hash(obj)


def _ensure_recursion_limit() -> None:
    if sys.getrecursionlimit() < _MIN_RECURSION:
        sys.setrecursionlimit(_MIN_RECURSION)


# -- kinds -------------------------------------------------------------------------------
def _kind(cls: type) -> str:
    """Classify `cls` once: how its instances are compared and hashed."""
    kind = _KINDS.get(cls)
    if kind is None:
        kind = _KINDS[cls] = _classify(cls)
    return kind


def _classify(cls: type) -> str:
    if any(base in _LEAVES for base in cls.__mro__):
        return "leaf"
    if issubclass(cls, Op):
        return "op"
    if issubclass(cls, GlobalVar):
        return "gvar"
    if dataclasses.is_dataclass(cls):
        return "var" if getattr(cls, "structural_kind", None) == "var" else "node"
    simple = _simple_kind(cls)
    if simple is not None:
        return simple
    if _is_sympy(cls):
        return "sympy"
    return "other"


def _simple_kind(cls: type) -> str | None:
    if cls is type(None):
        return "none"
    if issubclass(cls, IRModule):
        return "module"
    if issubclass(cls, Enum):
        return "enum"
    if issubclass(cls, str | bytes):
        return "str"
    if issubclass(cls, Integral | Real):  # bool, int, float and numpy scalars
        return "num"
    if issubclass(cls, tuple | list):
        return "seq"
    if issubclass(cls, Mapping):
        return "map"
    numpy = sys.modules.get("numpy")
    if numpy is not None and issubclass(cls, numpy.ndarray):
        return "ndarray"
    return None


def _is_sympy(cls: type) -> bool:
    sympy = sys.modules.get("sympy")
    return sympy is not None and issubclass(cls, sympy.Basic)


def _leaf_rule(cls: type) -> tuple[LeafEqual, LeafHash | None]:
    for base in cls.__mro__:
        if base in _LEAVES:
            return _LEAVES[base]
    raise KeyError(cls)  # unreachable: only called for kind "leaf"


def _num_equal(a: Any, b: Any) -> bool:
    if a == b:
        return True
    return isinstance(a, float | Real) and isinstance(b, float | Real) and _both_nan(a, b)


def _both_nan(a: Any, b: Any) -> bool:
    try:
        return math.isnan(a) and math.isnan(b)
    except (TypeError, ValueError, OverflowError):
        return False


def _array_equal(a: Any, b: Any) -> bool:
    import numpy as np

    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def _sympy_equal(a: Any, b: Any) -> bool:
    import sympy

    return bool(a == b or sympy.expand(a) == sympy.expand(b))


def _safely(equal: LeafEqual, a: Any, b: Any) -> bool:
    """`equal(a, b)`, where a comparator that raises means "not equal" (never a crash)."""
    try:
        return bool(equal(a, b))
    except Exception:  # noqa: BLE001 - structural_equal returns False, it does not raise
        return False


def _describe(value: object) -> str:
    """A short description of a value for the mismatch message (script for nodes)."""
    if isinstance(value, Node):
        try:
            text = value.script()
        except Exception:  # noqa: BLE001 - the description is best effort
            text = ""
        name = type(value).__name__
        return f"{name} `{text}`" if text and "\n" not in text and len(text) < 60 else name
    if isinstance(value, tuple | list):
        kinds = ", ".join(type(item).__name__ for item in value[:6])
        more = ", ..." if len(value) > 6 else ""
        return f"{len(value)} items ({kinds}{more})" if value else "0 items"
    if isinstance(value, Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, str | int | float | type(None)):
        return repr(value)
    return type(value).__name__


# -- equality -----------------------------------------------------------------------------
class _Equal:
    """One comparison: the variable bijection and, after a failure, where it happened."""

    def __init__(self, map_free_vars: bool) -> None:
        self.map_free_vars = map_free_vars
        self.lhs_to_rhs: dict[int, object] = {}
        self.rhs_to_lhs: dict[int, object] = {}
        self.keep: list[object] = []  # keeps mapped objects alive so their ids stay unique
        self.defining = 0
        self.steps: list[Step] = []  # path of the failure, innermost step first
        self.reason: str | Callable[[], str] = ""
        self.nodes: tuple[object, object] | None = None
        self.node_depth = 0  # steps below the mismatching node (they belong to `reason`)

    def equal(self, a: object, b: object) -> bool:
        kind = _kind(type(a))
        if kind != _kind(type(b)):
            return self.differ(a, b)
        return _EQ_DISPATCH[kind](self, a, b)

    def differ(self, a: object, b: object) -> bool:
        """`fail` with both values described (printed only for a report: printing large
        expressions cost schedules minutes where `structural_equal` only answers)."""
        return self.fail(a, b, lambda: f"{_describe(a)} vs {_describe(b)}")

    def fail(self, a: object, b: object, reason: str | Callable[[], str]) -> bool:
        """Record the innermost failure (first call wins) and return False."""
        if not self.reason:
            self.reason = reason
        if self.nodes is None and isinstance(a, Node) and isinstance(b, Node):
            self.nodes = (a, b)
            self.node_depth = len(self.steps)
        return False

    def step_failed(self, step: Step, a: object, b: object) -> bool:
        """Add `step` to the failure path while unwinding from a child of `a`/`b`."""
        self.steps.append(step)
        return self.fail(a, b, "")

    def _eq_node(self, a: Any, b: Any) -> bool:
        if type(a) is not type(b):
            return self.differ(a, b)
        for name, is_def in _field_plan(type(a)):
            x, y = getattr(a, name), getattr(b, name)
            ok = self._define(x, y) if is_def else self.equal(x, y)
            if not ok:
                return self.step_failed(("attr", name), a, b)
        return True

    def _define(self, a: object, b: object) -> bool:
        """Compare values of a `binds()` field: variables in it are definitions."""
        if _kind(type(a)) == "var" and type(a) is type(b):
            return self._eq_var(a, b, define=True)
        if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                if not self._define(x, y):
                    return self.step_failed(("index", i), a, b)
            return True
        return self.equal(a, b)

    def _eq_var(self, a: Any, b: Any, define: bool = False) -> bool:
        mapped = self.lhs_to_rhs.get(id(a))
        if mapped is not None:
            return mapped is b or self.fail(a, b, self._var_reason(a, b, mapped))
        if id(b) in self.rhs_to_lhs:
            return self.fail(a, b, self._var_reason(a, b, self.rhs_to_lhs[id(b)]))
        if not (define or self.defining or self.map_free_vars):
            return a is b or self.fail(a, b, f"free variables {_name(a)} and {_name(b)} differ")
        if type(a) is not type(b):
            return self.differ(a, b)
        self.defining += 1
        try:
            ok = self._eq_node(a, b)
        finally:
            self.defining -= 1
        if ok:
            self.lhs_to_rhs[id(a)], self.rhs_to_lhs[id(b)] = b, a
            self.keep += (a, b)
        return ok

    def _var_reason(self, a: object, b: object, other: object) -> str:
        if self.lhs_to_rhs.get(id(a)) is other:
            mine, theirs = _name(other), _name(b)
            head = f"lhs {_name(a)} is bound to rhs {mine}"
        else:
            mine, theirs = _name(other), _name(a)
            head = f"rhs {_name(b)} is bound to lhs {mine}"
        same = " (a different variable of the same name)" if mine == theirs else ""
        return f"{head}, but here it meets {theirs}{same}"

    def _eq_gvar(self, a: Any, b: Any) -> bool:
        ok = a.name_hint == b.name_hint
        return ok or self.fail(a, b, f"@{a.name_hint} vs @{b.name_hint}")

    def _eq_op(self, a: Any, b: Any) -> bool:
        return a is b or self.fail(a, b, f"op {a.name} vs {b.name}")

    def _eq_module(self, a: IRModule, b: IRModule) -> bool:
        names_a = sorted(gv.name_hint for gv in a.functions)
        names_b = sorted(gv.name_hint for gv in b.functions)
        if names_a != names_b:
            return self.fail(a, b, f"functions {names_a} vs {names_b}")
        for name in names_a:
            if not self.equal(a[name], b[name]):
                self.steps.append(("func", name))
                return False
        if not self.equal(a.attrs, b.attrs):
            self.steps.append(("attr", "attrs"))
            return False
        return True

    def _eq_seq(self, a: Any, b: Any) -> bool:
        if len(a) != len(b):
            return self.differ(a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            if not self.equal(x, y):
                return self.step_failed(("index", i), a, b)
        return True

    def _eq_map(self, a: Mapping[Any, Any], b: Mapping[Any, Any]) -> bool:
        if a.keys() != b.keys():
            return self.fail(a, b, f"keys {sorted(map(str, a))} vs {sorted(map(str, b))}")
        for key, x in a.items():
            if not self.equal(x, b[key]):
                return self.step_failed(("key", key), a, b)
        return True

    def _leaf(self, ok: bool, a: object, b: object) -> bool:
        return ok or self.differ(a, b)

    def _eq_none(self, a: object, b: object) -> bool:
        return True

    def _eq_enum(self, a: object, b: object) -> bool:
        return self._leaf(a is b, a, b)

    def _eq_str(self, a: object, b: object) -> bool:
        return self._leaf(a == b, a, b)

    def _eq_num(self, a: object, b: object) -> bool:
        return self._leaf(_num_equal(a, b), a, b)

    def _eq_ndarray(self, a: object, b: object) -> bool:
        return self._leaf(_safely(_array_equal, a, b), a, b)

    def _eq_sympy(self, a: object, b: object) -> bool:
        return self._leaf(_safely(_sympy_equal, a, b), a, b)

    def _eq_leaf(self, a: object, b: object) -> bool:
        equal, _ = _leaf_rule(type(a))
        return self._leaf(type(a) is type(b) and _safely(equal, a, b), a, b)

    def _eq_other(self, a: object, b: object) -> bool:
        if a is b:
            return True
        try:
            return self._leaf(type(a) is type(b) and bool(a == b), a, b)
        except Exception:  # noqa: BLE001 - an odd __eq__ means "not equal", never a crash
            return self.differ(a, b)

    # -- the report ---------------------------------------------------------------------
    def report(self, lhs: object, rhs: object) -> str:
        """The assertion message: reason, path on each side, both IRs underlined."""
        steps = self.steps[::-1]
        node_steps = steps[: len(steps) - self.node_depth] if self.nodes else steps
        below = format_path(steps[len(node_steps) :], root="")
        what = f"{type(self.nodes[0]).__name__}{below}" if self.nodes and below else ""
        why = self.reason() if callable(self.reason) else self.reason
        reason = f"{what} differs: {why}" if what else why
        path = format_path(node_steps)
        lines = [f"not structurally equal: {reason}"]
        marks = self.nodes or (None, None)
        printed = [_print(lhs, marks[0]), _print(rhs, marks[1])]
        if printed[0] and printed[0] == printed[1]:
            lines.append("note: both sides print alike; the difference is one the script does not "
                         "show (e.g. a nested SeqStmt or a variable bound in another place)")
        for side, text in zip(("lhs", "rhs"), printed):
            lines.append(f"{side} at {path}:")
            if text:
                lines.append(text)
        return "\n".join(lines)


_PLANS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _field_plan(cls: type) -> tuple[tuple[str, bool], ...]:
    """(field name, whether it binds variables) for each compared field of `cls`."""
    plan = _PLANS.get(cls)
    if plan is None:
        binding = {f.name for f in dataclasses.fields(cls) if f.metadata.get(STRUCTURAL) == "def"}
        plan = _PLANS[cls] = tuple((n, n in binding) for n in structural_fields(cls))
    return plan


def _name(var: object) -> str:
    return str(getattr(var, "name", None) or getattr(var, "name_hint", None) or type(var).__name__)


def _print(root: object, node: object | None) -> str:
    """Print `root` with `node` underlined; empty when no printer handles it yet."""
    try:
        from unity.ir.printer import script

        return script(root, underline=(node,) if node is not None else ())
    except Exception:  # noqa: BLE001 - the path alone still locates the mismatch
        return ""


# -- hashing ------------------------------------------------------------------------------
class _Hasher:
    """One hash computation: variables are numbered in the order they are first met."""

    def __init__(self) -> None:
        self.var_ids: dict[int, int] = {}
        self.keep: list[object] = []

    def hash(self, obj: object) -> int:
        return _HASH_DISPATCH[_kind(type(obj))](self, obj)

    def _hash_node(self, obj: Any) -> int:
        cls = type(obj)
        parts: list[object] = [cls.__qualname__]
        for name in structural_fields(cls):  # a loop, not a generator: no C-level recursion
            parts.append(self.hash(getattr(obj, name)))
        return hash(tuple(parts))

    def _hash_var(self, obj: Any) -> int:
        index = self.var_ids.get(id(obj))
        if index is not None:
            return hash(("var-use", index))
        self.var_ids[id(obj)] = len(self.var_ids)
        self.keep.append(obj)
        return hash(("var-def", self._hash_node(obj)))

    def _hash_gvar(self, obj: Any) -> int:
        return hash(("gvar", obj.name_hint))

    def _hash_op(self, obj: Any) -> int:
        return hash(("op", obj.name))

    def _hash_module(self, obj: IRModule) -> int:
        parts: list[object] = ["module"]
        for name in sorted(gv.name_hint for gv in obj.functions):
            parts += (name, self.hash(obj[name]))
        parts.append(self.hash(obj.attrs))
        return hash(tuple(parts))

    def _hash_seq(self, obj: Any) -> int:
        parts: list[object] = ["seq"]
        for item in obj:
            parts.append(self.hash(item))
        return hash(tuple(parts))

    def _hash_map(self, obj: Mapping[Any, Any]) -> int:
        parts: list[object] = ["map"]
        for key in sorted(obj, key=str):
            parts += (str(key), self.hash(obj[key]))
        return hash(tuple(parts))

    def _hash_none(self, obj: object) -> int:
        return 0

    def _hash_enum(self, obj: Any) -> int:
        return hash((type(obj).__qualname__, obj.name))

    def _hash_str(self, obj: Any) -> int:
        return hash(obj)

    def _hash_num(self, obj: Any) -> int:
        return hash("nan") if _both_nan(obj, obj) else hash(obj)

    def _hash_ndarray(self, obj: Any) -> int:
        import numpy as np

        data = obj
        if obj.dtype.kind in "fc":
            data = np.where(np.isnan(obj), 0, obj) + 0  # NaN payloads and -0.0 hash alike
        values = data.tobytes() if obj.dtype.kind != "O" else b""
        return hash(("ndarray", obj.dtype.str, obj.shape, values))

    def _hash_sympy(self, obj: Any) -> int:
        import sympy

        return hash(sympy.expand(obj))

    def _hash_leaf(self, obj: object) -> int:
        _, hash_fn = _leaf_rule(type(obj))
        return hash((type(obj).__qualname__, hash_fn(obj) if hash_fn else 0))

    def _hash_other(self, obj: object) -> int:
        return hash(type(obj).__qualname__)


_EQ_DISPATCH: dict[str, Callable[[_Equal, Any, Any], bool]] = {
    name[len("_eq_") :]: fn for name, fn in vars(_Equal).items() if name.startswith("_eq_")
}
_HASH_DISPATCH: dict[str, Callable[[_Hasher, Any], int]] = {
    name[len("_hash_") :]: fn for name, fn in vars(_Hasher).items() if name.startswith("_hash_")
}
