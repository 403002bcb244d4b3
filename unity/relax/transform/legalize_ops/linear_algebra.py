"""Legalize `matmul` (numpy semantics, optional `out_dtype`) and `det` (`topi.linalg.det`).

Example:
    >>> from unity.relax import op
    >>> op.matmul.get_attr("legalize").__name__
    'legalize_matmul'
"""

from __future__ import annotations

from unity import topi
from unity.relax import op
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Call, Expr
from unity.relax.op.base import fail
from unity.relax.transform.legalize_ops.common import attrs_rule, call_te, register_legalize
from unity.topi.linalg import det as det_te

register_legalize(op.matmul, attrs_rule(topi.matmul, lambda a: {"out_dtype": a.out_dtype}))


def legalize_det(bb: BlockBuilder, call: Call) -> Expr:
    """`det(x)` -> `topi.linalg.det`, unrolled over the matrix size (which must be static).

    Example:
        >>> legalize_det(bb, op.det(x))  # doctest: +SKIP
    """
    shape = getattr(call.args[0].struct_info, "shape", None)
    if shape is None or not all(d.is_number for d in shape[-2:]):
        dims = "unknown" if shape is None else f"{shape[-2]} x {shape[-1]}"
        raise fail(call, f"needs a static matrix size, got {dims}")
    return call_te(bb, call, det_te, call.args[0])


register_legalize(op.det, legalize_det)
