"""`max_unpool`: put pooled values back where MaxPool found them (ONNX MaxUnpool).

The output has the shape MaxPool's input had, as far as the window arithmetic tells:
``(in - 1) * stride - pad_begin - pad_end + kernel`` per spatial axis (optionally
zero-extended at the end).  `indices` holds, for each pooled value, the flat position
(over the whole ``(N, C, *spatial)`` tensor of that shape) it came from.

Each output element looks at the few pooled elements whose windows cover it (at most
``ceil(kernel / stride)`` per axis) and takes the value of the last one pointing at it,
so the kernel is a gather with no scatter.  An index that lies outside its own pooling
window (which MaxPool never produces) is ignored.

Example:
    >>> from unity import te
    >>> x = te.placeholder((1, 1, 2, 2), name="x")
    >>> i = te.placeholder((1, 1, 2, 2), "int64", name="i")
    >>> [d.value for d in max_unpool(x, i, (2, 2), (2, 2)).shape]
    [1, 1, 4, 4]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.utils import const_int, ravel


def unpool_shape(spatial: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
                 pads: Sequence[int]) -> list[int]:  # fmt: skip
    """The spatial shape MaxUnpool infers: ``(in - 1) * stride - pads + kernel`` per axis.

    Example:
        >>> unpool_shape((2, 3), (2, 2), (2, 2), (0, 1, 0, 1))
        [4, 4]
    """
    rank = len(spatial)
    return [
        (spatial[d] - 1) * strides[d] - pads[d] - pads[d + rank] + kernel[d] for d in range(rank)
    ]


def _static_spatial(x: Tensor, indices: Tensor, rank: int) -> list[int]:
    if x.ndim != rank + 2 or indices.ndim != x.ndim:
        raise ValueError(f"max_unpool: expects (N, C, {rank} spatial dims) values and indices, "
                         f"got ranks {x.ndim} and {indices.ndim}")  # fmt: skip
    dims = [const_int(d) for d in x.shape[2:]]
    if any(d is None for d in dims):
        raise ValueError(f"max_unpool: needs static spatial dims, got {list(x.shape[2:])}")
    return [int(d) for d in dims]  # type: ignore[arg-type]  # checked above


def max_unpool(
    x: Tensor,
    indices: Tensor,
    kernel: Sequence[int],
    strides: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    output: Sequence[int] | None = None,
) -> Tensor:
    """Scatter `x` to the flat positions `indices` of a zero tensor (ONNX MaxUnpool).

    `pads` holds all begins, then all ends.  `output`, the spatial shape of the result,
    may extend the inferred shape (`unpool_shape`) with zeros at the end of each axis.

    Raises:
        ValueError: the ranks or the attribute lengths do not match, or `output` is
            smaller than the inferred shape.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 2, 3), name="x")
        >>> i = te.placeholder((1, 2, 3), "int64", name="i")
        >>> [d.value for d in max_unpool(x, i, (3,), (2,), output=(8,)).shape]
        [1, 2, 8]
    """
    rank = len(kernel)
    strides = list(strides or [1] * rank)
    pads = list(pads or [0] * (2 * rank))
    if len(strides) != rank or len(pads) != 2 * rank:
        raise ValueError(f"max_unpool: {rank}-D kernel with strides {strides} and pads {pads}")
    spatial = _static_spatial(x, indices, rank)
    inferred = unpool_shape(spatial, kernel, strides, pads)
    output = list(output or inferred)
    if len(output) != rank or any(o < i for o, i in zip(output, inferred, strict=True)):
        raise ValueError(
            f"max_unpool: output spatial shape {output} is smaller than the inferred {inferred}"
        )
    reach = [range(-(-k // s)) for k, s in zip(kernel, strides, strict=True)]
    plane = math.prod(inferred)

    def body(n: PrimExpr, c: PrimExpr, *o: PrimExpr) -> PrimExpr:
        wide = [v.astype("int64") for v in o]
        flat = (n.astype("int64") * x.shape[1] + c.astype("int64")) * plane + ravel(wide, inferred)
        inside = const(True, "bool")
        for d in range(rank):
            inside = tir.logical_and(inside, wide[d] < inferred[d])
        value = const(0, x.dtype)
        for back in itertools.product(*(reversed(r) for r in reach)):  # pooled positions ascending
            hit, src = inside, []
            for d, b in enumerate(back):
                j = (wide[d] + pads[d]) // strides[d] - b
                hit = tir.logical_and(hit, tir.logical_and(j >= 0, j < spatial[d]))
                hit = tir.logical_and(hit, wide[d] + pads[d] - j * strides[d] < kernel[d])
                src.append(tir.max(tir.min(j, spatial[d] - 1), const(0, "int64")))
            hit = tir.logical_and(hit, tir.eq(indices[(n, c, *src)].astype("int64"), flat))
            value = tir.select(hit, x[(n, c, *src)], value)
        return value

    return te.compute((x.shape[0], x.shape[1], *output), body, name="T_max_unpool")
