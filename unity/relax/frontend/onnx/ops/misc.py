"""ONNX ops added late, each a relax op of `relax.op.onnx_misc`: BitCast.

Example:
    >>> sorted(CONVERTERS)[:1]
    ['BitCast']
"""

from __future__ import annotations

from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter
from unity.relax.op import onnx_misc as M
from unity.topi.bitcast import can_bitcast


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
    "BitCast": _bitcast,
}  # fmt: skip
