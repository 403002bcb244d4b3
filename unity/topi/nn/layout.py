"""Layout strings ("NCHW", "NHWC", "OIHW", "HWIO"...) and 2-D window arithmetic.

Example:
    >>> axis_of("NHWC", "C")
    3
"""

from __future__ import annotations

from collections.abc import Sequence

from unity.tir.expr import ExprLike, PrimExpr, const
from unity.topi.utils import const_int


def axis_of(layout: str, letter: str) -> int:
    """Position of dimension `letter` in the 4-letter `layout`.

    Raises:
        ValueError: the layout is not 4 letters or lacks `letter`.

    Example:
        >>> axis_of("OIHW", "W")
        3
    """
    pos = layout.find(letter)
    if pos < 0 or len(layout) != 4:
        raise ValueError(f"layout {layout!r} has no axis {letter!r} (expected 4 letters)")
    return pos


def blocked_layout(layout: str) -> tuple[str, int] | None:
    """`(base, block)` of a channel-blocked layout such as "NCHW16c", else None.

    A tensor in "NCHW16c" has shape (N, C/16, H, W, 16): element ``[n, c // 16, h, w, c % 16]``
    holds the NCHW element ``[n, c, h, w]``.

    Example:
        >>> blocked_layout("NCHW16c"), blocked_layout("NCHW")
        (('NCHW', 16), None)
    """
    base, rest = layout[:4], layout[4:]
    if base != "NCHW" or not rest.endswith("c") or not rest[:-1].isdigit():
        return None
    block = int(rest[:-1])
    return (base, block) if block > 0 else None


def pick(layout: str, values: dict[str, PrimExpr]) -> tuple[PrimExpr, ...]:
    """`values` ordered by `layout`: ``pick("NHWC", {"N": n, ...}) == (n, h, w, c)``.

    Example:
        >>> [v.value for v in pick("HW", {"W": const(1), "H": const(2)})]
        [2, 1]
    """
    return tuple(values[c] for c in layout)


def pair(value: int | Sequence[int], what: str) -> tuple[int, int]:
    """An int as a pair, or a checked pair.

    Example:
        >>> pair(3, "strides")
        (3, 3)
    """
    if isinstance(value, int):
        return (value, value)
    out = tuple(int(v) for v in value)
    if len(out) != 2:
        raise ValueError(f"{what} must have 2 values, got {len(out)}")
    return out[0], out[1]


def padding4(value: int | Sequence[int]) -> tuple[int, int, int, int]:
    """Padding as (top, left, bottom, right) from 1, 2 or 4 values.

    Example:
        >>> padding4((1, 2))
        (1, 2, 1, 2)
    """
    vals = (value,) if isinstance(value, int) else tuple(int(v) for v in value)
    if len(vals) == 1:
        return vals[0], vals[0], vals[0], vals[0]
    if len(vals) == 2:
        return vals[0], vals[1], vals[0], vals[1]
    if len(vals) == 4:
        return vals[0], vals[1], vals[2], vals[3]
    raise ValueError(f"padding must have 1, 2 or 4 values, got {len(vals)}")


def window_out(size: ExprLike, kernel: ExprLike, before: int, after: int, stride: int,
               dilation: int, ceil_mode: bool = False) -> PrimExpr:  # fmt: skip
    """Output length of a sliding window: `(size + pads - d*(k-1) - 1) // stride + 1`.

    Example:
        >>> window_out(32, 3, 1, 1, 2, 1).value
        16
    """
    cs, ck = const_int(size), const_int(kernel)
    extra = stride - 1 if ceil_mode else 0
    if cs is not None and ck is not None:
        span = cs + before + after - dilation * (ck - 1) - 1 + extra
        return const(span // stride + 1, size.dtype if isinstance(size, PrimExpr) else "int32")
    if ck is not None:  # one constant term (no int32 arithmetic cast to a size's int64)
        offset = before + after - dilation * (ck - 1)
        if stride == 1:  # `size + offset`: a symbolic size stays comparable to the input's
            return const(size) if offset == 0 else const(size) + offset
        return (const(size) + (offset - 1 + extra)) // stride + 1
    span = const(size) + (before + after - 1 + extra) - (const(kernel) - 1) * dilation
    return span // stride + 1


def spatial_axes(layout: str) -> tuple[int, int]:
    """Axes of H and W in a 4-letter `layout` or a channel-blocked one ("NCHW16c": 2 and 3).

    Raises:
        ValueError: the layout is neither 4 letters with H and W nor channel-blocked.

    Example:
        >>> spatial_axes("NHWC"), spatial_axes("NCHW16c")
        ((1, 2), (2, 3))
    """
    blocked = blocked_layout(layout)
    base = layout if blocked is None else blocked[0]
    return axis_of(base, "H"), axis_of(base, "W")


def layout_ndim(layout: str) -> int:
    """The rank of a tensor in `layout`: 5 for a channel-blocked layout, else its letters.

    Example:
        >>> layout_ndim("NCHW"), layout_ndim("NCHW8c")
        (4, 5)
    """
    return len(layout) if blocked_layout(layout) is None else 5
