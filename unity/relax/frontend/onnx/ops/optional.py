"""Optional ONNX ops, resolved at import time: an optional holding a value is the value,
an empty one `EmptyOptional`.

An optional graph input is taken to hold its tensor (a run-time `None` for it is the
VM's clear input error); `OptionalHasElement` is then a constant.

Example:
    >>> sorted(CONVERTERS)
    ['Optional', 'OptionalGetElement', 'OptionalHasElement']
"""

from __future__ import annotations

import numpy as np

from unity.relax.frontend.onnx.context import Context, EmptyOptional, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter


def _optional(ctx: Context, node: NodeView) -> Value:
    value = node.input(0)
    if value is not None:
        return value
    kind = node.attr("type")
    return EmptyOptional("sequence" if kind is not None and kind.HasField("sequence_type") else "tensor")


def _has_element(ctx: Context, node: NodeView) -> Value:
    value = node.input(0)
    return np.array(value is not None and not isinstance(value, EmptyOptional))


def _get_element(ctx: Context, node: NodeView) -> Value:
    value = node.input(0)
    if value is None or isinstance(value, EmptyOptional):
        raise ctx.fail("reads an empty optional")
    return value


CONVERTERS: dict[str, Converter] = {
    "Optional": _optional, "OptionalHasElement": _has_element, "OptionalGetElement": _get_element,
}  # fmt: skip
