"""Copy-based rearrangements: tile, repeat, flip, and depth_to_space / space_to_depth.

Example:
    >>> from unity import te
    >>> x = te.placeholder((2, 3), name="x")
    >>> [d.value for d in tile(x, (2, 1)).shape], [d.value for d in repeat(x, 2, 1).shape]
    ([4, 3], [2, 6])
"""

from __future__ import annotations

from collections.abc import Sequence

from unity import te
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.utils import const_int, normalize_axes


def _times(dim: PrimExpr, k: int) -> PrimExpr:
    size = const_int(dim)
    return const(size * k, dim.dtype) if size is not None else dim * k


def tile(x: Tensor, reps: Sequence[int]) -> Tensor:
    """Repeat the whole of `x` `reps[k]` times along each axis (numpy `tile`).

    Example:
        >>> from unity import te
        >>> [d.value for d in tile(te.placeholder((3,), name="x"), (2, 2)).shape]
        [2, 6]
    """
    reps = list(reps)
    rank = max(len(reps), x.ndim)
    reps = [1] * (rank - len(reps)) + reps
    dims = [const(1, "int32")] * (rank - x.ndim) + list(x.shape)
    shape = [_times(d, r) for d, r in zip(dims, reps, strict=True)]
    offset = rank - x.ndim

    def body(*i: PrimExpr) -> PrimExpr:
        src = i[offset:]
        return x[
            tuple(
                v % d if r != 1 else v for v, d, r in zip(src, x.shape, reps[offset:], strict=True)
            )
        ]

    return te.compute(shape, body, name="T_tile")


def repeat(x: Tensor, repeats: int, axis: int) -> Tensor:
    """Repeat each element `repeats` times along `axis` (numpy `repeat`).

    Example:
        >>> from unity import te
        >>> repeat(te.placeholder((3,), name="x"), 3, 0).shape[0].value
        9
    """
    if repeats < 1:
        raise ValueError(f"repeat: repeats must be positive, got {repeats}")
    (ax,) = normalize_axes(x.ndim, axis)
    shape = list(x.shape)
    shape[ax] = _times(shape[ax], repeats)

    def body(*i: PrimExpr) -> PrimExpr:
        return x[tuple(v // repeats if k == ax else v for k, v in enumerate(i))]

    return te.compute(shape, body, name="T_repeat")


def flip(x: Tensor, axis: int | Sequence[int]) -> Tensor:
    """Reverse the order of elements along `axis` (numpy `flip`).

    Example:
        >>> from unity import te
        >>> flip(te.placeholder((3, 2), name="x"), 0).op.name
        'T_flip'
    """
    axes = normalize_axes(x.ndim, axis)

    def body(*i: PrimExpr) -> PrimExpr:
        return x[tuple(x.shape[k] - 1 - v if k in axes else v for k, v in enumerate(i))]

    return te.compute(x.shape, body, name="T_flip")


def depth_to_space(x: Tensor, block_size: int, layout: str = "NCHW", mode: str = "DCR") -> Tensor:
    """Move `block_size**2` channel groups into spatial blocks (ONNX DepthToSpace, NCHW).

    `mode` "DCR" takes depth-major channels, "CRD" column-row-depth (ONNX's two modes).

    Example:
        >>> from unity import te
        >>> [d.value for d in depth_to_space(te.placeholder((1, 8, 2, 3), name="x"), 2).shape]
        [1, 2, 4, 6]
    """
    if layout != "NCHW" or mode not in ("DCR", "CRD"):
        raise ValueError(
            f"depth_to_space: supports layout NCHW and modes DCR/CRD, got {layout}/{mode}"
        )
    n, c, h, w = x.shape
    b = block_size
    oc = const(const_int(c) // (b * b), c.dtype) if const_int(c) is not None else c // (b * b)

    def body(i: PrimExpr, ch: PrimExpr, y: PrimExpr, xx: PrimExpr) -> PrimExpr:
        by, bx = y % b, xx % b
        src_c = (by * b + bx) * oc + ch if mode == "DCR" else ch * (b * b) + by * b + bx
        return x[i, src_c, y // b, xx // b]

    return te.compute((n, oc, _times(h, b), _times(w, b)), body, name="T_depth_to_space")


def space_to_depth(x: Tensor, block_size: int, layout: str = "NCHW") -> Tensor:
    """Move spatial `block_size x block_size` blocks into channels (ONNX SpaceToDepth, NCHW).

    Example:
        >>> from unity import te
        >>> [d.value for d in space_to_depth(te.placeholder((1, 2, 4, 6), name="x"), 2).shape]
        [1, 8, 2, 3]
    """
    if layout != "NCHW":
        raise ValueError(f"space_to_depth: supports layout NCHW, got {layout}")
    n, c, h, w = x.shape
    b = block_size

    def div(d: PrimExpr) -> PrimExpr:
        return const(const_int(d) // b, d.dtype) if const_int(d) is not None else d // b

    def body(i: PrimExpr, ch: PrimExpr, y: PrimExpr, xx: PrimExpr) -> PrimExpr:
        block, src_c = ch // c, ch % c
        return x[i, src_c, y * b + block // b, xx * b + block % b]

    return te.compute((n, _times(c, b * b), div(h), div(w)), body, name="T_space_to_depth")
