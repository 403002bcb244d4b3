"""Helpers shared by the converter tables: converter factories and small emit patterns.

A converter is ``fn(ctx, node) -> value | list[value]``; each family module ends
with a table ``CONVERTERS = {"OnnxOp": fn, ...}``.

Example:
    >>> from unity.relax import op as R
    >>> relu = unary(R.nn.relu)
    >>> callable(relu)
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from unity.relax import op as R
from unity.relax.expr import Expr
from unity.relax.frontend.onnx.context import Context, NodeView, Value

Converter = Callable[[Context, NodeView], Value | Sequence[Value]]
"""Converts one node: returns its output values in order."""


def unary(make: Callable[[Expr], Expr]) -> Converter:
    """A converter applying the relax op `make` to input 0.

    Example:
        >>> unary(R.exp)  # doctest: +ELLIPSIS
        <function unary.<locals>.convert at ...>
    """

    def convert(ctx: Context, node: NodeView) -> Value:
        return ctx.emit(make(ctx.expr(node.input(0))))

    return convert


def binary(make: Callable[[Expr, Expr], Expr]) -> Converter:
    """A converter applying the broadcasting relax op `make` to inputs 0 and 1.

    Example:
        >>> binary(R.add)  # doctest: +ELLIPSIS
        <function binary.<locals>.convert at ...>
    """

    def convert(ctx: Context, node: NodeView) -> Value:
        return ctx.emit(make(ctx.expr(node.input(0)), ctx.expr(node.input(1))))

    return convert


def const_like(ctx: Context, number: float, like: Value) -> Expr:
    """A 0-d constant of `like`'s dtype.

    Example:
        >>> const_like(ctx, 1.0, x)  # doctest: +SKIP
    """
    return ctx.scalar(number, ctx.dtype(like))


def cast(ctx: Context, x: Expr, dtype: str) -> Expr:
    """`x` cast to `dtype` (no op when it already has it).

    Example:
        >>> cast(ctx, x, "float32")  # doctest: +SKIP
    """
    if ctx.dtype(x) == dtype:
        return x
    return ctx.emit(R.astype(x, dtype))


def axes_input(ctx: Context, node: NodeView, index: int, attr: str = "axes") -> list[int] | None:
    """Axes given as attribute `attr` (old opsets) or as input `index` (new ones); None if neither.

    Example:
        >>> axes_input(ctx, node, 1)  # doctest: +SKIP
        [0, 2]
    """
    if attr in node.attrs:
        return [int(a) for a in node.attrs[attr]]
    value = node.input(index)
    if value is None:
        return None
    return ctx.ints(value, attr)
