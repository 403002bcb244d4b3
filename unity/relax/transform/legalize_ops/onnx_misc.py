"""Legalize the ops of `relax.op.onnx_misc` to their TOPI kernels: bitcast, col2im,
reverse_sequence, tensor_scatter, max_unpool, max_pool_indices.

Example:
    >>> from unity.relax.op import onnx_misc as M
    >>> M.bitcast.get_attr("legalize").__name__
    'legalize_bitcast'
"""

from __future__ import annotations

from unity.relax.op import onnx_misc as M
from unity.relax.transform.legalize_ops.common import attrs_rule, register_legalize
from unity.topi.bitcast import bitcast
from unity.topi.nn.col2im import col2im
from unity.topi.nn.pool_indices import max_pool_indices
from unity.topi.nn.unpool import max_unpool
from unity.topi.sequence import reverse_sequence, tensor_scatter

register_legalize(M.bitcast, attrs_rule(bitcast, lambda a: {"dtype": a.dtype}))
register_legalize(M.col2im, attrs_rule(col2im, lambda a: {
    "image": a.image, "block": a.block, "dilations": a.dilations, "pads": a.pads, "strides": a.strides}))
register_legalize(M.reverse_sequence, attrs_rule(
    reverse_sequence, lambda a: {"batch_axis": a.batch_axis, "time_axis": a.time_axis}))
register_legalize(M.tensor_scatter, attrs_rule(
    tensor_scatter, lambda a: {"axis": a.axis, "circular": a.circular}))
register_legalize(M.max_unpool, attrs_rule(max_unpool, lambda a: {
    "kernel": a.kernel, "strides": a.strides, "pads": a.pads, "output": a.output or None}))
register_legalize(M.max_pool_indices, attrs_rule(max_pool_indices, lambda a: {
    "kernel": a.kernel, "strides": a.strides, "pads_begin": a.pads_begin, "dilations": a.dilations,
    "output": a.output, "storage_order": a.storage_order}))
