"""Matrix ONNX ops: MatMul, Gemm, MatMulInteger, Det, and Einsum.

Example:
    >>> sorted(CONVERTERS)
    ['Det', 'Einsum', 'Gemm', 'MatMul', 'MatMulInteger']
"""

from __future__ import annotations

from unity.relax import op as R
from unity.relax.expr import Expr
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter, binary, cast, const_like


def _gemm(ctx: Context, node: NodeView) -> Value:
    a, b = ctx.expr(node.input(0)), ctx.expr(node.input(1))
    if node.attr("transA", 0):
        a = ctx.emit(R.permute_dims(a, [1, 0]))
    if node.attr("transB", 0):
        b = ctx.emit(R.permute_dims(b, [1, 0]))
    out = ctx.emit(R.matmul(a, b))
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if alpha != 1.0:
        out = ctx.emit(R.multiply(out, const_like(ctx, alpha, out)))
    c = node.input(2)
    if c is None:
        return out
    c_expr = ctx.expr(c)
    if beta != 1.0:
        c_expr = ctx.emit(R.multiply(c_expr, const_like(ctx, beta, c_expr)))
    return ctx.emit(R.add(out, c_expr))


def shifted_int32(ctx: Context, x: Value, zero_point: Value | None) -> Expr:
    """`x - zero_point` in int32 (zero point per tensor, or per row/channel as given).

    Example:
        >>> shifted_int32(ctx, a, a_zero)  # doctest: +SKIP
    """
    wide = cast(ctx, ctx.expr(x), "int32")
    if zero_point is None:
        return wide
    return ctx.emit(R.subtract(wide, cast(ctx, ctx.expr(zero_point), "int32")))


def _matmul_integer(ctx: Context, node: NodeView) -> Value:
    a = shifted_int32(ctx, node.input(0), node.input(2))
    zb = node.input(3)
    b = cast(ctx, ctx.expr(node.input(1)), "int32")
    if zb is not None:
        zb_expr = cast(ctx, ctx.expr(zb), "int32")
        if ctx.ndim(zb_expr) == 1 and ctx.ndim(b) == 2:
            zb_expr = ctx.emit(R.reshape(zb_expr, (1, -1)))
        b = ctx.emit(R.subtract(b, zb_expr))
    if node.input(2) is not None and ctx.ndim(node.input(2)) == 1 and ctx.shape(node.input(2))[0] != 1:
        raise ctx.fail("supports only a per-tensor zero point for input A")
    return ctx.emit(R.matmul(a, b))


def _det(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    shape = ctx.shape(x)
    if len(shape) < 2:
        raise ctx.fail(f"expects matrices (..., M, M), got rank {len(shape)}")
    rows, cols = shape[-2], shape[-1]
    if not (rows.is_number and cols.is_number):
        raise ctx.fail(f"needs a static matrix size, got {rows} x {cols}")
    if rows != cols:
        raise ctx.fail(f"expects square matrices, got {rows} x {cols}")
    return ctx.emit(R.det(x))


def _einsum(ctx: Context, node: NodeView) -> Value:
    from unity.relax.frontend.onnx.ops.einsum import lower_einsum, parse_einsum

    equation = str(node.attr("equation", ""))
    operands = [ctx.expr(v) for v in node.inputs if v is not None]
    try:
        terms, rhs = parse_einsum(equation, [ctx.ndim(x) for x in operands])
    except ValueError as err:
        raise ctx.fail(str(err)) from None
    return lower_einsum(ctx, terms, rhs, operands)


CONVERTERS: dict[str, Converter] = {
    "MatMul": binary(R.matmul), "Gemm": _gemm, "MatMulInteger": _matmul_integer,
    "Einsum": _einsum, "Det": _det,
}  # fmt: skip
