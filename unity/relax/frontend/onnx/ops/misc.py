"""ONNX ops added late, each a relax op of `relax.op.onnx_misc`.

BitCast, Col2Im, ReverseSequence, TensorScatter, MaxUnpool; and MaxPool's `Indices` output
(`pool_indices`, called by the pooling converter).

Example:
    >>> sorted(CONVERTERS)[:1]
    ['BitCast']
"""

from __future__ import annotations

from unity.relax.expr import Expr
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter
from unity.relax.op import onnx_misc as M
from unity.topi.bitcast import can_bitcast


def _positive(ctx: Context, name: str, values: list[int], rank: int,
              low: int = 1) -> tuple[int, ...]:  # fmt: skip
    """`values` checked to hold `rank` ints, each at least `low` (a clear error otherwise)."""
    if len(values) != rank:
        raise ctx.fail(f"expects {rank} {name}, got {len(values)}: {values}")
    if any(v < low for v in values):
        raise ctx.fail(f"expects {name} of at least {low}, got {values}")
    return tuple(values)


def _col2im(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    image = ctx.ints(node.input(1), "image_shape")
    rank = len(image)
    image_t = _positive(ctx, "image_shape dims", image, rank)
    block = _positive(ctx, "block_shape dims", ctx.ints(node.input(2), "block_shape"), rank)
    dilations = _positive(ctx, "dilations", list(node.attr("dilations", [1] * rank)), rank)
    strides = _positive(ctx, "strides", list(node.attr("strides", [1] * rank)), rank)
    pads = _positive(ctx, "pads", list(node.attr("pads", [0] * (2 * rank))), 2 * rank, 0)
    return ctx.emit(M.col2im(x, M.Col2ImAttrs(image_t, block, dilations, pads, strides)))


def _reverse_sequence(ctx: Context, node: NodeView) -> Value:
    x, lengths = ctx.expr(node.input(0)), ctx.expr(node.input(1))
    batch, time = ctx.normalize_axes(
        [node.attr("batch_axis", 1), node.attr("time_axis", 0)], ctx.ndim(x)
    )
    if batch == time or max(batch, time) > 1:
        raise ctx.fail(f"expects batch_axis and time_axis to be 0 and 1, got {batch} and {time}")
    return ctx.emit(M.reverse_sequence(x, lengths, batch, time))


def _tensor_scatter(ctx: Context, node: NodeView) -> Value:
    past, update = ctx.expr(node.input(0)), ctx.expr(node.input(1))
    mode = node.attr("mode", "linear")
    if mode not in ("linear", "circular"):
        raise ctx.fail(f"has no mode {mode!r} (linear or circular)")
    (axis,) = ctx.normalize_axes([node.attr("axis", -2)], ctx.ndim(past))
    if axis == 0:
        raise ctx.fail("expects the sequence axis after the batch axis, got axis 0")
    indices = node.input(2)
    write = None if indices is None else ctx.expr(indices)
    return ctx.emit(M.tensor_scatter(past, update, write, axis, mode == "circular"))


def _max_unpool(ctx: Context, node: NodeView) -> Value:
    x, indices = ctx.expr(node.input(0)), ctx.expr(node.input(1))
    if "kernel_shape" not in node.attrs:
        raise ctx.fail("misses its kernel_shape attribute")
    kernel = list(node.attr("kernel_shape"))
    rank = len(kernel)
    if ctx.ndim(x) != rank + 2:
        raise ctx.fail(
            f"expects a rank-{rank + 2} input for a {rank}-D kernel, got rank {ctx.ndim(x)}"
        )
    attrs = M.MaxUnpoolAttrs(
        _positive(ctx, "kernel_shape dims", kernel, rank),
        _positive(ctx, "strides", list(node.attr("strides", [1] * rank)), rank),
        _positive(ctx, "pads", list(node.attr("pads", [0] * (2 * rank))), 2 * rank, 0),
    )
    shape = node.input(2)
    if shape is not None:
        dims = _positive(ctx, "output_shape dims", ctx.ints(shape, "output_shape"), rank + 2)
        n, c = ctx.shape(x)[:2]
        if (n.is_number and int(n) != dims[0]) or (c.is_number and int(c) != dims[1]):
            raise ctx.fail(f"has output_shape {list(dims)}, but the input starts ({n}, {c})")
        attrs = M.MaxUnpoolAttrs(attrs.kernel, attrs.strides, attrs.pads, dims[2:])
    return ctx.emit(M.max_unpool(x, indices, attrs))


def pool_indices(
    ctx: Context,
    x: Expr,
    pooled: Expr,
    kernel: list[int],
    strides: list[int],
    pads_begin: list[int],
    dilations: list[int],
    storage_order: int,
) -> Expr:
    """MaxPool's `Indices` output: where each window of `pooled` found its maximum in `x`.

    Example:
        >>> pool_indices(ctx, x, y, [2, 2], [2, 2], [0, 0], [1, 1], 0)  # doctest: +SKIP
    """
    output = ctx.shape(pooled)[2:]
    if not all(d.is_number for d in output):
        raise ctx.fail(
            f"needs static output spatial dims for its Indices output, got {list(output)}"
        )
    window = (tuple(kernel), tuple(strides), tuple(pads_begin), tuple(dilations))
    attrs = M.MaxPoolIndicesAttrs(*window, tuple(int(d) for d in output), storage_order)
    return ctx.emit(M.max_pool_indices(x, attrs))


def _bitcast(ctx: Context, node: NodeView) -> Value:
    from unity.relax.frontend.onnx.importer import elem_dtype

    x = ctx.expr(node.input(0))
    if "to" not in node.attrs:
        raise ctx.fail("misses its 'to' attribute")
    dtype = elem_dtype(node.attr("to"), f'BitCast node "{node.name}" target')
    why = can_bitcast(ctx.dtype(x), dtype)
    if why is not None:
        raise ctx.fail(f"cannot reinterpret {ctx.dtype(x)} as {dtype}: {why}")
    if dtype == ctx.dtype(x):
        return x
    return ctx.emit(M.bitcast(x, dtype))


CONVERTERS: dict[str, Converter] = {
    "BitCast": _bitcast, "Col2Im": _col2im, "ReverseSequence": _reverse_sequence,
    "TensorScatter": _tensor_scatter, "MaxUnpool": _max_unpool,
}  # fmt: skip
