"""Shape manipulation: reshape, transpose, concatenate, split, squeeze, expand_dims,
flatten, broadcast_to and strided_slice.  Dims may be symbolic throughout.

Example:
    >>> from unity import te
    >>> n = te.var("n")
    >>> x = te.placeholder((n, 6), name="x")
    >>> [d.name if hasattr(d, "name") else d.value for d in reshape(x, (n, 2, 3)).shape]
    ['n', 2, 3]
"""

from __future__ import annotations

from collections.abc import Sequence

from unity import te, tir
from unity.te import Tensor
from unity.tir.arith import Analyzer
from unity.tir.expr import ExprLike, PrimExpr, const
from unity.topi.utils import (
    broadcast_shape, broadcast_load, ceil_div, const_int, index_dtype, normalize_axes, product,
    ravel, unravel,
)  # fmt: skip

_TO_END = 2**31 - 1
"""An `end` at least this large means "to the end of the axis" (ONNX writes INT64_MAX)."""


def reshape(x: Tensor, newshape: Sequence[ExprLike]) -> Tensor:
    """View `x` with shape `newshape` (row-major); one dim may be -1 (inferred).

    Raises:
        ValueError: more than one -1, or constant sizes that do not match.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((2, 6), name="x")
        >>> [d.value for d in reshape(x, (3, -1)).shape]
        [3, 4]
    """
    dims = [const(d) for d in newshape]
    holes = [k for k, d in enumerate(dims) if const_int(d) == -1]
    total = product(x.shape)
    if len(holes) > 1:
        raise ValueError(f"reshape: at most one -1 allowed in the new shape, got {len(holes)}")
    if holes:
        known = product([d for k, d in enumerate(dims) if k != holes[0]])
        ct, ck = const_int(total), const_int(known)
        if ct is not None and ck is not None and (ck == 0 or ct % ck):
            raise ValueError(f"reshape: {ct} elements do not divide into dims of product {ck}")
        dims[holes[0]] = (
            const(ct // ck, index_dtype(total)) if ct is not None and ck else total // known
        )
    ct, cn = const_int(total), const_int(product(dims))
    if ct is not None and cn is not None and ct != cn:
        raise ValueError(f"reshape: cannot reshape {ct} elements into {cn}")

    groups = _dim_groups(list(x.shape), dims)

    def body(*i: PrimExpr) -> PrimExpr:
        src: list[PrimExpr] = []
        for (a0, a1), (b0, b1) in groups:  # each group merged or split on its own
            src.extend(unravel(ravel(i[b0:b1], dims[b0:b1]), x.shape[a0:a1]))
        return x[tuple(src)]

    return te.compute(dims, body, name="T_reshape")


def _dim_groups(
    src: list[PrimExpr], dst: list[PrimExpr]
) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Runs of adjacent dims of equal products, ``[((a0, a1), (b0, b1)), ...]`` (source
    dims ``a0:a1`` hold what destination dims ``b0:b1`` do), the shortest first; one run
    of all dims when the shapes do not split so (or a product cannot be compared).  A
    reshape that merges or splits dims then reads ``x[n, c // 16, c % 16, h, w]`` rather
    than unravelling the whole flat index (which, over symbolic sizes, no analysis took
    apart again)."""
    analyzer = Analyzer()
    groups: list[tuple[tuple[int, int], tuple[int, int]]] = []
    a = b = 0
    while a < len(src) and b < len(dst):
        run = _shortest_run(src[a:], dst[b:], analyzer)
        if run is None:
            break
        groups.append(((a, a + run[0]), (b, b + run[1])))
        a, b = a + run[0], b + run[1]
    if a != len(src) or b != len(dst):
        return [((0, len(src)), (0, len(dst)))]
    return groups


def _shortest_run(
    src: list[PrimExpr], dst: list[PrimExpr], analyzer: Analyzer
) -> tuple[int, int] | None:
    """The fewest leading dims `(na, nb)` of `src` and `dst` with equal products."""
    for size in range(2, len(src) + len(dst) + 1):
        for na in range(max(1, size - len(dst)), min(size - 1, len(src)) + 1):
            if analyzer.can_prove_equal(product(src[:na]), product(dst[: size - na])):
                return na, size - na
    return None


def transpose(x: Tensor, axes: Sequence[int] | None = None) -> Tensor:
    """Permute the axes of `x` (reverse them when `axes` is None).

    Example:
        >>> from unity import te
        >>> [d.value for d in transpose(te.placeholder((2, 3, 4), name="x"), (2, 0, 1)).shape]
        [4, 2, 3]
    """
    perm = list(range(x.ndim))[::-1] if axes is None else [a % max(x.ndim, 1) for a in axes]
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"transpose: {list(axes or [])} is not a permutation of {x.ndim} axes")
    shape = [x.shape[a] for a in perm]

    def body(*i: PrimExpr) -> PrimExpr:
        src: list[PrimExpr] = [const(0)] * x.ndim
        for out_axis, in_axis in enumerate(perm):
            src[in_axis] = i[out_axis]
        return x[tuple(src)]

    return te.compute(shape, body, name="T_transpose")


permute_dims = transpose


def concatenate(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Join `tensors` along `axis` (other dims must agree).

    Example:
        >>> from unity import te
        >>> a, b = te.placeholder((2, 3), name="a"), te.placeholder((2, 5), name="b")
        >>> concatenate([a, b], axis=1).shape[1].value
        8
    """
    if not tensors:
        raise ValueError("concatenate: needs at least one tensor")
    ndim = tensors[0].ndim
    (axis,) = normalize_axes(ndim, axis)
    offsets: list[PrimExpr] = [const(0, index_dtype(*tensors[0].shape))]
    for t in tensors:
        off, d = offsets[-1], t.shape[axis]
        co, cd = const_int(off), const_int(d)
        offsets.append(const(co + cd, off.dtype) if co is not None and cd is not None else off + d)
    shape = list(tensors[0].shape)
    shape[axis] = offsets[-1]

    def body(*i: PrimExpr) -> PrimExpr:
        def load(k: int) -> PrimExpr:
            # `select` evaluates both branches (a vector loop loads both): each load is
            # clamped into its own tensor, as padding clamps its loads
            idx = list(i)
            j = i[axis] - offsets[k] if const_int(offsets[k]) != 0 else i[axis]
            last = tensors[k].shape[axis] - 1
            idx[axis] = tir.max(tir.min(j, last), const(0, j.dtype))
            return tensors[k][tuple(idx)]

        out = load(len(tensors) - 1)
        for k in range(len(tensors) - 2, -1, -1):
            out = tir.select(i[axis] < offsets[k + 1], load(k), out)
        return out

    return te.compute(shape, body, name="T_concat")


concat = concatenate


def _slice_along(x: Tensor, axis: int, begin: PrimExpr, size: PrimExpr, name: str) -> Tensor:
    shape = list(x.shape)
    shape[axis] = size

    def body(*i: PrimExpr) -> PrimExpr:
        idx = list(i)
        idx[axis] = i[axis] + begin if const_int(begin) != 0 else i[axis]
        return x[tuple(idx)]

    return te.compute(shape, body, name=name)


def split(x: Tensor, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Tensor]:
    """Split `x` along `axis` into equal sections (the last ones may be shorter) or at indices.

    Example:
        >>> from unity import te
        >>> [p.shape[0].value for p in split(te.placeholder((7,), name="x"), [2, 5])]
        [2, 3, 2]
    """
    (axis,) = normalize_axes(x.ndim, axis)
    dim = x.shape[axis]
    wide = index_dtype(dim)
    if isinstance(indices_or_sections, int):
        parts = indices_or_sections
        size = ceil_div(dim, parts)  # parts of `size`, the last ones shorter (or empty)
        begins = [const(0, wide), *(_min(_scale(size, k), dim) for k in range(1, parts))]
        sizes = [_sub(e, b) for b, e in zip(begins, [*begins[1:], dim], strict=True)]
    else:
        points = [_clamp_point(p, dim, wide) for p in indices_or_sections]  # numpy: x[p[k-1]:p[k]]
        begins = [const(0, wide), *points]
        ends = [*points, const(dim)]
        sizes = [tir.max(_sub(e, b), const(0, wide)) if const_int(_sub(e, b)) is None
                 else const(max(const_int(_sub(e, b)) or 0, 0), wide)
                 for b, e in zip(begins, ends, strict=True)]  # fmt: skip
    return [
        _slice_along(x, axis, b, s, f"T_split{k}")
        for k, (b, s) in enumerate(zip(begins, sizes, strict=True))
    ]


def _clamp_point(point: int, dim: ExprLike, wide: str) -> PrimExpr:
    """A split point in ``[0, dim]``; a negative one counts from the end (Python slices)."""
    if point < 0:
        c = const_int(dim)
        if c is not None:
            return const(max(c + point, 0), wide)
        return tir.max(const(dim) + point, const(0, wide))
    return _min(const(point, wide), dim)


def _scale(size: PrimExpr, k: int) -> PrimExpr:
    c = const_int(size)
    return const(k * c, size.dtype) if c is not None else size * k


def _sub(a: ExprLike, b: ExprLike) -> PrimExpr:
    ca, cb = const_int(a), const_int(b)
    if cb == 0:
        return const(a)
    return const(ca - cb, index_dtype(a, b)) if ca is not None and cb is not None else const(a) - b


def _min(a: ExprLike, b: ExprLike) -> PrimExpr:
    ca, cb = const_int(a), const_int(b)
    return (
        const(min(ca, cb), index_dtype(a, b))
        if ca is not None and cb is not None
        else tir.min(a, b)
    )


def squeeze(x: Tensor, axis: int | Sequence[int] | None = None) -> Tensor:
    """Remove size-1 axes (all constant ones when `axis` is None).

    Raises:
        ValueError: a listed axis has a constant size other than 1.

    Example:
        >>> from unity import te
        >>> [d.value for d in squeeze(te.placeholder((1, 3, 1), name="x")).shape]
        [3]
    """
    if axis is None:
        axes = tuple(k for k, d in enumerate(x.shape) if const_int(d) == 1)
    else:
        axes = normalize_axes(x.ndim, axis)
    for a in axes:
        if const_int(x.shape[a]) not in (1, None):
            raise ValueError(f"squeeze: axis {a} has size {const_int(x.shape[a])}, not 1")
    kept = [k for k in range(x.ndim) if k not in axes]

    def body(*i: PrimExpr) -> PrimExpr:
        src: list[PrimExpr] = [const(0, index_dtype(*x.shape))] * x.ndim
        for out_axis, in_axis in enumerate(kept):
            src[in_axis] = i[out_axis]
        return x[tuple(src)]

    return te.compute([x.shape[k] for k in kept], body, name="T_squeeze")


def expand_dims(x: Tensor, axis: int | Sequence[int]) -> Tensor:
    """Insert size-1 axes at positions `axis` of the result.

    Example:
        >>> from unity import te
        >>> [d.value for d in expand_dims(te.placeholder((3,), name="x"), [0, -1]).shape]
        [1, 3, 1]
    """
    rank = x.ndim + (1 if isinstance(axis, int) else len(axis))
    axes = normalize_axes(rank, axis)
    dims = iter(x.shape)
    shape = [const(1, index_dtype(*x.shape)) if k in axes else next(dims) for k in range(rank)]

    def body(*i: PrimExpr) -> PrimExpr:
        return x[tuple(i[k] for k in range(rank) if k not in axes)]

    return te.compute(shape, body, name="T_expand_dims")


def flatten(x: Tensor) -> Tensor:
    """`x` as one dimension (row-major).

    Example:
        >>> from unity import te
        >>> flatten(te.placeholder((2, 3), name="x")).shape[0].value
        6
    """
    return reshape(x, [product(x.shape)])


def broadcast_to(x: Tensor, shape: Sequence[ExprLike]) -> Tensor:
    """Broadcast `x` to `shape` (numpy rules).

    Example:
        >>> from unity import te
        >>> [d.value for d in broadcast_to(te.placeholder((3,), name="x"), (2, 3)).shape]
        [2, 3]
    """
    if len(shape) < x.ndim:
        raise ValueError(f"broadcast_to: cannot broadcast rank {x.ndim} to rank {len(shape)}")
    target = [const(d) for d in shape]
    broadcast_shape([x.shape, target], "broadcast_to")  # checks compatibility

    def body(*i: PrimExpr) -> PrimExpr:
        return broadcast_load(x, i, target)

    return te.compute(target, body, name="T_broadcast_to")


def _norm_slice(dim: ExprLike, begin: ExprLike, end: ExprLike, stride: int) -> tuple[PrimExpr, PrimExpr]:
    """The start and length of `[begin:end:stride]` on an axis of size `dim`.

    Integer bounds follow Python's rules; an expression bound is a non-negative index.
    """
    wide = index_dtype(dim)
    size = const_int(dim)
    fixed = [b if isinstance(b, int) else const_int(b) for b in (begin, end)]
    if size is not None and None not in fixed:
        begin, end = fixed  # type: ignore[assignment]  # both ints
        rng = range(*slice(begin, end, stride).indices(size))
        return const(rng.start if len(rng) else 0, wide), const(len(rng), wide)
    d, zero = const(dim), const(0, wide)
    lo, hi = (zero, d) if stride > 0 else (const(-1, wide), d - 1)

    def clamp(bound: ExprLike) -> PrimExpr:  # Python slice rules, symbolically
        if not isinstance(bound, int):
            known = const_int(bound)
            if known is None:  # a non-negative index
                index = const(bound)
                return tir.min(index if index.dtype == wide else index.astype(wide), hi)
            bound = known
        if bound >= _TO_END:
            return hi
        if bound <= -_TO_END:
            return lo
        return tir.max(d + bound, lo) if bound < 0 else tir.min(const(bound, wide), hi)

    start, stop = clamp(begin), clamp(end)
    span = stop - start if stride > 0 else start - stop
    return start, tir.max(ceil_div(span, abs(stride)), zero)


def strided_slice(
    x: Tensor,
    begin: Sequence[ExprLike],
    end: Sequence[ExprLike],
    strides: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
) -> Tensor:
    """`x[begin:end:stride]` on each of `axes` (all leading axes when None); Python rules for
    negative indices and strides, ends clamped.  A bound that is an expression (``n``) must
    be non-negative: it is clamped to the axis, not counted from its end.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((6, 4), name="x")
        >>> [d.value for d in strided_slice(x, [5], [0], [-2]).shape]
        [3, 4]
    """
    axes = list(range(len(begin))) if axes is None else [a % x.ndim for a in axes]
    strides = [1] * len(axes) if strides is None else list(strides)
    if not len(axes) == len(begin) == len(end) == len(strides):
        raise ValueError("strided_slice: axes, begin, end and strides must have one length")
    starts = {a: (const(0), 1) for a in range(x.ndim)}
    shape = list(x.shape)
    for a, b, e, s in zip(axes, begin, end, strides, strict=True):
        if s == 0:
            raise ValueError(f"strided_slice: stride of axis {a} is 0")
        start, length = _norm_slice(x.shape[a], b, e, s)
        starts[a], shape[a] = (start, s), length

    def body(*i: PrimExpr) -> PrimExpr:
        idx = []
        for a in range(x.ndim):
            start, s = starts[a]
            step = i[a] * s if s != 1 else i[a]
            idx.append(step + start if const_int(start) != 0 else step)
        return x[tuple(idx)]

    return te.compute(shape, body, name="T_strided_slice")
