"""Legalize the ops of `relax.op.onnx_misc` to their TOPI kernels: bitcast.

Example:
    >>> from unity.relax.op import onnx_misc as M
    >>> M.bitcast.get_attr("legalize").__name__
    'legalize_bitcast'
"""

from __future__ import annotations

from unity.relax.op import onnx_misc as M
from unity.relax.transform.legalize_ops.common import attrs_rule, register_legalize
from unity.topi.bitcast import bitcast

register_legalize(M.bitcast, attrs_rule(bitcast, lambda a: {"dtype": a.dtype}))
