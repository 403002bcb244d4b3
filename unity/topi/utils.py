"""Helpers shared by the TOPI operator families: axes, constant dims, index arithmetic.

Example:
    >>> from unity import te
    >>> x = te.placeholder((2, 3), name="x")
    >>> normalize_axes(x.ndim, -1), const_int(x.shape[1])
    ((1,), 3)
"""

from __future__ import annotations

from collections.abc import Sequence

from unity import tir
from unity.te import Tensor
from unity.tir.arith import Analyzer
from unity.tir.expr import ExprLike, IntImm, PrimExpr, const
from unity.tir.op import index_check

AxisLike = int | Sequence[int] | None
"""An axis, a list of axes, or None (all axes)."""


def normalize_axes(ndim: int, axis: AxisLike, what: str = "axis") -> tuple[int, ...]:
    """Map `axis` (int, list, None = all) to sorted non-negative axes of a rank-`ndim` tensor.

    Raises:
        ValueError: an axis is out of range or repeated.

    Example:
        >>> normalize_axes(3, [-1, 0])
        (0, 2)
    """
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"{what} {a} is out of range for a tensor of rank {ndim}")
        out.append(a % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{what} {list(axes)} repeats an axis")
    return tuple(sorted(out))


def const_int(expr: ExprLike) -> int | None:
    """The value of an integer constant dim, or None when it is symbolic.

    Example:
        >>> const_int(tir.const(4)), const_int(tir.Var("n"))
        (4, None)
    """
    if isinstance(expr, int):
        return expr
    return expr.value if isinstance(expr, IntImm) else None


def prove_equal(a: ExprLike, b: ExprLike) -> bool:
    """True when the two index expressions are provably equal.

    Example:
        >>> n = tir.Var("n")
        >>> prove_equal(n + 1, 1 + n), prove_equal(n, 4)
        (True, False)
    """
    if a is b:
        return True
    ca, cb = const_int(a), const_int(b)
    if ca is not None and cb is not None:
        return ca == cb
    return Analyzer().can_prove_equal(a, b)


def index_dtype(*dims: ExprLike) -> str:
    """The widest integer dtype among `dims` (int32 when all are Python ints).

    Example:
        >>> index_dtype(tir.Var("n", "int64"), 3)
        'int64'
    """
    wide = [d.dtype for d in dims if isinstance(d, PrimExpr)]
    return "int64" if "int64" in wide else "int32"


def product(dims: Sequence[ExprLike]) -> PrimExpr:
    """The product of `dims` (constants folded), 1 for no dims.

    Example:
        >>> product([2, 3]).value
        6
    """
    dtype = index_dtype(*dims)
    out: PrimExpr | None = None
    for d in dims:
        if const_int(d) == 1:
            continue
        if out is None:
            out = const(d).astype(dtype)
            continue
        ca, cb = const_int(out), const_int(d)
        out = const(ca * cb, dtype) if ca is not None and cb is not None else out * d
    return const(1, dtype) if out is None else out


def ceil_div(a: ExprLike, b: ExprLike) -> PrimExpr:
    """`ceil(a / b)` for integers (also for negative `a`), folded when constant.

    Example:
        >>> ceil_div(7, 2).value
        4
    """
    ca, cb = const_int(a), const_int(b)
    if ca is not None and cb is not None:
        return const(-(-ca // cb), index_dtype(a, b))
    return (const(a) + (b - 1)) // b


def ravel(indices: Sequence[ExprLike], shape: Sequence[ExprLike]) -> PrimExpr:
    """Row-major linear index of `indices` in `shape`.

    Example:
        >>> ravel([tir.const(1), tir.const(2)], [3, 4]).dtype
        'int32'
    """
    if not indices:
        return const(0, index_dtype(*shape))
    out = const(indices[0])
    for i, d in zip(indices[1:], shape[1:], strict=True):
        out = out * d + i
    return out


def unravel(index: ExprLike, shape: Sequence[ExprLike]) -> list[PrimExpr]:
    """Row-major coordinates in `shape` of linear `index`.

    Example:
        >>> len(unravel(tir.Var("i"), [3, 4]))
        2
    """
    if not shape:
        return []
    out: list[PrimExpr] = []
    rest = const(index)
    for d in reversed(shape[1:]):
        out.append(rest % d if const_int(d) != 1 else const(0, rest.dtype))
        rest = rest // d if const_int(d) != 1 else rest
    out.append(rest)
    return out[::-1]


def wrap_index(index: PrimExpr, dim: ExprLike) -> PrimExpr:
    """Python-style index: negatives count from the end; the result must lie in ``[0,
    dim)``, checked when the kernel runs (`tir.op.index_check`: an error naming the
    buffer on the CPU, a clamped index on the GPU), as numpy and onnxruntime check it.

    Example:
        >>> wrap_index(tir.Var("i", "int64"), 5).dtype
        'int64'
    """
    wide = index_dtype(index, dim)
    idx = index.astype(wide)
    d = const(dim).astype(wide)
    idx = tir.select(idx < 0, idx + d, idx)
    return index_check(idx, d)


def as_float(x: PrimExpr) -> PrimExpr:
    """`x` itself when floating point, else cast to float32 (for math intrinsics).

    Example:
        >>> as_float(tir.Var("i")).dtype
        'float32'
    """
    return x if x.dtype.startswith(("float", "bfloat")) else x.astype("float32")


def broadcast_dim(a: ExprLike, b: ExprLike, where: str) -> PrimExpr:
    """The numpy-broadcast of dims `a` and `b` (equal, or one of them 1).

    A symbolic dim against a constant other than 1 gives the constant; two different
    symbolic dims give the first (the caller indexes with `broadcast_index`).

    Raises:
        ValueError: two different constant dims, neither 1.

    Example:
        >>> broadcast_dim(tir.const(1), tir.const(4), "add").value
        4
    """
    ca, cb = const_int(a), const_int(b)
    if ca == 1:
        return const(b)
    if cb == 1:
        return const(a)
    if ca is not None and cb is not None and ca != cb:
        raise ValueError(f"{where}: cannot broadcast dims {ca} and {cb}")
    if ca is None and cb is not None:
        return const(b)
    return const(a)


def broadcast_index(index: PrimExpr, dim: ExprLike, out_dim: ExprLike) -> PrimExpr:
    """The index into an input dim `dim` for output index `index` of dim `out_dim`.

    Example:
        >>> broadcast_index(tir.Var("i"), 1, 4).value
        0
    """
    if const_int(dim) == 1:
        return const(0, index.dtype)
    if prove_equal(dim, out_dim):
        return index
    # a symbolic dim that may be 1 (numpy broadcasting decided at run time)
    return tir.select(tir.eq(dim, 1), const(0, index.dtype), index)


def broadcast_shape(shapes: Sequence[Sequence[ExprLike]], where: str) -> list[PrimExpr]:
    """Numpy broadcasting of several shapes.

    Example:
        >>> [d.value for d in broadcast_shape([(2, 1), (3,)], "add")]
        [2, 3]
    """
    rank = max(len(s) for s in shapes)
    out: list[PrimExpr] = []
    for k in range(rank):
        dims = [s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0]
        dim = const(dims[0])
        for d in dims[1:]:
            dim = broadcast_dim(dim, d, where)
        out.append(dim)
    return out


def broadcast_load(
    x: Tensor, indices: Sequence[PrimExpr], out_shape: Sequence[ExprLike]
) -> PrimExpr:
    """Load `x` at output `indices` of the broadcast shape `out_shape` (trailing-aligned).

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 3), name="x")
        >>> type(broadcast_load(x, [tir.Var("i"), tir.Var("j")], [2, 3])).__name__
        'BufferLoad'
    """
    offset = len(out_shape) - x.ndim
    idx = [
        broadcast_index(indices[offset + k], d, out_shape[offset + k])
        for k, d in enumerate(x.shape)
    ]
    return x[tuple(idx)]


def scalar_or_load(value: Tensor | ExprLike, indices: Sequence[PrimExpr],
                   out_shape: Sequence[ExprLike]) -> PrimExpr:  # fmt: skip
    """`value` broadcast-loaded when it is a tensor, else the scalar itself.

    Example:
        >>> scalar_or_load(2.0, [], []).dtype
        'float32'
    """
    if isinstance(value, Tensor):
        return broadcast_load(value, indices, out_shape)
    return const(value)


def cast(value: ExprLike, dtype: str) -> PrimExpr:
    """`value` as `dtype`, folding constants (an element count becomes a float immediate).

    Example:
        >>> cast(tir.const(3), "float32").value
        3.0
    """
    expr = const(value)
    if isinstance(expr, IntImm) and dtype.startswith(("float", "bfloat")):
        return const(float(expr.value), dtype)
    if isinstance(expr, IntImm) and dtype.startswith(("int", "uint")):
        return const(expr.value, dtype)
    return expr.astype(dtype)
