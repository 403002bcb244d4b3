"""Converter tables, one module per op family, merged into `CONVERTERS` (ONNX op type -> fn).

Example:
    >>> "Conv" in CONVERTERS and "Relu" in CONVERTERS
    True
"""

from unity.relax.frontend.onnx.ops import (
    activation, cast, conv_pool, detection, dynamic, elementwise, grid_sample, indexing, linalg, misc,
    normalization, optional, quantize, recurrent, reduce, resize, sequence, shape, signal, text,
)  # fmt: skip
from unity.relax.frontend.onnx.ops.common import Converter

_FAMILIES = (
    activation, cast, conv_pool, detection, dynamic, elementwise, grid_sample, indexing, linalg, misc,
    normalization, optional, quantize, recurrent, reduce, resize, sequence, shape, signal, text,
)  # fmt: skip

CONVERTERS: dict[str, Converter] = {}
for _family in _FAMILIES:
    _overlap = CONVERTERS.keys() & _family.CONVERTERS.keys()
    assert not _overlap, f"ops converted by two families: {sorted(_overlap)}"
    CONVERTERS.update(_family.CONVERTERS)

__all__ = ["CONVERTERS", "Converter"]
