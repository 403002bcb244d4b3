"""Tensors and the operations that produce them: `placeholder`, `compute`, `reduce_axis`.

A `Tensor` is one output of an `Operation` (a `PlaceholderOp` for inputs, a `ComputeOp`
for computed values).  Each tensor owns the `tir.Buffer` it will live in, so indexing a
tensor (`A[i, j]`) is a `tir.BufferLoad` of that buffer and `create_prim_func` can use the
compute bodies as they are.

Example:
    >>> from unity import te
    >>> A = te.placeholder((4, 8), "float32", name="A")
    >>> B = te.compute((4, 8), lambda i, j: A[i, j] * 2.0, name="B")
    >>> B.shape[1].value, B.dtype, B.op.name
    (8, 'float32', 'B')
"""

from __future__ import annotations

import inspect
import numbers
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from unity.ir import dtype as dt
from unity.ir.node import node
from unity.tir.buffer import Buffer, decl_buffer
from unity.tir.expr import BufferLoad, ExprLike, IterType, IterVar, PrimExpr, Range, SizeVar, Var
from unity.tir.expr import const

ShapeLike = Union[Sequence[ExprLike], ExprLike]
"""A shape: a sequence of ints / expressions (a single int or expression means 1-D)."""


@dataclass(frozen=True, eq=False)
class Operation:
    """Base of the operations that produce tensors; `name` is also the block name.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((4,), name="A")
        >>> isinstance(A.op, Operation), A.op.name
        (True, 'A')
    """

    name: str

    @property
    def input_tensors(self) -> tuple[Tensor, ...]:
        """The tensors this operation reads, in first-use order."""
        return ()


@dataclass(frozen=True, eq=False)
class PlaceholderOp(Operation):
    """An input tensor: `shape` and `dtype`, no computation.

    Example:
        >>> from unity import te
        >>> op = te.placeholder((4, 8), "float16", name="A").op
        >>> type(op).__name__, op.dtype, [d.value for d in op.shape]
        ('PlaceholderOp', 'float16', [4, 8])
    """

    shape: tuple[PrimExpr, ...] = ()
    dtype: str = "float32"


@dataclass(frozen=True, eq=False)
class ComputeOp(Operation):
    """`out[axis] = body` for every point of the spatial `axis`.

    `body` holds one expression per output; a reduction body is a `te.Reduce` whose
    `axis` are the reduce `IterVar`s (also listed in `reduce_axis`).

    Example:
        >>> from unity import te
        >>> A = te.placeholder((4, 8), name="A")
        >>> k = te.reduce_axis((0, 8), name="k")
        >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
        >>> type(B.op).__name__, B.op.reduce_axis[0].var.name, B.op.input_tensors[0] is A
        ('ComputeOp', 'k', True)
    """

    tag: str = ""
    attrs: Mapping[str, Any] = field(default_factory=dict)
    axis: tuple[IterVar, ...] = ()
    reduce_axis: tuple[IterVar, ...] = ()
    body: tuple[PrimExpr, ...] = ()
    buffers: tuple[Buffer, ...] = ()

    inputs: tuple[Tensor, ...] = ()
    """The tensors `body` reads, in first-use order (kept alive by the op)."""

    @property
    def input_tensors(self) -> tuple[Tensor, ...]:
        """The tensors this operation reads (TVM's `op.input_tensors`)."""
        return self.inputs


_TENSOR_OF: weakref.WeakValueDictionary[int, Tensor] = weakref.WeakValueDictionary()
"""The tensor each buffer made here belongs to, keyed by `id(buffer)` (a tensor keeps its
buffer alive, so the id is not reused while the entry exists)."""


def _inputs_of(bodies: tuple[PrimExpr, ...]) -> tuple[Tensor, ...]:
    from unity.tir.functor import post_order_visit

    found: dict[int, Tensor] = {}

    def visit(node: object) -> None:
        if isinstance(node, BufferLoad):
            tensor = _TENSOR_OF.get(id(node.buffer))
            if tensor is not None and tensor.buffer is node.buffer:
                found.setdefault(id(node.buffer), tensor)

    for expr in bodies:
        post_order_visit(expr, visit)
    return tuple(found.values())


@dataclass(frozen=True, eq=False)
class Tensor:
    """Output `value_index` of `op`, stored in `buffer`; `A[i, j]` loads from it.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((3,), "int8", name="A")
        >>> A.ndim, A.dtype, A.name
        (1, 'int8', 'A')
    """

    op: Operation
    value_index: int
    buffer: Buffer

    @property
    def shape(self) -> tuple[PrimExpr, ...]:
        """The shape, as `tir` expressions."""
        return self.buffer.shape

    @property
    def dtype(self) -> str:
        """The element dtype."""
        return self.buffer.dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.buffer.shape)

    @property
    def name(self) -> str:
        """The buffer name (the op name, with `_v<k>` for later outputs)."""
        return self.buffer.name

    def __getitem__(self, indices: ExprLike | tuple[ExprLike, ...]) -> BufferLoad:
        if not isinstance(indices, tuple):
            indices = (indices,)
        indices = tuple(i.var if isinstance(i, IterVar) else i for i in indices)
        if len(indices) != self.ndim:
            raise IndexError(
                f"tensor {self.name} has {self.ndim} dims, but was indexed with {len(indices)}"
            )
        for k, index in enumerate(indices):
            if not _is_integral(index):
                raise TypeError(
                    f"tensor {self.name}: index {k} must be an integer expression, "
                    f"got {getattr(index, 'dtype', None) or type(index).__name__}"
                )
        return self.buffer[indices]

    def __call__(self, *indices: ExprLike) -> BufferLoad:
        """`A(i, j)` is `A[i, j]`, as in TVM."""
        return self[tuple(indices)]

    def __repr__(self) -> str:
        dims = ", ".join(_dim_text(d) for d in self.shape)
        return f"Tensor({self.name}, shape=({dims}), dtype={self.dtype})"


def _is_integral(value: Any) -> bool:
    """True for a Python/numpy integer or an integer-typed expression."""
    if isinstance(value, numbers.Integral):
        return True
    dtype = getattr(value, "dtype", None)
    if isinstance(dtype, str):
        try:
            return dt.is_integer(dtype)
        except ValueError:
            return False
    return getattr(dtype, "kind", None) in ("i", "u")


def _dim_text(dim: PrimExpr) -> str:
    value = getattr(dim, "value", None)
    return str(value) if isinstance(value, int) else getattr(dim, "name", "?")


def _shape(shape: ShapeLike, where: str) -> tuple[PrimExpr, ...]:
    dims = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    out = []
    for k, d in enumerate(dims):
        try:
            e = const(d)
        except (TypeError, ValueError):
            raise TypeError(
                f"{where}: shape dim {k} must be an integer, got {type(d).__name__} {d!r}"
            ) from None
        if not dt.is_integer(e.dtype):
            raise TypeError(f"{where}: shape dim {k} must be an integer, got dtype {e.dtype}")
        if isinstance(getattr(e, "value", None), int) and e.value < 0:
            raise ValueError(f"{where}: shape dim {k} is negative ({e.value})")
        out.append(e)
    return tuple(out)


def _make_tensor(op: Operation, index: int, buffer: Buffer) -> Tensor:
    tensor = Tensor(op, index, buffer)
    _TENSOR_OF[id(buffer)] = tensor
    return tensor


def placeholder(shape: ShapeLike, dtype: str = "float32", name: str = "placeholder") -> Tensor:
    """Declare an input tensor.

    Example:
        >>> from unity import te
        >>> n = te.var("n")
        >>> te.placeholder((n, 4), name="X").shape[0] is n
        True
    """
    dims = _shape(shape, f"te.placeholder {name!r}")
    op = PlaceholderOp(name, dims, dt.check(dtype))
    return _make_tensor(op, 0, decl_buffer(dims, dtype, name))


def var(name: str = "tindex", dtype: str = "int32") -> Var:
    """A symbolic scalar (e.g. a dimension): `te.var("n")`.

    Example:
        >>> var("n").dtype
        'int32'
    """
    return Var(name, dt.check(dtype))


def size_var(name: str = "size", dtype: str = "int32") -> SizeVar:
    """A symbolic non-negative scalar (a shape dimension).

    Example:
        >>> type(size_var("n")).__name__
        'SizeVar'
    """
    return SizeVar(name, dt.check(dtype))


@node
class AxisVar(IterVar):
    """An `IterVar` usable in index arithmetic (`h * 2 + rh`), as TVM's iteration vars are.

    Example:
        >>> from unity import te
        >>> k = te.reduce_axis((0, 3), name="k")
        >>> type(k).__name__, type(k * 2 + 1).__name__
        ('AxisVar', 'Add')
    """

    def __add__(self, other: ExprLike) -> PrimExpr:
        return self.var + other

    def __radd__(self, other: ExprLike) -> PrimExpr:
        return other + self.var

    def __sub__(self, other: ExprLike) -> PrimExpr:
        return self.var - other

    def __rsub__(self, other: ExprLike) -> PrimExpr:
        return other - self.var

    def __mul__(self, other: ExprLike) -> PrimExpr:
        return self.var * other

    def __rmul__(self, other: ExprLike) -> PrimExpr:
        return other * self.var

    def __floordiv__(self, other: ExprLike) -> PrimExpr:
        return self.var // other

    def __mod__(self, other: ExprLike) -> PrimExpr:
        return self.var % other

    def __lt__(self, other: ExprLike) -> PrimExpr:
        return self.var < other

    def __le__(self, other: ExprLike) -> PrimExpr:
        return self.var <= other

    def __gt__(self, other: ExprLike) -> PrimExpr:
        return self.var > other

    def __ge__(self, other: ExprLike) -> PrimExpr:
        return self.var >= other


def reduce_axis(dom: tuple[ExprLike, ExprLike] | Range, name: str = "rv") -> IterVar:
    """A reduction axis over `[lo, hi)`: `te.reduce_axis((0, n), name="k")`.

    Example:
        >>> k = reduce_axis((0, 16), name="k")
        >>> k.dom.extent.value, k.iter_type.value
        (16, 'reduce')
    """
    if isinstance(dom, Range):
        rng = dom
    else:
        if not isinstance(dom, (tuple, list)) or len(dom) != 2:
            raise ValueError(f"te.reduce_axis {name!r}: dom must be (lo, hi), got {dom!r}")
        lo, hi = dom
        for bound in (lo, hi):
            if not _is_integral(bound):
                raise TypeError(
                    f"te.reduce_axis {name!r}: bounds must be integers, "
                    f"got {getattr(bound, 'dtype', None) or type(bound).__name__}"
                )
        extent = hi if isinstance(lo, int) and lo == 0 else hi - lo  # type: ignore[operator]
        rng = Range.from_min_extent(lo, extent)
    return AxisVar(Var(name, rng.extent.dtype), rng, IterType.REDUCE)


def _arity(fcompute: Callable[..., Any]) -> tuple[list[str], bool]:
    """Parameter names of `fcompute` and whether it takes `*indices` (or has no signature)."""
    try:
        params = inspect.signature(fcompute).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: pass every index
        return [], True
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = any(p.kind is p.VAR_POSITIONAL for p in params)
    return names, star


def compute(
    shape: ShapeLike,
    fcompute: Callable[..., Any],
    name: str = "compute",
    tag: str = "",
    attrs: Mapping[str, Any] | None = None,
) -> Any:
    """Define `out[i0, ..., in] = fcompute(i0, ..., in)` over `shape`.

    `fcompute` takes one index variable per dimension (named after its parameters) and
    returns an expression, a reduction (`te.sum(...)`), or a tuple of expressions for
    several outputs (then a list of tensors is returned).

    Raises:
        ValueError: `fcompute` takes a different number of indices than `shape` has dims.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((4,), name="A")
        >>> B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
        >>> B.op.axis[0].var.name
        'i'
    """
    dims = _shape(shape, f"te.compute {name!r}")
    names, star = _arity(fcompute)
    if not star and len(names) != len(dims):
        raise ValueError(
            f"te.compute {name!r}: the shape has {len(dims)} dimension(s), so fcompute must "
            f"take {len(dims)} index argument(s), but it takes {len(names)}"
        )
    if star or len(names) != len(dims):
        names = [f"i{k}" for k in range(len(dims))]
    axis = tuple(
        IterVar(Var(n, d.dtype), Range(const(0, d.dtype), d), IterType.SPATIAL)
        for n, d in zip(names, dims)
    )
    result = fcompute(*(iv.var for iv in axis))
    results = tuple(result) if isinstance(result, (list, tuple)) else (result,)
    for b in results:
        if not isinstance(b, (PrimExpr, numbers.Number)):
            raise TypeError(
                f"te.compute {name!r}: fcompute must return an expression (or a tuple of "
                f"them), got {type(b).__name__}"
            )
    bodies = tuple(const(b) for b in results)
    reduce_axis_ = _check_bodies(bodies, name)
    buffers = tuple(
        decl_buffer(dims, b.dtype, name if k == 0 else f"{name}_v{k}") for k, b in enumerate(bodies)
    )
    inputs = _inputs_of(bodies)
    op = ComputeOp(name, tag, dict(attrs or {}), axis, reduce_axis_, bodies, buffers, inputs)
    tensors = [_make_tensor(op, k, buf) for k, buf in enumerate(buffers)]
    return tensors[0] if len(tensors) == 1 else tensors


def _check_bodies(bodies: tuple[PrimExpr, ...], name: str) -> tuple[IterVar, ...]:
    """Check reductions appear only at the top of a body; return the reduce axes."""
    from unity.te.reduction import Reduce, contains_reduce

    axes: tuple[IterVar, ...] = ()
    for body in bodies:
        if isinstance(body, Reduce):
            if any(contains_reduce(s) for s in body.source):
                raise ValueError(f"te.compute {name!r}: a reduction nested inside a reduction")
            axes = body.axis
        elif contains_reduce(body):
            raise ValueError(
                f"te.compute {name!r}: a reduction (te.sum/max/min) must be the whole body, "
                "not part of a larger expression; compute it as its own tensor first"
            )
    first = bodies[0]
    if len(bodies) > 1 and any(isinstance(b, Reduce) for b in bodies):
        combiner = first.combiner if isinstance(first, Reduce) else None
        same = all(
            isinstance(b, Reduce) and b.combiner is combiner and b.value_index == k
            for k, b in enumerate(bodies)
        )
        if not same:
            raise ValueError(
                f"te.compute {name!r}: the outputs of a multi-value reduction must be the "
                "values of one reducer call, in order"
            )
    return axes
