"""Elementwise ONNX ops: math, comparisons, logic, bitwise, Clip and Where (casts: `ops.cast`).

Example:
    >>> sorted(CONVERTERS)[:3]
    ['Abs', 'Acos', 'Acosh']
"""

from __future__ import annotations

from collections.abc import Callable

from unity.relax import op as R
from unity.relax.expr import Expr
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter, binary, cast, const_like, unary
from unity.relax.op import onnx_extra as X


def _mod(ctx: Context, node: NodeView) -> Value:
    a, b = ctx.expr(node.input(0)), ctx.expr(node.input(1))
    return ctx.emit((R.mod if node.attr("fmod", 0) else R.floor_mod)(a, b))


def _pow(ctx: Context, node: NodeView) -> Value:
    x, y = ctx.expr(node.input(0)), ctx.expr(node.input(1))
    return ctx.emit(R.power(x, cast(ctx, y, ctx.dtype(x))))


def _variadic(make: Callable[[Expr, Expr], Expr]) -> Converter:
    def convert(ctx: Context, node: NodeView) -> Value:
        args = [ctx.expr(v) for v in node.inputs if v is not None]
        out = args[0]
        for other in args[1:]:
            out = ctx.emit(make(out, other))
        return out

    return convert


def _mean(ctx: Context, node: NodeView) -> Value:
    total = _variadic(R.add)(ctx, node)
    count = sum(1 for v in node.inputs if v is not None)
    return ctx.emit(R.divide(ctx.expr(total), const_like(ctx, count, total)))  # type: ignore[arg-type]


def _clip(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    if node.opset < 11:
        lo, hi = node.attr("min"), node.attr("max")
        lo = float("-inf") if lo is None else lo
        hi = float("inf") if hi is None else hi
        return ctx.emit(R.clip(x, lo, hi))
    out = x
    lo, hi = node.input(1), node.input(2)
    if lo is not None:
        out = ctx.emit(R.maximum(out, ctx.expr(lo)))
    if hi is not None:
        out = ctx.emit(R.minimum(out, ctx.expr(hi)))
    return out


def _identity(ctx: Context, node: NodeView) -> Value:
    value = node.input(0)
    if value is None:
        raise ctx.fail("misses its input")
    return value


def _is_inf(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    pos, neg = node.attr("detect_positive", 1), node.attr("detect_negative", 1)
    inf = ctx.emit(R.isinf(x))
    if pos and neg:
        return inf
    if not pos and not neg:
        return ctx.emit(R.logical_and(inf, ctx.emit(R.not_equal(x, x))))  # always false
    side = R.greater if pos else R.less
    return ctx.emit(R.logical_and(inf, ctx.emit(side(x, const_like(ctx, 0, x)))))


def _reciprocal(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    return ctx.emit(R.divide(const_like(ctx, 1, x), x))


def _sinh_cosh(sign: float) -> Converter:
    def convert(ctx: Context, node: NodeView) -> Value:
        x = ctx.expr(node.input(0))
        e_pos, e_neg = ctx.emit(R.exp(x)), ctx.emit(R.exp(ctx.emit(R.negative(x))))
        combined = ctx.emit(R.add(e_pos, e_neg) if sign > 0 else R.subtract(e_pos, e_neg))
        return ctx.emit(R.multiply(combined, const_like(ctx, 0.5, x)))

    return convert


def _asinh_acosh(sign: float) -> Converter:
    def convert(ctx: Context, node: NodeView) -> Value:
        x = ctx.expr(node.input(0))
        inner = ctx.emit(R.add(ctx.emit(R.square(x)), const_like(ctx, sign, x)))
        return ctx.emit(R.log(ctx.emit(R.add(x, ctx.emit(R.sqrt(inner))))))

    return convert


def _atanh(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    one = const_like(ctx, 1, x)
    ratio = ctx.emit(R.divide(ctx.emit(R.add(one, x)), ctx.emit(R.subtract(one, x))))
    return ctx.emit(R.multiply(ctx.emit(R.log(ratio)), const_like(ctx, 0.5, x)))


def _bit_shift(ctx: Context, node: NodeView) -> Value:
    direction = node.attr("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise ctx.fail(f"expects direction LEFT or RIGHT, got {direction!r}")
    make = X.left_shift if direction == "LEFT" else X.right_shift
    return ctx.emit(make(ctx.expr(node.input(0)), ctx.expr(node.input(1))))


def _where(ctx: Context, node: NodeView) -> Value:
    cond, x, y = (ctx.expr(node.input(i)) for i in range(3))
    return ctx.emit(R.where(cond, x, y))


CONVERTERS: dict[str, Converter] = {
    "Abs": unary(R.abs), "Neg": unary(R.negative), "Sign": unary(R.sign),
    "Floor": unary(R.floor), "Ceil": unary(R.ceil), "Round": unary(R.round),
    "Exp": unary(R.exp), "Log": unary(R.log), "Sqrt": unary(R.sqrt),
    "Sin": unary(R.sin), "Cos": unary(R.cos), "Tan": unary(R.tan), "Tanh": unary(R.tanh),
    "Sigmoid": unary(R.sigmoid), "Erf": unary(R.erf),
    "Asin": unary(X.asin), "Acos": unary(X.acos), "Atan": unary(X.atan),
    "Sinh": _sinh_cosh(-1), "Cosh": _sinh_cosh(1),
    "Asinh": _asinh_acosh(1), "Acosh": _asinh_acosh(-1), "Atanh": _atanh,
    "Reciprocal": _reciprocal, "IsNaN": unary(R.isnan), "IsInf": _is_inf,
    "Not": unary(R.logical_not), "BitwiseNot": unary(R.bitwise_not),
    "Add": binary(R.add), "Sub": binary(R.subtract), "Mul": binary(R.multiply),
    "Div": binary(R.divide), "Mod": _mod, "Pow": _pow,
    "Equal": binary(R.equal), "Greater": binary(R.greater), "Less": binary(R.less),
    "GreaterOrEqual": binary(R.greater_equal), "LessOrEqual": binary(R.less_equal),
    "And": binary(R.logical_and), "Or": binary(R.logical_or), "Xor": binary(R.not_equal),
    "BitwiseAnd": binary(R.bitwise_and), "BitwiseOr": binary(R.bitwise_or),
    "BitwiseXor": binary(X.bitwise_xor), "BitShift": _bit_shift,
    "Max": _variadic(R.maximum), "Min": _variadic(R.minimum), "Sum": _variadic(R.add),
    "Mean": _mean, "Clip": _clip, "Where": _where,
    "Identity": _identity,
}  # fmt: skip
