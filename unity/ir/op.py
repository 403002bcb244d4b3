"""Operators as objects, with attributes set by the layer that defines them.

`Op` is a node (so a relax `Call` can hold it) compared by identity: two calls to
the same registered op compare equal structurally because they hold the same
object.  Code tests `call.op is op.add`; only parsers and frontends look ops up by
name with `Op.get`.

Example:
    >>> from unity.ir.op import Op
    >>> my_exp = Op("example.exp", pure=True)
    >>> Op.get("example.exp") is my_exp, my_exp.attrs["pure"]
    (True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from unity.ir.node import Node, node

_REGISTRY: dict[str, Op] = {}


@node
class Op(Node):
    """A primitive operator, registered under its printed name.

    Attributes are keyed by strings local to the defining layer (e.g. `"infer"`,
    `"legalize"`, `"fold"` for relax ops; `"numpy"`, `"llvm"` for tir intrinsics).

    Example:
        >>> op = Op("example.square", numpy=lambda x: x * x)
        >>> op.name, Op.get("example.square") is op
        ('example.square', True)
    """

    name: str
    attrs: Mapping[str, Any]

    registry: ClassVar[Mapping[str, Op]] = _REGISTRY

    def __init__(self, name: str, **attrs: Any) -> None:
        if name in _REGISTRY:
            raise ValueError(f"operator {name!r} is already registered")
        object.__setattr__(self, "span", None)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "attrs", dict(attrs))
        _REGISTRY[name] = self

    def set_attr(self, key: str, value: Any) -> None:
        """Set attribute `key` (layers above the definer may add their own rules).

        Example:
            >>> Op("example.neg").set_attr("fold", lambda x: -x)
        """
        self.attrs[key] = value  # type: ignore[index]  # attrs is a private dict

    def get_attr(self, key: str, default: Any = None) -> Any:
        """Return attribute `key`, or `default` when the op does not have it.

        Example:
            >>> op = Op("example.cube", numpy=lambda x: x ** 3)
            >>> op.get_attr("numpy")(2), op.get_attr("llvm", "none")
            (8, 'none')
        """
        return self.attrs.get(key, default)

    @staticmethod
    def get(name: str) -> Op:
        """Look a registered op up by its printed name; KeyError names the unknown op.

        Example:
            >>> Op.get("example.exp").name
            'example.exp'
        """
        try:
            return _REGISTRY[name]
        except KeyError:
            raise KeyError(f"unknown operator {name!r}") from None

    def __repr__(self) -> str:
        return f"Op({self.name})"
