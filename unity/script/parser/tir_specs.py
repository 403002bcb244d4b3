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
    """`T.Buffer(...)`, `T.alloc_buffer(...)`, `T.match_buffer(...)`, `T.allocate_buffer(...)`.

    Example:
        >>> from unity.script import tir as T
        >>> spec = T.alloc_buffer((4, 4), "float16", scope="shared")
        >>> spec.kind, spec.dtype, spec.scope
        ('alloc', 'float16', 'shared')
    """

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
    """`T.serial(...)` and friends: `args` are `(extent,)` or `(start, stop)`.

    Example:
        >>> from unity.script import tir as T
        >>> T.serial(8)
        LoopSpec(kind='serial', args=(8,), thread=None, annotations=None)
    """

    kind: str
    args: tuple[Any, ...]
    thread: str | None = None
    annotations: dict[str, Any] | None = None


@dataclass
class GridSpec:
    """`T.grid(e0, e1, ...)`: nested serial loops.

    Example:
        >>> from unity.script import tir as T
        >>> T.grid(4, 8)
        GridSpec(extents=(4, 8))
    """

    extents: tuple[Any, ...]


@dataclass
class BlockSpec:
    """`with T.block("name"):`.

    Example:
        >>> from unity.script import tir as T
        >>> T.block("C")
        BlockSpec(name='C')
    """

    name: str


@dataclass
class AxisSpec:
    """`T.axis.spatial(dom, value)`: `dom` is an extent or a `(start, stop)` pair.

    Example:
        >>> from unity.script import tir as T
        >>> spec = T.axis.reduce(16, "k")
        >>> spec.kind, spec.dom
        ('reduce', 16)
    """

    kind: str
    dom: Any
    value: Any
    dtype: str | None = None


@dataclass
class RemapSpec:
    """`T.axis.remap("SSR", [i, j, k])`.

    Example:
        >>> from unity.script import tir as T
        >>> T.axis.remap("SSR", ["i", "j", "k"]).kinds
        'SSR'
    """

    kinds: str
    values: Any


@dataclass
class Directive:
    """`T.reads`, `T.writes`, `T.where`, `T.block_attr`, `T.func_attr`: block/function metadata.

    Example:
        >>> from unity.script import tir as T
        >>> T.func_attr({"tir.noalias": True})
        Directive(kind='func_attr', payload={'tir.noalias': True})
    """

    kind: str
    payload: Any


@dataclass
class InitSpec:
    """`with T.init():`.

    Example:
        >>> from unity.script import tir as T
        >>> T.init()
        InitSpec()
    """


@dataclass
class LetSpec:
    """`with T.LetStmt(value) as x:`.

    Example:
        >>> from unity.script import tir as T
        >>> T.LetStmt(3)
        LetSpec(value=3, dtype=None)
    """

    value: Any
    dtype: str | None = None


@dataclass
class AssertSpec:
    """`with T.Assert(cond, "message"):`.

    Example:
        >>> from unity.script import tir as T
        >>> T.Assert("cond", "message")
        AssertSpec(condition='cond', message='message')
    """

    condition: Any
    message: str


@dataclass
class VarSpec:
    """`n = T.int32()`: declares a fresh variable named by the assignment.

    Example:
        >>> from unity.script import tir as T
        >>> T.int64()
        VarSpec(dtype='int64')
    """

    dtype: str
