"""Legalize `matmul` (numpy semantics, optional `out_dtype`).

Example:
    >>> from unity.relax import op
    >>> op.matmul.get_attr("legalize").__name__
    'legalize_matmul'
"""

from __future__ import annotations

from unity import topi
from unity.relax import op
from unity.relax.transform.legalize_ops.common import attrs_rule, register_legalize

register_legalize(op.matmul, attrs_rule(topi.matmul, lambda a: {"out_dtype": a.out_dtype}))
