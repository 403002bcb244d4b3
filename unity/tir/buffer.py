"""`Buffer`: a multi-dimensional view of memory, and `BufferRegion`, a rectangle of one.

Example:
    >>> from unity import tir
    >>> n = tir.SizeVar("n", "int32")
    >>> A = tir.decl_buffer((n, 128), "float32", name="A")
    >>> A[0, 1].dtype, A.ndim
    ('float32', 2)
"""

from __future__ import annotations

from typing import ClassVar

from unity.ir import dtype as dt
from unity.ir.node import Node, hint, ignored, node
from unity.tir.expr import BufferLoad, ExprLike, PrimExpr, Range, Var, as_exprs, const

SCOPES = (
    "global", "shared", "shared.dyn", "shared.warp", "local", "warp",
    "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator",
)  # fmt: skip
"""Storage scopes a buffer may live in (`wmma.*`: tensor-core fragments of one warp;
`shared.warp`: shared memory, one region per warp)."""


@node
class Buffer(Node):
    """A typed N-d view of the memory behind the pointer variable `data`.

    `strides == ()` means compact row-major; `elem_offset` is in elements.
    Structural equality matches buffers like variables (by where they are defined).

    Example:
        >>> n = Var("n", "int32")
        >>> A = Buffer(Var("A", "handle"), (n, const(4)), "float16", "A")
        >>> A.ndim, A.dtype, A.scope, A[0, 1].dtype
        (2, 'float16', 'global', 'float16')
    """

    data: Var
    shape: tuple[PrimExpr, ...]
    dtype: str
    name: str = hint()
    strides: tuple[PrimExpr, ...] = ()
    elem_offset: PrimExpr | None = None
    scope: str = "global"
    axis_separators: tuple[int, ...] = ignored((), kw_only=False)

    structural_kind: ClassVar[str] = "var"
    """Structural equality matches buffers by definition, like variables."""

    def __post_init__(self) -> None:
        dt.check(self.dtype)
        if self.scope not in SCOPES:
            raise ValueError(f"buffer {self.name}: unknown scope {self.scope!r}; use one of {SCOPES}")
        if self.strides and len(self.strides) != len(self.shape):
            raise ValueError(f"buffer {self.name}: {len(self.strides)} strides for rank {len(self.shape)}")

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    def __getitem__(self, indices: ExprLike | tuple[ExprLike, ...]) -> BufferLoad:
        if not isinstance(indices, tuple):
            indices = (indices,)
        if len(indices) != len(self.shape):
            raise IndexError(f"buffer {self.name} has {len(self.shape)} dims, indexed with {len(indices)}")
        return BufferLoad(self, as_exprs(indices))

    def vload(self, indices: tuple[ExprLike, ...]) -> BufferLoad:
        """Load `self[indices]` (TVM's spelling).

        Example:
            >>> A = decl_buffer((4, 4), "float32", "A")
            >>> A.vload((1, 2)).indices[1].value
            2
        """
        return self[indices]

    def full_region(self) -> BufferRegion:
        """The region covering the whole buffer.

        Example:
            >>> [r.extent.value for r in decl_buffer((4, 8)).full_region().region]
            [4, 8]
        """
        return BufferRegion.full(self)


def decl_buffer(
    shape: tuple[ExprLike, ...] | list[ExprLike],
    dtype: str = "float32",
    name: str = "buffer",
    *,
    scope: str = "global",
    strides: tuple[ExprLike, ...] = (),
    elem_offset: ExprLike | None = None,
    data: Var | None = None,
) -> Buffer:
    """Declare a buffer with a fresh data pointer.

    Example:
        >>> decl_buffer((4, 4), "int8", "B").shape[0].value
        4
    """
    data = data if data is not None else Var(name, "handle")
    offset = None if elem_offset is None else const(elem_offset)
    return Buffer(data, as_exprs(tuple(shape)), dtype, name, as_exprs(strides), offset, scope)


@node
class BufferRegion(Node):
    """`buffer[region]`: one `Range` per dimension.

    Example:
        >>> A = decl_buffer((16,), "float32", "A")
        >>> BufferRegion(A, (Range.from_min_extent(4, 8),)).region[0].extent.value
        8
    """

    buffer: Buffer
    region: tuple[Range, ...]

    @staticmethod
    def full(buffer: Buffer) -> BufferRegion:
        """The whole of `buffer`.

        Example:
            >>> BufferRegion.full(decl_buffer((3,))).region[0].extent.value
            3
        """
        return BufferRegion(buffer, tuple(Range(const(0, d.dtype), d) for d in buffer.shape))

    @staticmethod
    def from_point(buffer: Buffer, indices: tuple[PrimExpr, ...]) -> BufferRegion:
        """The single element `buffer[indices]`.

        Example:
            >>> A = decl_buffer((4, 4), "float32", "A")
            >>> r = BufferRegion.from_point(A, (Var("i"), const(2)))
            >>> [x.extent.value for x in r.region], r.region[1].min.value
            ([1, 1], 2)
        """
        return BufferRegion(buffer, tuple(Range(i, const(1, i.dtype)) for i in indices))
