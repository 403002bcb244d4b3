"""`roi_align`: pool each region of interest to a fixed grid of bins (ONNX RoiAlign).

Every bin averages (or takes the maximum of) bilinear samples of the feature map on a
regular ``grid_h x grid_w`` grid.  With ``sampling_ratio = 0`` the grid depends on the
roi (``ceil(roi size / output size)``), so it is not known when the kernel is built.  It
is not bounded by the image either: a roi far larger than the image has a grid to match.
But only samples inside ``[-1, size]`` read the image (the others are zeros, which still
count for the average), and when the grid is adaptive its samples are at least
``bin / ceil(bin)`` apart, so at most ``size + 2`` of them per axis and bin fall inside.
So each axis walks a window of ``size + 4`` samples that starts just before the first
sample inside the image; a guard drops window samples past the end of the grid.  The
count of the grid (for the average) and whether it has samples outside (a zero, for the
maximum) are computed from the roi, not from the window.

The price: an adaptive bin reduces over ``(H + 4) * (W + 4)`` window samples, however
few of them the grid has (a fixed ``sampling_ratio`` reduces over exactly its grid).

Stages, per axis: the roi's start, bin size and grid size; each window sample's position
and whether it is valid (in the grid and inside the image); its two taps and their
weights (every one a block of several outputs, which the GPU schedules do not inline
into their readers, so the CUDA C stays small).  Then the reduction over the window,
and the division by the count (average) or the zero of the samples outside (maximum).

Example:
    >>> from unity import te
    >>> x = te.placeholder((1, 3, 8, 8), name="x")
    >>> rois = te.placeholder((5, 4), name="rois")
    >>> idx = te.placeholder((5,), "int64", name="idx")
    >>> [d.value for d in roi_align(x, rois, idx, (2, 3), sampling_ratio=2).shape]
    [5, 3, 2, 3]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const

MODES = ("avg", "max")

_Roi = tuple[Tensor, Tensor, Tensor]
"""Per axis and roi: the start, the bin size and the grid size (floats)."""

_Tables = tuple[Tensor, Tensor, Tensor, Tensor, Tensor]
"""Per axis and ``(roi, bin, window sample)``: low tap, high tap, their weights, valid (0/1)."""


def roi_align(
    data: Tensor, rois: Tensor, batch_indices: Tensor, output_size: Sequence[int] = (1, 1),
    spatial_scale: float = 1.0, sampling_ratio: int = 0, mode: str = "avg",
    half_pixel: bool = True,
) -> Tensor:  # fmt: skip
    """Pool the regions `rois` of `data` to ``output_size`` bins (ONNX RoiAlign semantics).

    Args:
        data: the feature map, ``(N, C, H, W)``.
        rois: ``(R, 4)`` boxes ``(x1, y1, x2, y2)`` in the coordinates of the input image.
        batch_indices: ``(R,)`` integers, the image of each roi (clamped to ``[0, N)``).
        output_size: ``(output_height, output_width)``.
        spatial_scale: the factor from roi coordinates to feature-map coordinates.
        sampling_ratio: samples per bin and axis; 0: ``ceil(roi size / output size)``.
        mode: "avg" (mean of the samples) or "max" (ONNX's maximum of weighted taps).
        half_pixel: shift the roi by -0.5 pixel (opset 16's default); else rois smaller
            than one pixel are stretched to one.

    Returns:
        ``(R, C, output_height, output_width)`` in `data`'s dtype.

    Raises:
        ValueError: an unknown mode, a negative sampling ratio, or mismatched shapes.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((2, 4, 6, 6), name="x")
        >>> rois = te.placeholder((3, 4), name="rois")
        >>> idx = te.placeholder((3,), "int64", name="idx")
        >>> y = roi_align(x, rois, idx, (2, 2), 0.5, mode="max", half_pixel=False)
        >>> [d.value for d in y.shape]
        [3, 4, 2, 2]
    """
    _check(data, rois, batch_indices, output_size, sampling_ratio, mode)
    f = "float64" if data.dtype == "float64" else "float32"
    pooled = [int(s) for s in output_size]
    axes = [
        _axis_tables(rois, k, data.shape[2 + k], pooled[k], spatial_scale, sampling_ratio,
                     half_pixel, f)
        for k in (0, 1)
    ]  # fmt: skip
    grids = (axes[0][0][2], axes[1][0][2])
    tables = (axes[0][1], axes[1][1])
    ky = te.reduce_axis((0, tables[0][0].shape[2]), name="ky")
    kx = te.reduce_axis((0, tables[1][0].shape[2]), name="kx")
    last = data.shape[0] - 1

    def sample(r: PrimExpr, c: PrimExpr, py: PrimExpr, px: PrimExpr) -> _Sample:
        b = tir.max(tir.min(batch_indices[r].astype(last.dtype), last), const(0, last.dtype))
        ylo, yhi, wylo, wyhi, vy = (t[r, py, ky] for t in tables[0])
        xlo, xhi, wxlo, wxhi, vx = (t[r, px, kx] for t in tables[1])
        taps = [(wylo * wxlo, ylo, xlo), (wylo * wxhi, ylo, xhi),
                (wyhi * wxlo, yhi, xlo), (wyhi * wxhi, yhi, xhi)]  # fmt: skip
        terms = [w * data[b, c, y, x].astype(f) for w, y, x in taps]
        return terms, tir.logical_and(tir.eq(vy, 1), tir.eq(vx, 1))

    out_shape = [rois.shape[0], data.shape[1], const(pooled[0]), const(pooled[1])]
    if mode == "avg":
        return _average(data.dtype, sample, out_shape, (ky, kx), grids)
    return _maximum(data.dtype, tables, sample, out_shape, (ky, kx), grids)


_Sample = tuple[list[PrimExpr], PrimExpr]
"""The four weighted taps of a window sample, and whether it is valid."""


def _average(dtype: str, sample: Callable[..., _Sample], out_shape: list[PrimExpr],
             axes: tuple[tir.IterVar, tir.IterVar],
             grids: tuple[Tensor, Tensor]) -> Tensor:  # fmt: skip
    """The sum of the window's valid samples over the grid's count of samples."""

    def total(*index: PrimExpr) -> PrimExpr:
        terms, valid = sample(*index)
        return te.sum((terms[0] + terms[1]) + (terms[2] + terms[3]), axis=list(axes), where=valid)

    summed = te.compute(out_shape, total, name="T_roi_align_sum")

    def mean(r: PrimExpr, c: PrimExpr, py: PrimExpr, px: PrimExpr) -> PrimExpr:
        f = summed.dtype
        zero, one = const(0.0, f), const(1.0, f)
        count = tir.max(tir.max(grids[0][r], zero) * tir.max(grids[1][r], zero), one)
        return (summed[r, c, py, px] / count).astype(dtype)

    return te.compute(out_shape, mean, name="T_roi_align")


def _maximum(dtype: str, tables: tuple[_Tables, _Tables], sample: Callable[..., _Sample],
             out_shape: list[PrimExpr], axes: tuple[tir.IterVar, tir.IterVar],
             grids: tuple[Tensor, Tensor]) -> Tensor:  # fmt: skip
    """The maximum of the window's valid samples, and 0 if the grid has samples outside."""

    def largest(*index: PrimExpr) -> PrimExpr:
        terms, valid = sample(*index)
        top = tir.max(tir.max(terms[0], terms[1]), tir.max(terms[2], terms[3]))
        return te.max(top, axis=list(axes), where=valid)

    best = te.compute(out_shape, largest, name="T_roi_align_max")
    inside = [_inside_count(t, k) for k, t in enumerate(tables)]

    def result(r: PrimExpr, c: PrimExpr, py: PrimExpr, px: PrimExpr) -> PrimExpr:
        gy, gx = grids[0][r], grids[1][r]
        zero = const(0.0, best.dtype)
        n_inside = (inside[0][r, py] * inside[1][r, px]).astype(best.dtype)
        m = best[r, c, py, px]
        m = tir.select(n_inside < gy * gx, tir.max(m, zero), m)  # a zero of a sample outside
        empty = tir.logical_or(gy <= zero, gx <= zero)
        return tir.select(empty, zero, m).astype(dtype)

    return te.compute(out_shape, result, name="T_roi_align")


def _inside_count(tables: _Tables, k: int) -> Tensor:
    """Per ``(roi, bin)`` of axis `k`: the number of grid samples inside the image."""
    valid = tables[4]
    w = te.reduce_axis((0, valid.shape[2]), name=f"w{k}")
    return te.compute(valid.shape[:2], lambda r, p: te.sum(valid[r, p, w], axis=w),
                      name=f"T_roi_align_inside{k}")  # fmt: skip


def _roi_table(rois: Tensor, k: int, pooled: int, scale: float, ratio: int, half_pixel: bool,
               f: str) -> _Roi:  # fmt: skip
    """Per roi, on axis `k` (0: y, 1: x): its start, bin size and grid size, as floats.

    One block of three outputs: the schedules inline a single-output producer into every
    reader, which would copy the roi arithmetic into each later expression.
    """
    first, second = (1, 3) if k == 0 else (0, 2)
    offset = const(0.5 if half_pixel else 0.0, f)

    def geometry(r: PrimExpr) -> tuple[PrimExpr, PrimExpr, PrimExpr]:
        start = rois[r, first].astype(f) * const(scale, f) - offset
        end = rois[r, second].astype(f) * const(scale, f) - offset
        length = end - start
        if not half_pixel:
            length = tir.max(length, const(1.0, f))  # malformed rois become one pixel
        size = length / const(float(pooled), f)
        if ratio > 0:
            return start, size, const(float(ratio), f)
        # a huge grid only ever runs its window; the bound keeps the float integral
        return start, size, tir.min(tir.ceil(size), const(float(1 << 24), f))

    table = te.compute(rois.shape[:1], geometry, name=f"T_roi_align_roi{k}")
    return table  # type: ignore[return-value]  # three outputs


def _axis_tables(rois: Tensor, k: int, size: PrimExpr, pooled: int, scale: float, ratio: int,
                 half_pixel: bool, f: str) -> tuple[_Roi, _Tables]:  # fmt: skip
    """The roi table of axis `k`, and the taps and weights of each window sample of each bin."""
    roi = _roi_table(rois, k, pooled, scale, ratio, half_pixel, f)
    window = const(ratio, size.dtype) if ratio > 0 else size + 4
    ext = size.astype(f)
    zero, one, half = const(0.0, f), const(1.0, f), const(0.5, f)

    def position(r: PrimExpr, p: PrimExpr, w: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
        start, bin_size, grid = (t[r] for t in roi)
        base = start + p.astype(f) * bin_size
        i = w.astype(f)
        if ratio == 0:
            i = i + _first_inside(base, bin_size, grid)
        pos = base + (i + half) * bin_size / grid
        valid = tir.logical_and(tir.logical_and(pos >= -one, pos <= ext), i < grid)
        return pos, tir.select(valid, const(1, "int32"), const(0, "int32"))

    shape = [rois.shape[0], const(pooled, rois.shape[0].dtype), window]
    pos, valid = te.compute(shape, position, name=f"T_roi_align_pos{k}")

    def taps(*index: PrimExpr) -> tuple[PrimExpr, ...]:
        at, inside = tir.max(pos[index], zero), tir.eq(valid[index], 1)
        low = tir.min(tir.floor(at), ext - one)
        clamped = tir.floor(at) >= ext - one  # both taps on the last pixel, weight 1
        frac = tir.select(clamped, zero, at - low)
        lo = tir.max(low, zero).astype(size.dtype)
        hi = tir.select(clamped, lo, lo + 1)
        return lo, hi, tir.select(inside, one - frac, zero), tir.select(inside, frac, zero)

    lo, hi, w_lo, w_hi = te.compute(shape, taps, name=f"T_roi_align_taps{k}")
    return roi, (lo, hi, w_lo, w_hi, valid)


def _first_inside(base: PrimExpr, bin_size: PrimExpr, grid: PrimExpr) -> PrimExpr:
    """One before the index of the bin's first sample at or past -1 (0 and `grid` bound it).

    The sample ``i`` lies at ``base + (i + 0.5) * bin_size / grid``; rounding may move the
    solved index by one either way, which the window's two spare samples absorb.
    """
    f = base.dtype
    zero, one, half = const(0.0, f), const(1.0, f), const(0.5, f)
    step = tir.select(grid > zero, bin_size / grid, one)
    first = tir.ceil((-one - base) / step - half) - one
    return tir.min(tir.max(first, zero), tir.max(grid, zero))


def _check(data: Tensor, rois: Tensor, batch_indices: Tensor, output_size: Sequence[int],
           sampling_ratio: int, mode: str) -> None:  # fmt: skip
    if mode not in MODES:
        raise ValueError(f"roi_align: mode {mode!r} is not one of {MODES}")
    if sampling_ratio < 0:
        raise ValueError(f"roi_align: sampling_ratio must be >= 0, got {sampling_ratio}")
    if len(output_size) != 2 or min(output_size) < 1:
        raise ValueError(f"roi_align: output_size must be two sizes >= 1, got {output_size}")
    if data.ndim != 4 or rois.ndim != 2 or batch_indices.ndim != 1:
        shapes = ", ".join(_dims(t.shape) for t in (data, rois, batch_indices))
        msg = f"expects data (N, C, H, W), rois (R, 4) and batch_indices (R,), got {shapes}"
        raise ValueError(f"roi_align: {msg}")
    last = rois.shape[1]
    if isinstance(last, tir.IntImm) and last.value != 4:
        raise ValueError(f"roi_align: rois must be (R, 4), got {_dims(rois.shape)}")


def _dims(shape: Sequence[PrimExpr]) -> str:
    dims = (str(d.value) if isinstance(d, tir.IntImm) else str(d) for d in shape)
    return "(" + ", ".join(dims) + ")"
