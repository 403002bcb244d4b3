"""Frontends: import models from other formats into relax (`frontend.onnx.from_onnx`).

Example:
    >>> from unity.relax.frontend import onnx
    >>> callable(onnx.from_onnx)
    True
"""

from unity.relax.frontend import onnx

__all__ = ["onnx"]
