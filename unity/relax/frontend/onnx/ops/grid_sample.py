"""GridSample: attributes checked and spelled the opset-20 way, then one `grid_sample` op.

Opset 16 names the modes "bilinear" / "bicubic"; opset 20 renamed them "linear" /
"cubic" and allowed any number of spatial axes.

Example:
    >>> sorted(CONVERTERS)
    ['GridSample']
"""

from __future__ import annotations

from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter
from unity.relax.op import onnx_extra as X

_MODES_16 = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}
_MODES_20 = {"linear": "linear", "nearest": "nearest", "cubic": "cubic"}
_PADDING_MODES = ("zeros", "border", "reflection")


def _grid_sample(ctx: Context, node: NodeView) -> Value:
    x, grid = ctx.expr(node.input(0)), ctx.expr(node.input(1))
    attrs = X.GridSampleAttrs(_mode(ctx, node), _padding_mode(ctx, node), _align_corners(ctx, node))
    _check_shapes(ctx, x, grid)
    return ctx.emit(X.grid_sample(x, grid, attrs))


def _mode(ctx: Context, node: NodeView) -> str:
    modes = _MODES_16 if node.opset < 20 else _MODES_20
    default = "bilinear" if node.opset < 20 else "linear"
    mode = node.attr("mode", default)
    if mode not in modes:
        raise ctx.fail(f"has mode {mode!r}; opset {node.opset} allows {', '.join(modes)}")
    return modes[mode]


def _padding_mode(ctx: Context, node: NodeView) -> str:
    padding_mode = node.attr("padding_mode", "zeros")
    if padding_mode not in _PADDING_MODES:
        raise ctx.fail(f"has padding_mode {padding_mode!r}; allowed: {', '.join(_PADDING_MODES)}")
    return padding_mode


def _align_corners(ctx: Context, node: NodeView) -> bool:
    align_corners = node.attr("align_corners", 0)
    if align_corners not in (0, 1):
        raise ctx.fail(f"has align_corners={align_corners}; expected 0 or 1")
    return bool(align_corners)


def _check_shapes(ctx: Context, x: Value, grid: Value) -> None:
    for value, what in ((x, "X"), (grid, "grid")):
        dtype = ctx.dtype(value)
        if not dtype.startswith(("float", "bfloat")):
            raise ctx.fail(f"expects a float {what}, got {dtype}")
    rank, grid_rank = ctx.ndim(x), ctx.ndim(grid)
    if rank < 3:
        raise ctx.fail(f"expects X of shape (N, C, D1, ..., Dr), got rank {rank}")
    if grid_rank != rank:
        raise ctx.fail(f"expects a rank-{rank} grid (N, D1_out, ..., Dr_out, {rank - 2}) for a "
                       f"rank-{rank} X, got rank {grid_rank}")  # fmt: skip
    x_shape, grid_shape = ctx.shape(x), ctx.shape(grid)
    last = grid_shape[-1]
    if last.is_number and int(last) != rank - 2:
        raise ctx.fail(f"expects a grid whose last dim is the number of spatial axes of X "
                       f"({rank - 2}), got grid shape {_dims(grid_shape)}")  # fmt: skip
    n, grid_n = x_shape[0], grid_shape[0]
    if n.is_number and grid_n.is_number and int(n) != int(grid_n):
        raise ctx.fail(f"expects X and grid of one batch size, got {n} and {grid_n}")


def _dims(shape: tuple[object, ...]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


CONVERTERS: dict[str, Converter] = {"GridSample": _grid_sample}
