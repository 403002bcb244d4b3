"""Printer core: `script(obj, underline=...)` dispatches to the printer of each IR family.

Each layer registers how to print its nodes (`register_printer(tir.PrimFunc, fn)`);
this module only dispatches, so `unity.ir` never imports the layers above it.

Example:
    >>> from unity import tir
    >>> print(script(tir.Var("n", "int32") * 2))
    n * 2
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

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
