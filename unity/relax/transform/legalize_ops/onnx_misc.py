"""Legalize the ops of `relax.op.onnx_misc` to their TOPI kernels.

bitcast, col2im, reverse_sequence, tensor_scatter, max_unpool and max_pool_indices each
call the TOPI function of the same name with the op's attrs as keyword arguments.

Example:
    >>> from unity.relax.op import onnx_misc as M
    >>> M.bitcast.get_attr("legalize").__name__
    'legalize_bitcast'
"""

from __future__ import annotations

import dataclasses
from typing import Any

from unity.relax.expr import Attrs
from unity.relax.op import onnx_misc as M
from unity.relax.transform.legalize_ops.common import attrs_rule, register_legalize
from unity.topi.bitcast import bitcast
from unity.topi.nn.col2im import col2im
from unity.topi.nn.pool_indices import max_pool_indices
from unity.topi.nn.unpool import max_unpool
from unity.topi.sequence import reverse_sequence, tensor_scatter


def _fields(attrs: Attrs) -> dict[str, Any]:
    """The attrs' fields as keyword arguments: each kernel's parameters are named like them."""
    return {f.name: getattr(attrs, f.name) for f in dataclasses.fields(attrs)}


register_legalize(M.bitcast, attrs_rule(bitcast, _fields))
register_legalize(M.col2im, attrs_rule(col2im, _fields))
register_legalize(M.reverse_sequence, attrs_rule(reverse_sequence, _fields))
register_legalize(M.tensor_scatter, attrs_rule(tensor_scatter, _fields))
register_legalize(M.max_unpool, attrs_rule(max_unpool, _fields))
register_legalize(M.max_pool_indices, attrs_rule(max_pool_indices, _fields))
