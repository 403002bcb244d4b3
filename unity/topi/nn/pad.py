"""`pad`: widen a tensor with a constant, or with edge / reflected values.

Example:
    >>> from unity import te
    >>> x = te.placeholder((2, 3), name="x")
    >>> [d.value for d in pad(x, [0, 1], [1, 1]).shape]
    [3, 5]
"""

from __future__ import annotations

from collections.abc import Sequence

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.utils import const_int

_MODES = ("constant", "edge", "reflect")


def _grow(dim: PrimExpr, before: int, after: int | PrimExpr) -> PrimExpr:
    size = const_int(dim)
    if not isinstance(after, int):  # a symbolic width (a tile's worth past a symbolic size)
        return dim + before + after
    return const(size + before + after, dim.dtype) if size is not None else dim + (before + after)


def pad(
    x: Tensor,
    pad_before: Sequence[int],
    pad_after: Sequence[int] | None = None,
    pad_value: float = 0.0,
    pad_mode: str = "constant",
    name: str = "T_pad",
) -> Tensor:
    """Pad each axis with `pad_before[k]` and `pad_after[k]` elements (after = before if None).

    `pad_mode` "constant" fills with `pad_value`; "edge" repeats the border element;
    "reflect" mirrors without repeating the border (numpy "reflect").

    Raises:
        ValueError: an unknown mode, or widths that do not match the rank.

    Example:
        >>> from unity import te
        >>> pad(te.placeholder((3,), name="x"), [2], pad_mode="edge").shape[0].value
        7
    """
    after = list(pad_before) if pad_after is None else list(pad_after)
    before = list(pad_before)
    if pad_mode not in _MODES:
        raise ValueError(f"pad: mode {pad_mode!r} is not one of {_MODES}")
    if len(before) != x.ndim or len(after) != x.ndim:
        raise ValueError(
            f"pad: needs {x.ndim} widths before and after, got {len(before)} and {len(after)}"
        )
    shape = [_grow(d, b, a) for d, b, a in zip(x.shape, before, after, strict=True)]

    def body(*i: PrimExpr) -> PrimExpr:
        if pad_mode == "constant":
            return _constant(x, i, before, after, pad_value)
        return x[
            tuple(_source(q, b, d, pad_mode) for q, b, d in zip(i, before, x.shape, strict=True))
        ]

    return te.compute(shape, body, name=name)


def _constant(x: Tensor, i: tuple[PrimExpr, ...], before: Sequence[int], after: Sequence[int],
              value: float) -> PrimExpr:  # fmt: skip
    src = [q - b if b else q for q, b in zip(i, before, strict=True)]
    conds = [q >= b for q, b in zip(i, before, strict=True) if b]
    conds += [s < d for s, a, d in zip(src, after, x.shape, strict=True) if not isinstance(a, int) or a]
    fill = const(value if x.dtype.startswith(("float", "bfloat")) else int(value), x.dtype)
    if not conds:
        return x[tuple(src)]
    inside = conds[0]
    for c in conds[1:]:
        inside = tir.logical_and(inside, c)
    # clamp the load so that both select branches stay in bounds
    safe = tuple(
        tir.max(tir.min(s, d - 1), const(0, s.dtype)) for s, d in zip(src, x.shape, strict=True)
    )
    return tir.select(inside, x[safe], fill)


def _source(q: PrimExpr, before: int, dim: PrimExpr, mode: str) -> PrimExpr:
    j = q - before if before else q
    last = dim - 1
    if mode == "edge":
        return tir.max(tir.min(j, last), const(0, j.dtype))
    # reflect: -k -> k, (d-1)+k -> (d-1)-k
    j = tir.select(j < 0, -j, j)
    j = tir.select(j > last, last - (j - last), j)
    return tir.max(tir.min(j, last), const(0, j.dtype))
