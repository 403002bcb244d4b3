"""`grid_sample`: sample an N-D image at the normalized points of a grid (ONNX GridSample).

The input is ``(N, C, D1, ..., Dr)`` and the grid ``(N, O1, ..., Or, r)``, whose last axis
holds the points in reversed axis order (``x`` first: the innermost axis, as in
PyTorch). Per spatial axis, one stage maps each grid point to its source coordinate
(split into the integer base and the fraction past it), and a second one to the
source indices and weights of its 1 (nearest), 2 (linear) or 4 (cubic) taps, padding
folded in.  The result is the separable weighted sum of the taps, written out as one
spatial expression (no reduction axis), so every stage is a spatial block.

Example:
    >>> from unity import te
    >>> x = te.placeholder((1, 3, 4, 5), name="x")
    >>> grid = te.placeholder((1, 6, 7, 2), name="grid")
    >>> [d.value for d in grid_sample(x, grid).shape]
    [1, 3, 6, 7]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const

METHODS = ("nearest", "linear", "cubic")
PADDING_MODES = ("zeros", "border", "reflection")

_TAPS = {"nearest": 1, "linear": 2, "cubic": 4}
_FIRST_TAP = {"nearest": 0, "linear": 0, "cubic": -1}
"""Offset of the first tap from `floor(coordinate)` (the rounded one for nearest)."""


def grid_sample(
    data: Tensor, grid: Tensor, method: str = "linear", padding_mode: str = "zeros",
    align_corners: bool = False, cubic_alpha: float = -0.75,
) -> Tensor:  # fmt: skip
    """Sample `data` at the points of `grid` (ONNX GridSample, any number of spatial axes).

    Args:
        data: the image, ``(N, C, D1, ..., Dr)``.
        grid: the points, ``(N, O1, ..., Or, r)``, normalized to [-1, 1] (points outside
            are allowed); ``grid[..., 0]`` indexes ``Dr``, ``grid[..., r - 1]`` indexes ``D1``.
        method: "nearest" (round half to even), "linear" or "cubic".
        padding_mode: the value of points outside the image: "zeros", "border" (clamp)
            or "reflection" (mirror at the border).
        align_corners: -1 and 1 are the centers of the corner pixels (else their outer edges).
        cubic_alpha: the cubic kernel's `A` (ONNX: -0.75).

    Returns:
        ``(N, C, O1, ..., Or)`` in `data`'s dtype.

    Raises:
        ValueError: an unknown method or padding mode, or a grid that does not fit `data`.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((2, 1, 4, 4, 4), name="x")
        >>> g = te.placeholder((2, 3, 3, 5, 3), name="g")
        >>> [d.value for d in grid_sample(x, g, "nearest", "border").shape]
        [2, 1, 3, 3, 5]
    """
    _check(data, grid, method, padding_mode)
    rank = data.ndim - 2
    f = "float64" if "float64" in (data.dtype, grid.dtype) else "float32"
    tables = [
        _tap_tables(data, grid, k, method, padding_mode, align_corners, cubic_alpha, f)
        for k in range(rank)
    ]  # fmt: skip
    out_shape = [data.shape[0], data.shape[1], *grid.shape[1:-1]]

    def body(n: PrimExpr, c: PrimExpr, *o: PrimExpr) -> PrimExpr:
        return _interpolate(data, tables, _TAPS[method], (n, *o), [n, c], f).astype(data.dtype)

    return te.compute(out_shape, body, name="T_grid_sample")


def _interpolate(data: Tensor, tables: list[tuple[Tensor, Tensor]], count: int,
                 point: tuple[PrimExpr, ...], prefix: list[PrimExpr],
                 f: str) -> PrimExpr:  # fmt: skip
    """The separable sum over the `count` taps of each axis after `prefix` (outer axes first)."""
    k = len(prefix) - 2
    if k == len(tables):
        return data[tuple(prefix)].astype(f)
    index, weight = tables[k]
    total: PrimExpr | None = None
    for t in range(count):
        inner = _interpolate(data, tables, count, point, [*prefix, index[(*point, t)]], f)
        term = weight[(*point, t)] * inner
        total = term if total is None else total + term
    assert total is not None
    return total


def _tap_tables(data: Tensor, grid: Tensor, k: int, method: str, padding_mode: str,
                align_corners: bool, alpha: float, f: str) -> tuple[Tensor, Tensor]:  # fmt: skip
    """Per output point of spatial axis `k`: its taps' source indices and weights, ``(..., taps)``.

    Both stages compute two outputs in one block: the schedules inline a single-output
    producer into each of its readers, which would evaluate the coordinate (long with
    reflection) again for every tap of every channel.
    """
    rank = data.ndim - 2
    size = data.shape[2 + k]
    first, count = _FIRST_TAP[method], _TAPS[method]

    def coord(*point: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
        g = grid[(*point, rank - 1 - k)].astype(f)
        x = _source_coord(g, size.astype(f), method, padding_mode, align_corners)
        base = x if method == "nearest" else tir.floor(x)
        return base.astype(size.dtype), x - base

    base, frac = te.compute(grid.shape[:-1], coord, name=f"T_grid_sample_coord{k}")

    def taps(*idx: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
        point, t = idx[:-1], idx[-1]
        i = base[point] + (t.astype(size.dtype) + first)
        weight = _tap_weight(frac[point], t, method, alpha)
        if padding_mode == "zeros":
            weight = tir.select(tir.logical_and(i >= 0, i < size), weight, const(0.0, f))
        return _pad_index(i, size, padding_mode, align_corners), weight

    shape = [*grid.shape[:-1], const(count, grid.shape[0].dtype)]
    index, weight = te.compute(shape, taps, name=f"T_grid_sample_taps{k}")
    return index, weight


def _source_coord(g: PrimExpr, size: PrimExpr, method: str, padding_mode: str,
                  align_corners: bool) -> PrimExpr:  # fmt: skip
    """The input coordinate of normalized `g`, rounded for nearest, moved inside by padding.

    The result is kept in ``[-5, size + 5]``: padding never needs more (zeros padding
    gives every tap there weight 0), and the integer cast of `floor` stays defined.
    """
    f = g.dtype
    one, half = const(1.0, f), const(0.5, f)
    if align_corners:
        x = (g + one) / const(2.0, f) * (size - one)
        lo, hi = const(0.0, f), size - one
    else:
        x = ((g + one) * size - one) / const(2.0, f)
        lo, hi = -half, size - half
    if method == "nearest":
        x = tir.round(x)  # half to even, as PyTorch and the ONNX reference
    outside = tir.logical_or(x < lo, x > hi)
    if padding_mode == "border":
        x = tir.select(outside, _clamp(x, const(0.0, f), size - one), x)
    elif padding_mode == "reflection":
        x = _reflect(x, lo, hi)
    return _clamp(x, const(-5.0, f), size + const(5.0, f))


def _reflect(x: PrimExpr, lo: PrimExpr, hi: PrimExpr) -> PrimExpr:
    """Mirror `x` at `lo` and `hi` until it falls between them (`lo` when they meet)."""
    f = x.dtype
    span = hi - lo
    below = x < lo
    dx = tir.select(below, lo - x, x - hi)
    flips = tir.floor(dx / tir.max(span, const(1.0, f)))  # span is 0 or at least 1
    rest = dx - flips * span
    odd = tir.ne(tir.floor(flips * const(0.5, f)) * const(2.0, f), flips)
    from_lo, from_hi = lo + rest, hi - rest
    # `flips` whole spans past an end, then `rest`: an odd count ends at the other end
    if_below = tir.select(odd, from_hi, from_lo)
    if_above = tir.select(odd, from_lo, from_hi)
    mirrored = tir.select(below, if_below, if_above)
    mirrored = tir.select(span > const(0.0, f), mirrored, lo)
    return tir.select(tir.logical_or(below, x > hi), mirrored, x)


def _pad_index(i: PrimExpr, size: PrimExpr, padding_mode: str, align_corners: bool) -> PrimExpr:
    """The index read for tap `i` (always inside the image; zeros padding zeroes its weight).

    Reflection of an integer index has period ``2 * size`` about the pixel edges
    (``-1 -> 0``), ``2 * (size - 1)`` about the corner pixels' centers (``-1 -> 1``).
    """
    last = size - 1
    if padding_mode == "reflection":
        period = 2 * size if not align_corners else 2 * last
        j = tir.floormod(i, tir.max(period, const(1, i.dtype)))
        back = period - 1 - j if not align_corners else period - j
        i = tir.select(j > last, back, j)
    return _clamp(i, const(0, i.dtype), last)


def _tap_weight(frac: PrimExpr, t: PrimExpr, method: str, alpha: float) -> PrimExpr:
    """Weight of tap `t` at fraction `frac` past the tap at `floor(coordinate)`."""
    f = frac.dtype
    if method == "nearest":
        return const(1.0, f)
    if method == "linear":
        return tir.select(tir.eq(t, 0), const(1.0, f) - frac, frac)
    weights = _cubic_weights(frac, alpha)
    out = weights[3]
    for j in (2, 1, 0):
        out = tir.select(tir.eq(t, j), weights[j], out)
    return out


def _cubic_weights(t: PrimExpr, a: float) -> list[PrimExpr]:
    """Keys' cubic convolution weights of the taps at distances ``1 + t, t, 1 - t, 2 - t``."""
    f = t.dtype
    one, two = const(1.0, f), const(2.0, f)
    A = const(a, f)

    def outer(d: PrimExpr) -> PrimExpr:  # 1 <= d <= 2
        return ((A * d - const(5 * a, f)) * d + const(8 * a, f)) * d - const(4 * a, f)

    def inner(d: PrimExpr) -> PrimExpr:  # 0 <= d <= 1
        return ((A + two) * d - (A + const(3.0, f))) * d * d + one

    return [outer(t + one), inner(t), inner(one - t), outer(two - t)]


def _clamp(v: PrimExpr, lo: PrimExpr, hi: PrimExpr) -> PrimExpr:
    return tir.max(tir.min(v, hi), lo)


def _check(data: Tensor, grid: Tensor, method: str, padding_mode: str) -> None:
    if method not in METHODS:
        raise ValueError(f"grid_sample: method {method!r} is not one of {METHODS}")
    if padding_mode not in PADDING_MODES:
        msg = f"padding mode {padding_mode!r} is not one of {PADDING_MODES}"
        raise ValueError(f"grid_sample: {msg}")
    rank = data.ndim - 2
    if rank < 1:
        msg = f"the input needs a spatial axis, got shape {_dims(data.shape)}"
        raise ValueError(f"grid_sample: {msg}")
    if grid.ndim != data.ndim:
        msg = f"a rank-{data.ndim} input needs a rank-{data.ndim} grid, got {_dims(grid.shape)}"
        raise ValueError(f"grid_sample: {msg}")
    last = grid.shape[-1]
    if not isinstance(last, tir.IntImm) or last.value != rank:
        msg = f"the grid's last axis must hold {rank} coordinates, got shape {_dims(grid.shape)}"
        raise ValueError(f"grid_sample: {msg}")


def _dims(shape: Sequence[PrimExpr]) -> str:
    dims = (str(d.value) if isinstance(d, tir.IntImm) else str(d) for d in shape)
    return "(" + ", ".join(dims) + ")"
