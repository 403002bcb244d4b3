"""Legalization rules, one file per op family; importing this package registers them all
(each sets the `legalize` attribute of its ops).

Example:
    >>> from unity.relax import op
    >>> import unity.relax.transform.legalize_ops  # noqa: F401
    >>> op.nn.softmax.get_attr("legalize") is not None
    True
"""

from unity.relax.transform.legalize_ops import (  # noqa: F401 - registration side effects
    create, detection, elementwise, linear_algebra, manipulate, nn, onnx_extra, onnx_misc, signal,
    statistical,
)  # fmt: skip
from unity.relax.transform.legalize_ops.common import LegalizeFn, register_legalize

__all__ = ["LegalizeFn", "register_legalize"]
