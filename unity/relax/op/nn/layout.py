"""Spatial shape arithmetic shared by convolution and pooling (sympy dims).

Example:
    >>> import sympy
    >>> conv_out_dim(sympy.Integer(32), 3, 1, 1, 2, 1)
    16
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from unity.relax.struct_info import Dim, simplify_dim


def conv_out_dim(size: Dim, kernel: Dim, pad_before: int, pad_after: int, stride: int,
                 dilation: int, ceil_mode: bool = False) -> Dim:  # fmt: skip
    """``floor((size + pads - dilation*(kernel-1) - 1) / stride) + 1`` (ceil with `ceil_mode`).

    Example:
        >>> conv_out_dim(sympy.Symbol("h", integer=True, positive=True), 1, 0, 0, 1, 1)
        h
    """
    span = size + pad_before + pad_after - dilation * (kernel - 1) - 1
    rounding = sympy.ceiling if ceil_mode else sympy.floor
    return simplify_dim(rounding(span / stride) + 1)


def pair(value: int | Sequence[int], what: str) -> tuple[int, int]:
    """Expand an int to a pair, or check a sequence has two ints.

    Example:
        >>> pair(2, "strides")
        (2, 2)
    """
    if isinstance(value, int):
        return (value, value)
    out = tuple(int(v) for v in value)
    if len(out) != 2:
        raise ValueError(f"{what} must have 2 values, got {len(out)}")
    return out  # type: ignore[return-value]  # length checked


def padding4(value: int | Sequence[int]) -> tuple[int, int, int, int]:
    """Expand padding to (top, left, bottom, right) from 1, 2 or 4 values.

    Example:
        >>> padding4((1, 2))
        (1, 2, 1, 2)
    """
    if isinstance(value, int):
        return (value,) * 4  # type: ignore[return-value]  # four ints
    vals = tuple(int(v) for v in value)
    if len(vals) == 1:
        return vals * 4  # type: ignore[return-value]  # four ints
    if len(vals) == 2:
        return (vals[0], vals[1], vals[0], vals[1])
    if len(vals) == 4:
        return vals  # type: ignore[return-value]  # four ints
    raise ValueError(f"padding must have 1, 2 or 4 values, got {len(vals)}")


def axis_of(layout: str, letter: str) -> int:
    """Position of dimension `letter` in `layout` ("NCHW", "NHWC", "OIHW"...).

    Example:
        >>> axis_of("NHWC", "C")
        3
    """
    pos = layout.find(letter)
    if pos < 0 or len(layout) != 4:
        raise ValueError(f"layout {layout!r} has no axis {letter!r}")
    return pos
