"""Index-driven ops: take, gather_elements and scatter_elements.

Indices follow numpy/ONNX: a negative index counts from the end of the axis.  Indices out
of range are clamped into it, so compiled code never reads out of bounds.

Example:
    >>> from unity import te
    >>> x = te.placeholder((5, 3), name="x")
    >>> idx = te.placeholder((2, 2), "int64", name="idx")
    >>> [d.value for d in take(x, idx, axis=0).shape]
    [2, 2, 3]
"""

from __future__ import annotations

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import IterVar, PrimExpr, const
from unity.topi.utils import const_int, normalize_axes, wrap_index


def take(x: Tensor, indices: Tensor, axis: int = 0) -> Tensor:
    """`out[pre, j..., post] = x[pre, indices[j...], post]` (numpy `take` along `axis`).

    Example:
        >>> from unity import te
        >>> x = te.placeholder((5,), name="x")
        >>> take(x, te.placeholder((3,), "int32", name="i")).shape[0].value
        3
    """
    (axis,) = normalize_axes(x.ndim, axis)
    shape = [*x.shape[:axis], *indices.shape, *x.shape[axis + 1 :]]
    k = indices.ndim

    def body(*i: PrimExpr) -> PrimExpr:
        idx = indices[tuple(i[axis : axis + k])] if k else indices[()]
        src = [*i[:axis], wrap_index(idx, x.shape[axis]), *i[axis + k :]]
        return x[tuple(src)]

    return te.compute(shape, body, name="T_take")


def gather_elements(x: Tensor, indices: Tensor, axis: int = 0) -> Tensor:
    """`out[p] = x[p with p[axis] replaced by indices[p]]` (ONNX GatherElements).

    Raises:
        ValueError: `indices` has a different rank than `x`.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((3, 3), name="x")
        >>> gather_elements(x, te.placeholder((2, 3), "int64", name="i"), 1).shape[0].value
        2
    """
    if indices.ndim != x.ndim:
        raise ValueError(f"gather_elements: indices rank {indices.ndim} != data rank {x.ndim}")
    (axis,) = normalize_axes(x.ndim, axis)

    def body(*i: PrimExpr) -> PrimExpr:
        src = list(i)
        src[axis] = wrap_index(indices[i], x.shape[axis])
        return x[tuple(src)]

    return te.compute(indices.shape, body, name="T_gather_elements")


_REDUCTIONS = ("update", "add", "mul", "min", "max")


def scatter_elements(
    x: Tensor, indices: Tensor, updates: Tensor, axis: int = 0, reduction: str = "update"
) -> Tensor:
    """A copy of `x` with `updates[p]` written at `p` with `p[axis] = indices[p]`.

    `reduction` combines instead of writing: "add", "mul", "min", "max"; with "update",
    the last update of a repeated index wins (ONNX ScatterElements).  Each output element
    scans the updates along `axis`, so the cost is ``size(x) * indices.shape[axis]``.
    `indices` may have length 1 on every other axis (one index per row, broadcast): an
    update then finds each output row's last update once per row.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((3, 3), name="x")
        >>> i = te.placeholder((1, 3), "int64", name="i")
        >>> scatter_elements(x, i, te.placeholder((1, 3), name="u")).shape[0].value
        3
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"scatter_elements: reduction {reduction!r} is not one of {_REDUCTIONS}")
    if not indices.ndim == updates.ndim == x.ndim:
        raise ValueError("scatter_elements: data, indices and updates must have one rank")
    (axis,) = normalize_axes(x.ndim, axis)
    r = te.reduce_axis((0, updates.shape[axis]), name="r")
    zero = const(0, r.var.dtype)

    def at(p: tuple[PrimExpr, ...], step: PrimExpr, shape: list[PrimExpr]) -> tuple[PrimExpr, ...]:
        """The index into a tensor of `shape` (indices or updates) at scan `step` for
        output `p` (clamped: an axis of length 1 broadcasts)."""
        out = [tir.min(q, d - 1) for q, d in zip(p, shape, strict=True)]
        out[axis] = step
        return tuple(out)

    def inside(p: tuple[PrimExpr, ...]) -> PrimExpr:
        """Whether output `p` is within the updates off the axis."""
        ok: PrimExpr = const(True, "bool")
        for k, (q, d) in enumerate(zip(p, updates.shape, strict=True)):
            ok = ok if k == axis else tir.logical_and(ok, q < d)
        return ok

    def hit(p: tuple[PrimExpr, ...]) -> PrimExpr:
        """Whether update `r` lands on row `p[axis]` (of output `p`)."""
        target = wrap_index(indices[at(p, r.var, indices.shape)], x.shape[axis])
        return tir.eq(target, p[axis].astype(target.dtype))

    if reduction == "update":
        rows = all(const_int(d) == 1 for k, d in enumerate(indices.shape) if k != axis)
        if rows:  # the last update of each output row, found once per row
            row_shape = [d if k == axis else const(1, "int64") for k, d in enumerate(x.shape)]
            last_row = te.compute(row_shape, lambda *p: te.max(tir.select(hit(p), r.var, -1), axis=r),
                                  name="T_scatter_last")  # fmt: skip

            def last_of(p: tuple[PrimExpr, ...]) -> PrimExpr:
                return last_row[tuple(q if k == axis else zero for k, q in enumerate(p))]
        else:
            full = te.compute(x.shape, lambda *p: te.max(tir.select(tir.logical_and(hit(p), inside(p)), r.var, -1),
                                                         axis=r), name="T_scatter_last")  # fmt: skip

            def last_of(p: tuple[PrimExpr, ...]) -> PrimExpr:
                return full[p]

        return te.compute(
            x.shape,
            lambda *p: tir.select(tir.logical_and(last_of(p) >= 0, inside(p)),
                                  updates[at(p, tir.max(last_of(p), zero), updates.shape)], x[p]),
            name="T_scatter_elements",
        )  # fmt: skip
    combine = {"add": te.sum, "mul": te.prod, "min": te.min, "max": te.max}[reduction]

    def lands(p: tuple[PrimExpr, ...]) -> PrimExpr:
        return tir.logical_and(hit(p), inside(p))

    reduced = te.compute(x.shape, lambda *p: combine(updates[at(p, r.var, updates.shape)], axis=r,
                                                     where=lands(p)), name="T_scatter_reduce")  # fmt: skip
    hits = te.compute(x.shape, lambda *p: te.sum(tir.select(lands(p), 1, 0), axis=r),
                      name="T_scatter_hits")  # fmt: skip
    pair = {"add": tir.add, "mul": tir.mul, "min": tir.min, "max": tir.max}[reduction]
    return te.compute(
        x.shape,
        lambda *p: tir.select(hits[p] > 0, pair(x[p], reduced[p]), x[p]),
        name="T_scatter_elements",
    )


def one_hot(indices: Tensor, depth: int, on_value: float = 1.0, off_value: float = 0.0,
            axis: int = -1, dtype: str = "float32") -> Tensor:  # fmt: skip
    """`on_value` where the new `axis` index equals `indices` (negatives wrap), else `off_value`.

    Example:
        >>> from unity import te
        >>> [d.value for d in one_hot(te.placeholder((3,), "int64", name="i"), 4).shape]
        [3, 4]
    """
    rank = indices.ndim + 1
    (ax,) = normalize_axes(rank, axis)
    shape = [*indices.shape[:ax], const(depth, "int64"), *indices.shape[ax:]]

    def body(*i: PrimExpr) -> PrimExpr:
        idx = indices[tuple(v for k, v in enumerate(i) if k != ax)].astype("int64")
        idx = tir.select(idx < 0, idx + depth, idx)
        hit = tir.eq(idx, i[ax].astype("int64"))
        return tir.select(hit, const(on_value, dtype), const(off_value, dtype))

    return te.compute(shape, body, name="T_one_hot")


def gather_nd(x: Tensor, indices: Tensor, batch_dims: int = 0) -> Tensor:
    """ONNX GatherND: the last axis of `indices` addresses the leading axes of `x`
    (after `batch_dims` shared batch axes).

    Example:
        >>> from unity import te
        >>> x = te.placeholder((2, 3, 4), name="x")
        >>> [d.value for d in gather_nd(x, te.placeholder((5, 2), "int64", name="i")).shape]
        [5, 4]
    """
    k = const_int(indices.shape[-1])
    if k is None or k + batch_dims > x.ndim:
        raise ValueError(
            "gather_nd: the last dim of indices must be a constant <= rank - batch_dims"
        )
    shape = [*indices.shape[:-1], *x.shape[batch_dims + k :]]
    lead = indices.ndim - 1

    def body(*i: PrimExpr) -> PrimExpr:
        batch = list(i[:batch_dims])
        picked = [
            wrap_index(indices[(*i[:lead], const(j, "int64"))], x.shape[batch_dims + j])
            for j in range(k)
        ]
        return x[tuple(batch + picked + list(i[lead:]))]

    return te.compute(shape, body, name="T_gather_nd")


def scatter_nd(x: Tensor, indices: Tensor, updates: Tensor, reduction: str = "update") -> Tensor:
    """ONNX ScatterND: a copy of `x` with `updates[u]` written (or reduced) at `x[indices[u]]`.

    `indices` has shape `U + (k,)`; `updates` has shape `U + x.shape[k:]`.  With "update"
    the last of repeated index tuples wins.  Each output scans all of `U`.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((4, 3), name="x")
        >>> i = te.placeholder((2, 1), "int64", name="i")
        >>> scatter_nd(x, i, te.placeholder((2, 3), name="u")).shape[0].value
        4
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"scatter_nd: reduction {reduction!r} is not one of {_REDUCTIONS}")
    k = const_int(indices.shape[-1])
    if k is None or k > x.ndim:
        raise ValueError("scatter_nd: the last dim of indices must be a constant <= data rank")
    lead = list(indices.shape[:-1])

    def scan() -> list[IterVar]:
        return [te.reduce_axis((0, d), name=f"u{n}") for n, d in enumerate(lead)]

    def hit(p: tuple[PrimExpr, ...], u: list[IterVar]) -> PrimExpr:
        match: PrimExpr = const(True)
        for j in range(k):
            target = wrap_index(indices[(*(r.var for r in u), const(j, "int64"))], x.shape[j])
            match = tir.logical_and(match, tir.eq(target, p[j].astype(target.dtype)))
        return match

    def update_at(u: list[PrimExpr], p: tuple[PrimExpr, ...]) -> PrimExpr:
        return updates[(*u, *p[k:])]

    if reduction == "update":

        def last_body(*p: PrimExpr) -> PrimExpr:
            u = scan()
            flat = const(0, "int64")
            for r, d in zip(u, lead, strict=True):
                flat = flat * d.astype("int64") + r.var.astype("int64")
            return te.max(tir.select(hit(p, u), flat, const(-1, "int64")), axis=u)

        last = te.compute(x.shape, last_body, name="T_scatter_nd_last")

        def body(*p: PrimExpr) -> PrimExpr:
            pos = tir.max(last[p], const(0, "int64"))
            coords = _unravel(pos, lead)
            return tir.select(last[p] >= 0, update_at(coords, p), x[p])

        return te.compute(x.shape, body, name="T_scatter_nd")
    combine = {"add": te.sum, "mul": te.prod, "min": te.min, "max": te.max}[reduction]

    def reduce_body(*p: PrimExpr) -> PrimExpr:
        u = scan()
        return combine(update_at([r.var for r in u], p), axis=u, where=hit(p, u))

    def count_body(*p: PrimExpr) -> PrimExpr:
        u = scan()
        return te.sum(tir.select(hit(p, u), 1, 0), axis=u)

    reduced = te.compute(x.shape, reduce_body, name="T_scatter_nd_reduce")
    hits = te.compute(x.shape, count_body, name="T_scatter_nd_hits")
    pair = {"add": tir.add, "mul": tir.mul, "min": tir.min, "max": tir.max}[reduction]
    return te.compute(
        x.shape, lambda *p: tir.select(hits[p] > 0, pair(x[p], reduced[p]), x[p]),
        name="T_scatter_nd",
    )  # fmt: skip


def _unravel(flat: PrimExpr, shape: list[PrimExpr]) -> list[PrimExpr]:
    out: list[PrimExpr] = []
    for d in reversed(shape[1:]):
        out.append(flat % d.astype("int64"))
        flat = flat // d.astype("int64")
    out.append(flat)
    return out[::-1]
