"""Errors of the ONNX frontend; each names the node and op type it is about.

Example:
    >>> err = OnnxImportError("expects 2 inputs", node_name="mm", op_type="MatMul")
    >>> str(err)
    'MatMul node "mm": expects 2 inputs'
"""

from __future__ import annotations

from collections.abc import Sequence


class OnnxImportError(ValueError):
    """A model the frontend cannot import: the message names the node and its op type.

    Example:
        >>> OnnxImportError("misses a required input", "g1", "Gemm").node_name
        'g1'
    """

    def __init__(self, message: str, node_name: str = "", op_type: str = "") -> None:
        self.node_name = node_name
        self.op_type = op_type
        self.message = message
        where = f'{op_type} node "{node_name}": ' if op_type else ""
        super().__init__(where + message)


class UnsupportedOpError(OnnxImportError):
    """The model uses ops the frontend has no converter for; lists every one of them.

    Example:
        >>> str(UnsupportedOpError([("n1", "Foo", ""), ("n2", "Bar", "com.x")]))
        'unsupported ONNX ops (2): Foo (node "n1"), com.x:Bar (node "n2")'
    """

    def __init__(self, nodes: Sequence[tuple[str, str, str]]) -> None:
        self.nodes = list(nodes)
        parts = [f'{_qualified(op, dom)} (node "{name}")' for name, op, dom in self.nodes]
        super().__init__(f"unsupported ONNX ops ({len(parts)}): {', '.join(parts)}")


class ConstantInputRequired(OnnxImportError):
    """A graph input feeds a slot that must be known at import time (a shape, axes, pads...).

    `input_names` lists the graph inputs that would have to be constants (initializers).

    Example:
        >>> ConstantInputRequired("shape", ["s"], "r", "Reshape").input_names
        ['s']
    """

    def __init__(self, what: str, input_names: Sequence[str], node_name: str, op_type: str) -> None:
        self.input_names = list(input_names)
        named = ", ".join(self.input_names) or "a computed tensor"
        msg = f"input {what} must be known at import time (a constant), but comes from {named}"
        super().__init__(msg, node_name, op_type)


def _qualified(op_type: str, domain: str) -> str:
    return f"{domain}:{op_type}" if domain not in ("", "ai.onnx") else op_type
