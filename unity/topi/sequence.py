"""Per-sample sequence ops along a time axis: `reverse_sequence` and `tensor_scatter`.

Both are gathers (each output element reads one input element), so every element is
written once and the kernels need no scatter.

Example:
    >>> from unity import te
    >>> x = te.placeholder((4, 2), name="x")
    >>> lens = te.placeholder((2,), "int64", name="lens")
    >>> reverse_sequence(x, lens, batch_axis=1, time_axis=0).op.name
    'T_reverse_sequence'
"""

from __future__ import annotations

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.utils import normalize_axes


def _clamp(v: PrimExpr, low: PrimExpr, high: PrimExpr) -> PrimExpr:
    return tir.max(tir.min(v, high), low)


def reverse_sequence(x: Tensor, lengths: Tensor, batch_axis: int = 1, time_axis: int = 0) -> Tensor:
    """Reverse the first ``lengths[b]`` steps along `time_axis` of each sample `b` (ONNX
    ReverseSequence); later steps are copied.

    A length above the time axis counts as the whole axis; one below zero as zero.

    Raises:
        ValueError: the axes are equal or out of range, or `lengths` is not 1-D.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((2, 5, 3), name="x")
        >>> lens = te.placeholder((2,), "int64", name="lens")
        >>> [d.value for d in reverse_sequence(x, lens, batch_axis=0, time_axis=1).shape]
        [2, 5, 3]
    """
    (batch,) = normalize_axes(x.ndim, batch_axis, "batch_axis")
    (time,) = normalize_axes(x.ndim, time_axis, "time_axis")
    if batch == time:
        raise ValueError(f"reverse_sequence: batch_axis and time_axis are both {batch}")
    if lengths.ndim != 1:
        raise ValueError(f"reverse_sequence: lengths must be 1-D, got rank {lengths.ndim}")
    steps = x.shape[time]

    def body(*i: PrimExpr) -> PrimExpr:
        t = i[time]
        n = _clamp(lengths[i[batch]].astype(t.dtype), const(0, t.dtype), steps.astype(t.dtype))
        src = tir.select(t < n, n - 1 - t, t)
        return x[tuple(src if k == time else v for k, v in enumerate(i))]

    return te.compute(x.shape, body, name="T_reverse_sequence")


def tensor_scatter(past: Tensor, update: Tensor, write_indices: Tensor | None = None,
                   axis: int = -2, circular: bool = False) -> Tensor:  # fmt: skip
    """`past` with `update` written along `axis` from ``write_indices[b]`` on, per sample `b`
    (axis 0); with `circular`, positions wrap modulo the axis (ONNX TensorScatter).

    Without `write_indices`, every sample writes from 0.  Linear writes past the end of the
    axis are dropped.

    Raises:
        ValueError: `axis` is the batch axis, or the ranks differ.

    Example:
        >>> from unity import te
        >>> cache = te.placeholder((2, 1, 4, 5), name="cache")
        >>> new = te.placeholder((2, 1, 1, 5), name="new")
        >>> [d.value for d in tensor_scatter(cache, new).shape]
        [2, 1, 4, 5]
    """
    if past.ndim != update.ndim:
        raise ValueError(f"tensor_scatter: past has rank {past.ndim}, update rank {update.ndim}")
    (axis,) = normalize_axes(past.ndim, axis)
    if axis == 0:
        raise ValueError("tensor_scatter: axis 0 is the batch axis, not a sequence axis")
    size, count = past.shape[axis], update.shape[axis]

    def body(*i: PrimExpr) -> PrimExpr:
        p = i[axis]
        start = const(0, p.dtype) if write_indices is None else write_indices[i[0]].astype(p.dtype)
        step = (p - start) % size.astype(p.dtype) if circular else p - start
        inside = tir.logical_and(step >= 0, step < count.astype(p.dtype))
        src = _clamp(step, const(0, p.dtype), count.astype(p.dtype) - 1)
        new = update[tuple(src if k == axis else v for k, v in enumerate(i))]
        return tir.select(inside, new, past[i])

    return te.compute(past.shape, body, name="T_tensor_scatter")
