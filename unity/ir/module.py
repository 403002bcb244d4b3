"""`IRModule`: relax and tir functions side by side, keyed by `GlobalVar`.

Example:
    >>> from unity.ir import IRModule
    >>> from unity.script import tir as T
    >>> @T.prim_func
    ... def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    ...     for i in T.serial(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             B[vi] = A[vi] + T.float32(1)
    >>> mod = IRModule({"main": add_one})
    >>> mod["main"] is add_one
    True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import field
from typing import Any, TypeVar

from unity.ir.node import Node, Printable, node

_F = TypeVar("_F", bound="BaseFunc")


@node
class GlobalVar(Node):
    """The name of a function in an `IRModule`; compared structurally by name.

    Example:
        >>> GlobalVar("main").name_hint
        'main'
    """

    name_hint: str


@node
class BaseFunc(Node):
    """Base of `tir.PrimFunc` and `relax.Function`; `attrs` is a read-only mapping.

    Example:
        >>> from unity import tir
        >>> f = tir.PrimFunc([], tir.Evaluate(tir.const(0))).with_attr("global_symbol", "main")
        >>> isinstance(f, BaseFunc), dict(f.attrs)
        (True, {'global_symbol': 'main'})
    """

    attrs: Mapping[str, Any] = field(default_factory=dict, kw_only=True)

    def with_attr(self: _F, key: str, value: Any) -> _F:
        """Copy with attribute `key` set to `value`.

        Example:
            >>> f = f.with_attr("global_symbol", "main")  # doctest: +SKIP
        """
        return self.replace(attrs={**self.attrs, key: value})

    def without_attr(self: _F, key: str) -> _F:
        """Copy with attribute `key` removed (self if it was not there).

        Example:
            >>> from unity import tir
            >>> f = tir.PrimFunc([], tir.Evaluate(tir.const(0))).with_attr("noinline", True)
            >>> dict(f.without_attr("noinline").attrs), f.without_attr("other") is f
            ({}, True)
        """
        if key not in self.attrs:
            return self
        return self.replace(attrs={k: v for k, v in self.attrs.items() if k != key})


class IRModule(Printable):
    """A set of functions keyed by `GlobalVar`, plus module attributes.

    Passes treat modules as values and return a new one; `update_func` and item
    assignment mutate in place, as in TVM.

    Example:
        >>> mod = IRModule()
        >>> len(mod.functions)
        0
    """

    __slots__ = ("functions", "attrs", "_by_name", "__weakref__")

    def __init__(
        self,
        functions: Mapping[str | GlobalVar, BaseFunc] | None = None,
        attrs: Mapping[str, Any] | None = None,
    ) -> None:
        self.functions: dict[GlobalVar, BaseFunc] = {}
        self._by_name: dict[str, GlobalVar] = {}
        self.attrs: dict[str, Any] = dict(attrs or {})
        for key, func in (functions or {}).items():
            self[key] = func

    # -- lookup ---------------------------------------------------------------------------
    def get_global_var(self, name: str) -> GlobalVar:
        """The `GlobalVar` named `name`; KeyError lists the names the module has.

        Example:
            >>> from unity import tir
            >>> mod = IRModule({"main": tir.PrimFunc([], tir.Evaluate(tir.const(0)))})
            >>> mod.get_global_var("main").name_hint
            'main'
        """
        try:
            return self._by_name[name]
        except KeyError:
            have = ", ".join(sorted(self._by_name)) or "none"
            raise KeyError(f"IRModule has no function {name!r} (it has: {have})") from None

    def get_global_vars(self) -> list[GlobalVar]:
        """All global vars, in insertion order.

        Example:
            >>> from unity import tir
            >>> f = tir.PrimFunc([], tir.Evaluate(tir.const(0)))
            >>> [gv.name_hint for gv in IRModule({"a": f, "b": f}).get_global_vars()]
            ['a', 'b']
        """
        return list(self.functions)

    def __getitem__(self, key: str | GlobalVar) -> BaseFunc:
        gv = self.get_global_var(key) if isinstance(key, str) else key
        return self.functions[gv]

    def __contains__(self, key: str | GlobalVar) -> bool:
        return key in self._by_name if isinstance(key, str) else key in self.functions

    def __iter__(self) -> Iterator[GlobalVar]:
        return iter(self.functions)

    def __len__(self) -> int:
        return len(self.functions)

    def items(self) -> list[tuple[GlobalVar, BaseFunc]]:
        """(GlobalVar, function) pairs in insertion order.

        Example:
            >>> from unity import tir
            >>> mod = IRModule({"main": tir.PrimFunc([], tir.Evaluate(tir.const(0)))})
            >>> [(gv.name_hint, type(f).__name__) for gv, f in mod.items()]
            [('main', 'PrimFunc')]
        """
        return list(self.functions.items())

    # -- mutation -------------------------------------------------------------------------
    def __setitem__(self, key: str | GlobalVar, func: BaseFunc) -> None:
        if isinstance(key, str):
            key = self._by_name.get(key) or GlobalVar(key)
        self.update_func(key, func)

    def update_func(self, gv: GlobalVar, func: BaseFunc) -> None:
        """Set the function of `gv` in place (adding `gv` if new).

        Example:
            >>> from unity import tir
            >>> mod = IRModule()
            >>> mod.update_func(GlobalVar("main"), tir.PrimFunc([], tir.Evaluate(tir.const(0))))
            >>> "main" in mod
            True
        """
        existing = self._by_name.get(gv.name_hint)
        if existing is not None and existing is not gv:
            raise ValueError(f"IRModule already has a different GlobalVar named {gv.name_hint!r}")
        self._by_name[gv.name_hint] = gv
        self.functions[gv] = func

    def add(self, name: str, func: BaseFunc) -> GlobalVar:
        """Add `func` under a fresh name derived from `name`; return its GlobalVar.

        Example:
            >>> m = IRModule()
            >>> gv = m.add("f", some_func)  # doctest: +SKIP
        """
        unique, i = name, 0
        while unique in self._by_name:
            i += 1
            unique = f"{name}{i}"
        gv = GlobalVar(unique)
        self.update_func(gv, func)
        return gv

    def remove(self, key: str | GlobalVar) -> None:
        """Remove a function from the module in place.

        Example:
            >>> from unity import tir
            >>> mod = IRModule({"main": tir.PrimFunc([], tir.Evaluate(tir.const(0)))})
            >>> mod.remove("main")
            >>> len(mod)
            0
        """
        gv = self.get_global_var(key) if isinstance(key, str) else key
        del self.functions[gv]
        del self._by_name[gv.name_hint]

    # -- values ---------------------------------------------------------------------------
    def copy(self) -> IRModule:
        """A shallow copy (functions are immutable and shared).

        Example:
            >>> from unity import tir
            >>> mod = IRModule({"main": tir.PrimFunc([], tir.Evaluate(tir.const(0)))})
            >>> new = mod.copy()
            >>> new is mod, new["main"] is mod["main"]
            (False, True)
        """
        new = IRModule(attrs=self.attrs)
        for gv, func in self.functions.items():
            new.update_func(gv, func)
        return new

    def with_attr(self, key: str, value: Any) -> IRModule:
        """A copy with module attribute `key` set.

        Example:
            >>> mod = IRModule()
            >>> mod.with_attr("target", "llvm").attrs, mod.attrs
            ({'target': 'llvm'}, {})
        """
        new = self.copy()
        new.attrs[key] = value
        return new

    def map_functions(self, kind: type[_F], fn: Callable[[_F], BaseFunc]) -> IRModule:
        """Apply `fn` to every function of type `kind`; return `self` if none changed.

        Example:
            >>> mod.map_functions(PrimFunc, simplify_func)  # doctest: +SKIP
        """
        changed = {gv: fn(f) for gv, f in self.functions.items() if isinstance(f, kind)}
        if all(changed[gv] is self.functions[gv] for gv in changed):
            return self
        new = self.copy()
        for gv, func in changed.items():
            new.update_func(gv, func)
        return new
