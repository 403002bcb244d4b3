"""Expand ONNX ops defined by a function body (Attention, losses, windows...) into their nodes.

The ONNX spec defines many ops as functions of simpler ops (`OpSchema` function
bodies, some of them depending on the node's attributes and input types).  An op
without a converter but with such a body is replaced by the body's nodes, with
internal tensor names prefixed by the node's name and attribute references
resolved from the node (or the schema's defaults).

Example:
    >>> has_function_body("Attention", "", 23)
    True
    >>> has_function_body("Conv", "", 17)
    False
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import onnx
from onnx import defs, helper

TypeFor = Callable[[int], onnx.TypeProto | None]
"""The type of a node's input `i` (None when unknown or omitted)."""


def _schema(op_type: str, domain: str, opset: int) -> defs.OpSchema | None:
    try:
        return defs.get_schema(op_type, opset, domain=domain)
    except Exception:  # noqa: BLE001 - onnx raises SchemaError (not importable) for unknown ops
        return None


def has_function_body(op_type: str, domain: str, opset: int) -> bool:
    """Whether the spec defines `op_type` at `opset` as a function of other ops.

    Example:
        >>> has_function_body("Range", "", 11)
        True
    """
    schema = _schema(op_type, domain, opset)
    if schema is None:
        return False
    versions = [v for v in schema.function_opset_versions if v <= opset]
    dependent = [v for v in schema.context_dependent_function_opset_versions if v <= opset]
    return bool(versions or dependent)


def _function(node: onnx.NodeProto, opset: int, input_types: Sequence[onnx.TypeProto]) -> onnx.FunctionProto:
    schema = _schema(node.op_type, node.domain, opset)
    assert schema is not None
    proto = onnx.FunctionProto()
    plain = [v for v in schema.function_opset_versions if v <= opset]
    dependent = [v for v in schema.context_dependent_function_opset_versions if v <= opset]
    if dependent and (not plain or max(dependent) >= max(plain)):
        text = schema.get_context_dependent_function_with_opset_version(
            max(dependent), node.SerializeToString(), [t.SerializeToString() for t in input_types])
    else:
        text = schema.get_function_with_opset_version(max(plain))
    proto.ParseFromString(text)
    return proto


def expand(node: onnx.NodeProto, prefix: str, opset: int, type_of: TypeFor) -> tuple[list[onnx.NodeProto], int]:
    """The body nodes replacing `node`, and the default-domain opset they are written in.

    Example:
        >>> nodes, version = expand(node, "attn_", 23, type_of)  # doctest: +SKIP
    """
    types = [type_of(i) or onnx.TypeProto() for i in range(len(node.input))]
    func = _function(node, opset, types)
    schema = _schema(node.op_type, node.domain, opset)
    assert schema is not None
    attrs = {a.name: a for a in node.attribute}
    for name, spec in schema.attributes.items():
        if name not in attrs and spec.default_value.type != onnx.AttributeProto.UNDEFINED:
            attrs[name] = spec.default_value
    names: dict[str, str] = {}
    for i, name in enumerate(func.input):
        names[name] = node.input[i] if i < len(node.input) else ""
    for i, name in enumerate(func.output):
        if i < len(node.output) and node.output[i]:
            names[name] = node.output[i]

    def rename(name: str) -> str:
        if not name:
            return ""
        return names.get(name, prefix + name)

    body = [_rewrite(n, rename, attrs) for n in func.node]
    version = next((o.version for o in func.opset_import if o.domain in ("", "ai.onnx")), opset)
    return body, int(version)


def _rewrite(node: onnx.NodeProto, rename: Callable[[str], str],
             attrs: dict[str, onnx.AttributeProto]) -> onnx.NodeProto:  # fmt: skip
    out = onnx.NodeProto()
    out.CopyFrom(node)
    del out.input[:]
    del out.output[:]
    out.input.extend(rename(n) for n in node.input)
    out.output.extend(rename(n) for n in node.output)
    del out.attribute[:]
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.GRAPH and not attr.ref_attr_name:
            sub = onnx.AttributeProto()
            sub.CopyFrom(attr)
            _rewrite_graph(sub.g, rename, attrs)  # an If branch: its names (and the outer ones it reads) too
            out.attribute.append(sub)
            continue
        if not attr.ref_attr_name:
            out.attribute.append(attr)
            continue
        source = attrs.get(attr.ref_attr_name)
        if source is None:
            continue
        resolved = onnx.AttributeProto()
        resolved.CopyFrom(source)
        resolved.name = attr.name
        out.attribute.append(resolved)
    if not out.name:
        out.name = rename(node.op_type)
    return out


def _rewrite_graph(graph: onnx.GraphProto, rename: Callable[[str], str],
                   attrs: dict[str, onnx.AttributeProto]) -> None:  # fmt: skip
    """Rename a subgraph of a body node in place, as `_rewrite` renames the body's nodes."""
    nodes = [_rewrite(n, rename, attrs) for n in graph.node]
    del graph.node[:]
    graph.node.extend(nodes)
    for values in (graph.input, graph.output, graph.value_info):
        for v in values:
            v.name = rename(v.name)
    for t in graph.initializer:
        t.name = rename(t.name)


def _dim(d: object) -> int | str:
    if isinstance(d, str):
        return d
    return int(d) if getattr(d, "is_number", True) else str(d)  # type: ignore[call-overload]


def tensor_type(dtype: str, shape: Sequence[object] | None) -> onnx.TypeProto:
    """An ONNX tensor `TypeProto` (symbolic dims become dim_params).

    Example:
        >>> tensor_type("float32", [2, "n"]).tensor_type.elem_type
        1
    """
    import ml_dtypes  # noqa: F401 - numpy then knows narrow types by name (int4, float8_e4m3fn)
    import numpy as np

    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype)) if dtype not in ("void", "bfloat16") else (
        onnx.TensorProto.BFLOAT16 if dtype == "bfloat16" else onnx.TensorProto.UNDEFINED)  # fmt: skip
    dims = None if shape is None else [_dim(d) for d in shape]
    return helper.make_tensor_type_proto(elem, dims)
