"""What the `T.` builders return for the parser to interpret (loops, blocks, axes, ...).

These small records are inert at run time (Python evaluates annotations such as
`T.Buffer(("n", 4), "float32")` when it defines the function); the TIR parser turns
them into IR according to where they appear.

Example:
    >>> LoopSpec("serial", (8,)).kind
    'serial'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class BufferSpec:
    """`T.Buffer(...)`, `T.alloc_buffer(...)`, `T.match_buffer(...)`, `T.allocate_buffer(...)`."""

    kind: str
    shape: Any
    dtype: str = "float32"
    data: Any = None
    strides: Any = ()
    elem_offset: Any = None
    scope: str = "global"
    source: Any = None
    """The region a `match_buffer` views."""


@dataclass
class LoopSpec:
    """`T.serial(...)` and friends: `args` are `(extent,)` or `(start, stop)`."""

    kind: str
    args: tuple[Any, ...]
    thread: str | None = None
    annotations: dict[str, Any] | None = None


@dataclass
class GridSpec:
    """`T.grid(e0, e1, ...)`: nested serial loops."""

    extents: tuple[Any, ...]


@dataclass
class BlockSpec:
    """`with T.block("name"):`."""

    name: str


@dataclass
class AxisSpec:
    """`T.axis.spatial(dom, value)`: `dom` is an extent or a `(start, stop)` pair."""

    kind: str
    dom: Any
    value: Any
    dtype: str | None = None


@dataclass
class RemapSpec:
    """`T.axis.remap("SSR", [i, j, k])`."""

    kinds: str
    values: Any


@dataclass
class Directive:
    """`T.reads`, `T.writes`, `T.where`, `T.block_attr`, `T.func_attr`: block/function metadata."""

    kind: str
    payload: Any


@dataclass
class InitSpec:
    """`with T.init():`."""


@dataclass
class LetSpec:
    """`with T.LetStmt(value) as x:`."""

    value: Any
    dtype: str | None = None


@dataclass
class AssertSpec:
    """`with T.Assert(cond, "message"):`."""

    condition: Any
    message: str


@dataclass
class VarSpec:
    """`n = T.int32()`: declares a fresh variable named by the assignment."""

    dtype: str
