"""ONNX frontend: `from_onnx(model)` gives an `IRModule` with a relax `main`.

Example:
    >>> from unity.relax.frontend.onnx import from_onnx
    >>> mod = from_onnx("model.onnx", shape_dict={"x": (1, 3, 224, 224)})  # doctest: +SKIP
"""

from unity.relax.frontend.onnx.errors import (
    ConstantInputRequired, OnnxImportError, UnsupportedOpError,
)  # fmt: skip
from unity.relax.frontend.onnx.importer import from_onnx

__all__ = ["ConstantInputRequired", "OnnxImportError", "UnsupportedOpError", "from_onnx"]
