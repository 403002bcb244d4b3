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
from unity.relax.op.base import fail, product
from unity.relax.transform.legalize_ops.common import call_te, register_legalize
from unity.topi.linalg import det as det_te


def legalize_matmul(bb: BlockBuilder, call: Call) -> Expr:
    """`matmul(a, b)` -> `topi.matmul`.  An image by a matrix, ``(n, h, w, k) x (k, m)``
    (ConvNeXt's and Swin's token-wise linear layers), runs on ``(n, h * w, k)`` rows and
    is reshaped back: the GEMM's row tiles span the image, not one of its rows (tiles of
    2 rows and no packed weights, 2.2x slower on ConvNeXt-T).

    Example:
        >>> legalize_matmul(bb, op.matmul(x, w))  # doctest: +SKIP
    """
    a, b = call.args
    out_dtype = call.attrs.out_dtype  # type: ignore[union-attr]  # MatmulAttrs
    shape, b_shape = a.struct_info.shape, b.struct_info.shape  # type: ignore[attr-defined]
    if len(shape) < 4 or len(b_shape) != 2:
        return call_te(bb, call, topi.matmul, a, b, out_dtype=out_dtype)
    flat = (shape[0], product(shape[1:-1]), shape[-1])
    rows = bb.normalize(bb.call_te(topi.reshape, a, flat, primfunc_name_hint="reshape"))
    out = bb.normalize(call_te(bb, call, topi.matmul, rows, b, out_dtype=out_dtype))
    return bb.call_te(topi.reshape, out, (*shape[:-1], b_shape[1]), primfunc_name_hint="reshape")


register_legalize(op.matmul, legalize_matmul)


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
