"""`max_pool_indices`: where each max-pooling window found its maximum (ONNX MaxPool's
second output, `Indices`).

An index is flat over the whole ``(N, C, *spatial)`` input (padding not counted): row-major
within a plane with `storage_order` 0, column-major with 1.  A window holding its maximum
more than once gives the first in window order (row-major over the kernel offsets).

Example:
    >>> from unity import te
    >>> x = te.placeholder((1, 1, 4, 4), name="x")
    >>> y = max_pool_indices(x, (2, 2), (2, 2), (0, 0), (1, 1), (2, 2))
    >>> y.dtype, [d.value for d in y.shape]
    ('int64', [1, 1, 2, 2])
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.utils import const_int, ravel, unravel


def _window_positions(out: Sequence[PrimExpr], offsets: Sequence[PrimExpr], strides: Sequence[int],
                      pads: Sequence[int], dilations: Sequence[int]) -> list[PrimExpr]:  # fmt: skip
    """Input position of kernel offset `offsets` in the window of output position `out`."""
    return [
        o * s - p + k * d
        for o, k, s, p, d in zip(out, offsets, strides, pads, dilations, strict=True)
    ]


def _inside(pos: Sequence[PrimExpr], spatial: Sequence[int]) -> PrimExpr:
    ok: PrimExpr = const(True, "bool")
    for p, size in zip(pos, spatial, strict=True):
        ok = tir.logical_and(ok, tir.logical_and(p >= 0, p < size))
    return ok


def _clamped(pos: Sequence[PrimExpr], spatial: Sequence[int]) -> tuple[PrimExpr, ...]:
    return tuple(
        tir.max(tir.min(p, size - 1), const(0, p.dtype))
        for p, size in zip(pos, spatial, strict=True)
    )


def max_pool_indices(
    x: Tensor,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads_begin: Sequence[int],
    dilations: Sequence[int],
    output: Sequence[int],
    storage_order: int = 0,
) -> Tensor:
    """int64 flat index of each window's maximum; windows of output spatial shape `output`.

    Window ``o`` (per axis) reads input positions ``o * stride - pad_begin + k * dilation``
    for ``k < kernel``; positions outside the input are skipped.  A window with no position
    inside the input gives -1.

    Raises:
        ValueError: the input is not ``(N, C, *spatial)`` with static spatial dims, or the
            attribute lengths differ, or `storage_order` is not 0 or 1.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((2, 3, 9), name="x")
        >>> [d.value for d in max_pool_indices(x, (3,), (3,), (0,), (1,), (3,)).shape]
        [2, 3, 3]
    """
    rank = len(kernel)
    spatial = [const_int(d) for d in x.shape[2:]]
    if x.ndim != rank + 2 or any(d is None for d in spatial):
        raise ValueError(
            f"max_pool_indices: expects (N, C, {rank} static dims), got {list(x.shape)}"
        )
    if not len(strides) == len(pads_begin) == len(dilations) == len(output) == rank:
        raise ValueError(
            f"max_pool_indices: a {rank}-D kernel needs {rank} strides, pads, dilations, sizes"
        )
    if storage_order not in (0, 1):
        raise ValueError(f"max_pool_indices: storage_order must be 0 or 1, got {storage_order}")
    size = [int(d) for d in spatial]  # type: ignore[arg-type]  # checked above
    shape = (x.shape[0], x.shape[1], *output)

    def peak(n: PrimExpr, c: PrimExpr, *o: PrimExpr) -> PrimExpr:
        k = [te.reduce_axis((0, kk), name=f"k{d}") for d, kk in enumerate(kernel)]
        pos = _window_positions(o, [r.var for r in k], strides, pads_begin, dilations)
        lowest = tir.min_value(
            x.dtype
        )  # a select, not `where=`: GPU reductions take `B = max(B, v)`
        return te.max(
            tir.select(_inside(pos, size), x[(n, c, *_clamped(pos, size))], lowest), axis=k
        )

    best = te.compute(shape, peak, name="T_pool_max")
    count = math.prod(kernel)

    def first(n: PrimExpr, c: PrimExpr, *o: PrimExpr) -> PrimExpr:
        k = [te.reduce_axis((0, kk), name=f"k{d}") for d, kk in enumerate(kernel)]
        pos = _window_positions(o, [r.var for r in k], strides, pads_begin, dilations)
        hit = tir.logical_and(
            _inside(pos, size), tir.eq(x[(n, c, *_clamped(pos, size))], best[(n, c, *o)])
        )
        order = ravel([r.var for r in k], list(kernel))
        return te.min(tir.select(hit, order, const(count, order.dtype)), axis=k)

    ordinal = te.compute(shape, first, name="T_pool_first")

    def index(n: PrimExpr, c: PrimExpr, *o: PrimExpr) -> PrimExpr:
        at = ordinal[(n, c, *o)]
        pos = [p.astype("int64") for p in _window_positions(o, unravel(at, list(kernel)), strides, pads_begin,
                                                             dilations)]  # fmt: skip
        within = ravel(pos, size) if storage_order == 0 else ravel(pos[::-1], size[::-1])
        plane = n.astype("int64") * x.shape[1] + c.astype("int64")
        return tir.select(at < count, plane * math.prod(size) + within, const(-1, "int64"))

    return te.compute(shape, index, name="T_max_pool_indices")
