"""Legalize reductions (sum, mean, max, min, prod, variance, argmax, argmin) and cumsum.

Example:
    >>> from unity.relax import op
    >>> op.variance.get_attr("legalize").__name__
    'legalize_variance'
"""

from __future__ import annotations

from unity import topi
from unity.relax import op
from unity.relax.transform.legalize_ops.common import attrs_rule, register_legalize

for _name in ("sum", "mean", "max", "min", "prod", "variance", "argmax", "argmin"):
    register_legalize(
        getattr(op, _name),
        attrs_rule(getattr(topi, _name), lambda a: {"axis": a.axis, "keepdims": a.keepdims}),
    )

register_legalize(op.cumsum, attrs_rule(topi.cumsum, lambda a: {"axis": a.axis, "dtype": a.dtype}))
