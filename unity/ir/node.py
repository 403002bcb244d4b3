"""The base of every IR node: frozen, slotted dataclasses with identity `==`.

Structural equality lives apart (`unity.ir.structural`) and reads the field
metadata declared here: `ignored()` fields (spans, name hints) take no part in
it, and `binds()` fields define variables that are matched by position.

Example:
    >>> from unity.ir.node import Node, node
    >>> @node
    ... class Pair(Node):
    ...     a: int
    ...     b: int
    >>> p = Pair(1, 2)
    >>> p.replace(a=1) is p
    True
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field
from typing import Any, TypeVar

_T = TypeVar("_T")
_F = TypeVar("_F")

try:
    from typing import dataclass_transform
except ImportError:  # Python 3.10: the decorator only helps type checkers

    def dataclass_transform(**_: Any) -> Callable[[_F], _F]:  # type: ignore[no-redef]
        return lambda f: f

STRUCTURAL = "structural"
"""Key of the field metadata read by structural equality: "ignore" or "def"."""



def ignored(default: Any = None, *, kw_only: bool = True) -> Any:
    """Declare a field that structural equality and hashing skip (spans, name hints).

    Example:
        >>> @node
        ... class Named(Node):
        ...     value: int
        ...     hint: str = ignored("")
    """
    return field(default=default, kw_only=kw_only, metadata={STRUCTURAL: "ignore"})


def hint() -> Any:
    """Declare a required positional field that structural equality skips (a name hint).

    Example:
        >>> @node
        ... class V(Node):
        ...     name: str = hint()
    """
    return field(metadata={STRUCTURAL: "ignore"})


def binds(default: Any = MISSING, **kwargs: Any) -> Any:
    """Declare a field whose variables are defined here (matched by position).

    Example:
        >>> @node
        ... class Lam(Node):
        ...     params: tuple[object, ...] = binds()
        ...     body: object = None
    """
    if default is not MISSING:
        kwargs["default"] = default
    return field(metadata={STRUCTURAL: "def"}, **kwargs)


@dataclass_transform(frozen_default=True, eq_default=False, kw_only_default=False)
def node(cls: type[_T]) -> type[_T]:
    """Make `cls` an IR node class: a frozen, slotted dataclass with identity `==`.

    Example:
        >>> @node
        ... class Leaf(Node):
        ...     value: int
        >>> Leaf(1) == Leaf(1)
        False
    """
    return dataclass(frozen=True, slots=True, eq=False, repr=False)(cls)


@dataclass(frozen=True, slots=True)
class Span:
    """A region of source text: 1-based lines, 0-based columns.

    Example:
        >>> Span("model.py", 3, 4, 3, 9).line
        3
    """

    source_name: str
    line: int
    column: int
    end_line: int
    end_column: int


class Printable:
    """Mixin for objects that print as script: `script()`, `show()`, and `repr()`.

    Example:
        >>> from unity import tir
        >>> isinstance(tir.Var("n"), Printable), repr(tir.Var("n"))
        (True, 'n')
    """

    __slots__ = ()

    def script(self, **kwargs: Any) -> str:
        """Print as script (see `unity.ir.printer.script`).

        Example:
            >>> from unity import tir
            >>> tir.Var("n").script()
            'n'
        """
        from unity.ir.printer import script

        return script(self, **kwargs)

    def show(self, **kwargs: Any) -> None:
        """Print the script form to stdout.

        Example:
            >>> from unity import tir
            >>> tir.Var("n").show()
            n
        """
        print(self.script(**kwargs))

    def __repr__(self) -> str:
        try:
            return self.script()
        except Exception:  # noqa: BLE001 - repr must never raise
            return f"<{type(self).__name__} at {id(self):#x}>"


@node
class Node(Printable):
    """Base of all IR nodes: immutable, and `==`/`hash` are identity.

    Example:
        >>> from unity import tir
        >>> x = tir.Var("x", "int32")
        >>> (x + 1).replace(b=tir.const(2)).script()
        'x + 2'
    """

    span: Span | None = ignored()

    def replace(self: _T, **changes: Any) -> _T:
        """Copy with `changes`, or return `self` if every value is already in place.

        Example:
            >>> from unity import tir
            >>> v = tir.IntImm("int32", 1)
            >>> v.replace(value=1) is v, v.replace(value=2).value
            (True, 2)
        """
        if all(getattr(self, k) is v for k, v in changes.items()):
            return self
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]  # _T is a dataclass



_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake_name(cls: type) -> str:
    """Return the snake_case form of a class name: `FloorDiv` -> `floor_div`, `EQ` -> `eq`.

    Example:
        >>> snake_name(Span)
        'span'
    """
    return _CAMEL.sub("_", cls.__name__).lower()


def dispatch_table(visitor_cls: type, node_cls: type, prefix: str = "visit_") -> Callable[..., Any]:
    """Find the hook of `visitor_cls` for `node_cls` by the node's MRO.

    The hook for `SizeVar` is `visit_size_var_` if defined, else `visit_var_`, and so
    on up the hierarchy.  Results are cached per visitor class.

    Example:
        >>> class V:
        ...     def visit_node_(self, n): return "node"
        >>> dispatch_table(V, Node).__name__
        'visit_node_'
    """
    cache: dict[type, Any] | None = visitor_cls.__dict__.get("_dispatch_cache")
    if cache is None:
        cache = {}
        visitor_cls._dispatch_cache = cache  # type: ignore[attr-defined]  # per-class cache
    hook = cache.get(node_cls, MISSING)
    if hook is MISSING:
        hook = None
        for base in node_cls.__mro__:
            hook = getattr(visitor_cls, f"{prefix}{snake_name(base)}_", None)
            if hook is not None:
                break
        cache[node_cls] = hook
    return hook  # type: ignore[return-value]
