"""Nodes whose shape-giving inputs are run-time data: evaluated on the host at run time.

A converter needs some inputs known at import time: Reshape's shape, Range's limit,
ConstantOfShape's shape, TopK's k...  Constants and values computed from shapes
(`SymTensor`) are; a value computed from the data of a graph input is not (``Range(0,
ReduceMax(lengths))``, a padding mask's length).  Such a node becomes a host call
(``unity.host.onnx_node``, `unity.runtime.host_functions`) that runs the node alone
through onnx's reference implementation (numpy), and a `match_cast` gives each output
dimension that ONNX shape inference does not fix a fresh symbol, so the nodes after it
compile for any size::

    >>> # Range(zero, ReduceMax(lengths), one)
    >>> # lv = R.call_pure_packed("unity.host.onnx_node", maxlen, model,
    >>> #                         sinfo_args=R.Tensor(ndim=1, dtype="int64"))
    >>> # pos = R.match_cast(lv, R.Tensor((Range_1_n0_0,), "int64"))

`model` is the node as a one-node ONNX model (its constant inputs as initializers),
serialized into a uint8 constant, so the compiled program stays one exportable file.
A node whose output ranks shape inference cannot tell, or that the reference
implementation does not know, keeps the converter's error.

Only ops with a converter take this way (standard-domain ops; not control flow, whose
subgraphs see the enclosing graph's values).

Example:
    >>> host_node(ctx, range_proto, node, 17)  # doctest: +SKIP
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
from onnx import helper

from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.function_expand import tensor_type
from unity.relax.frontend.onnx.ops import CONVERTERS
from unity.relax.frontend.onnx.ops.dynamic import OutSpec, host_call


_RANKS = {"Range": 1, "HannWindow": 1, "HammingWindow": 1, "BlackmanWindow": 1}
"""Output ranks ONNX shape inference leaves out when the size is run-time data."""


def host_node(
    ctx: Context, proto: onnx.NodeProto, node: NodeView, opset: int
) -> list[Value | None] | None:
    """`proto` as a host call evaluated at run time: a value per output of `proto` (None
    for an unnamed one); None when it cannot be one (unknown output ranks or dtypes, an
    op the reference implementation lacks).

    Example:
        >>> outs = host_node(ctx, range_proto, node, 17)  # doctest: +SKIP
    """
    if proto.op_type not in CONVERTERS or proto.domain not in ("", "ai.onnx"):
        return None
    from unity.relax.frontend.onnx.importer import one_node_model

    given = [(name, value) for name, value in zip(proto.input, node.inputs, strict=True) if name]
    known = {name: np.asarray(v) for name, v in given if isinstance(v, np.ndarray | np.generic)}
    runtime = [(name, ctx.expr(v)) for name, v in given if name not in known]  # once (SymTensors)
    infos = [(name, ctx.sinfo(e)) for name, e in runtime]
    inputs = [helper.make_value_info(name, tensor_type(i.dtype, i.shape)) for name, i in infos]
    inits = [onnx.numpy_helper.from_array(array, name) for name, array in known.items()]
    model = one_node_model(proto, opset, inputs, inits)
    outs = _output_specs(model, proto)
    if outs is None or not _evaluable(model):
        return None
    blob = np.frombuffer(model.SerializeToString(), np.uint8)
    args: list[Value] = [e for _, e in runtime] + [blob]
    results = iter(host_call(ctx, "onnx_node", args, outs))
    return [next(results) if name else None for name in proto.output]  # aligned with the outputs


def _output_specs(model: onnx.ModelProto, proto: onnx.NodeProto) -> list[OutSpec] | None:
    """Each output's dtype and dims (None where only the run time knows) from ONNX shape
    inference; None when it cannot tell an output's dtype or rank."""
    from unity.relax.frontend.onnx.importer import elem_dtype
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception:  # noqa: BLE001 - inference errors mean: no host form
        return None
    types = {v.name: v.type for v in (*inferred.graph.value_info, *inferred.graph.output)}
    specs: list[OutSpec] = []
    for name in proto.output:
        if not name:
            continue
        ttype = types.get(name)
        if ttype is None or not ttype.HasField("tensor_type"):
            return None
        if not ttype.tensor_type.HasField("shape"):
            if len(specs) or proto.op_type not in _RANKS:
                return None
            unknown = [onnx.TensorShapeProto.Dimension()] * _RANKS[proto.op_type]
            ttype.tensor_type.shape.dim.extend(unknown)
        try:
            dtype = elem_dtype(ttype.tensor_type.elem_type, f"output {name!r}")
        except Exception:  # noqa: BLE001 - an element type we do not support
            return None
        shape = ttype.tensor_type.shape.dim
        dims = [int(d.dim_value) if d.HasField("dim_value") else None for d in shape]
        specs.append((dtype, dims))
    return specs


def _evaluable(model: onnx.ModelProto) -> bool:
    from onnx.reference import ReferenceEvaluator

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ReferenceEvaluator(model)
    except Exception:  # noqa: BLE001 - an op the reference implementation lacks
        return False
    return True
