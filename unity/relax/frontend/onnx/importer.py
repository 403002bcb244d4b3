"""`from_onnx`: walk an ONNX graph and build a relax `main` with the `BlockBuilder`.

The walk is in three steps, after `validate` has checked the graph (a known opset,
one writer per value, no cycle, attribute types as the schemas say) and put the nodes
in topological order: (1) scan every node and raise one `UnsupportedOpError`
listing all ops without a converter; (2) make the parameters from the graph
inputs (named dynamic axes become shared sympy symbols, unnamed ones fresh
symbols); (3) convert node by node.  A node whose inputs are all known at import
time is folded with onnx's reference implementation (numpy); shape-valued tensors
with symbolic entries are folded by `symbolic.fold_symbolic`; everything else
goes through the op's converter.

Example:
    >>> import onnx
    >>> from onnx import TensorProto, helper
    >>> node = helper.make_node("Relu", ["x"], ["y"])
    >>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    >>> y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    >>> model = helper.make_model(helper.make_graph([node], "g", [x], [y]))
    >>> mod = from_onnx(model)
    >>> mod["main"].ret_struct_info.shape
    (batch, 4)
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from unity.ir.module import IRModule
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Constant, Expr, Tuple, Var
from unity.relax.frontend.onnx.context import Context, EmptyOptional, NodeView, SeqValue, Value, symbol_name
from unity.relax.frontend.onnx.control_flow import CONTROL_FLOW, NeedsBindingBlocks, subgraphs
from unity.relax.frontend.onnx.errors import (
    ConstantInputRequired, OnnxImportError, UnsupportedOpError,
)  # fmt: skip
from unity.relax.frontend.onnx.function_expand import expand, has_function_body, tensor_type
from unity.relax.frontend.onnx.host_node import host_node
from unity.relax.frontend.onnx.ops import CONVERTERS
from unity.relax.frontend.onnx.ops.cast import cast_to
from unity.relax.frontend.onnx.ops.optional import CONVERTERS as OPTIONAL_CONVERTERS
from unity.relax.frontend.onnx.ops.sequence import CONVERTERS as SEQUENCE_CONVERTERS
from unity.relax.frontend.onnx.symbolic import SymTensor, can_fold_symbolic, fold_symbolic
from unity.relax.frontend.onnx.validate import (
    MIN_OPSET, check_attribute_types, check_opset, node_order,
)  # fmt: skip
from unity.relax.struct_info import Dim, TensorStructInfo, sym
from unity.relax.transform.convert_to_dataflow import ConvertToDataflow
from unity.runtime.narrow import WIDE, widened_dtype


_NOT_FOLDED = frozenset({
    "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Bernoulli",
    "Multinomial", "If", "Loop", "Scan", *SEQUENCE_CONVERTERS, *OPTIONAL_CONVERTERS,
})  # fmt: skip
"""Ops never evaluated at import time by the reference (random, with subgraphs, or making
sequences and optionals: their converters resolve them)."""

_FOLD_LIMIT = 1 << 22
"""Folded results larger than this many elements stay run-time ops when a converter exists."""


def from_onnx(
    model: onnx.ModelProto | str,
    shape_dict: Mapping[str, Sequence[int | str]] | None = None,
    dtype_dict: Mapping[str, str] | str | None = None,
    opset: int | None = None,
    keep_params_in_input: bool = False,
    host_nodes: bool = True,
) -> IRModule:
    """Convert an ONNX model to an `IRModule` whose relax function `main` computes it.

    Args:
        model: the model, or the path of an ``.onnx`` file.
        shape_dict: input name -> shape, overriding the model's (ints fix dims, strings
            name symbols).
        dtype_dict: input name -> dtype (or one dtype for every input).
        opset: the default-domain opset to assume (the model's by default).
        keep_params_in_input: make float initializers parameters of `main` after the
            inputs (their values, in order, go to ``mod.attrs["params"]["main"]`` as `Constant`s) instead of
            constants.
        host_nodes: a node whose shape-giving input is run-time data (``Range`` up to a
            length computed from an input's values) is evaluated on the host at run
            time, by onnx's reference implementation (`unity.relax.frontend.onnx.host_node`);
            False raises `ConstantInputRequired` for it instead, naming the graph inputs
            that would have to be constants.

    Returns:
        The module; ``mod["main"].attrs["num_input"]`` counts the true inputs.

    Raises:
        UnsupportedOpError: listing every node whose op has no converter.
        OnnxImportError: for a malformed model or attribute, naming the node; for an opset
            newer than `validate.MAX_OPSET`; for a value written twice or a cycle.

    Example:
        >>> mod = from_onnx(model, shape_dict={"x": (2, 4)})  # doctest: +SKIP
        >>> mod["main"].params[0].struct_info.shape  # doctest: +SKIP
        (2, 4)
    """
    if isinstance(model, str):
        model = onnx.load(model)
    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"from_onnx expects an onnx.ModelProto or a path, got {type(model).__name__}")
    version = opset if opset is not None else _model_opset(model)
    check_opset(version)
    if version < MIN_OPSET:
        warnings.warn(f"opset {version} is older than {MIN_OPSET}; importing with opset {MIN_OPSET} rules",
                      stacklevel=2)  # fmt: skip
    domains = {o.domain or "": int(o.version) for o in model.opset_import}
    domains[""] = max(version, MIN_OPSET)
    order = node_order(model.graph)
    _check_supported(model.graph, domains)
    check_attribute_types(order, domains)
    for dataflow in (True, False):  # without dataflow blocks when an If is decided at run time
        importer = _GraphImporter(model.graph, max(version, MIN_OPSET), shape_dict or {}, dtype_dict,
                                  keep_params_in_input, dataflow, host_nodes)  # fmt: skip
        importer.domains = domains
        importer.order = order
        try:
            mod = importer.run()
        except NeedsBindingBlocks:
            continue
        return mod if dataflow else ConvertToDataflow()(mod)  # dataflow blocks between the Ifs
    raise AssertionError("unreachable: the import without dataflow blocks takes any If")


def _model_opset(model: onnx.ModelProto) -> int:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return MIN_OPSET


def _check_supported(graph: onnx.GraphProto, domains: Mapping[str, int]) -> None:
    missing = [(n.name or f"#{i}", n.op_type, n.domain) for i, n in enumerate(graph.node)
               if not _convertible(n, domains)]  # fmt: skip
    if missing:
        raise UnsupportedOpError(missing)


def _convertible(node: onnx.NodeProto, domains: Mapping[str, int]) -> bool:
    domain = "" if node.domain == "ai.onnx" else node.domain
    if domain == "" and node.op_type in CONVERTERS:
        return True
    if domain == "" and node.op_type in CONTROL_FLOW:
        return all(_convertible(n, domains) for g in subgraphs(node).values() for n in g.node)
    if domain not in domains:
        return False
    return has_function_body(node.op_type, domain, domains[domain])


def elem_dtype(elem_type: int, where: str, narrow: bool = False) -> str:
    """The unity dtype of an ONNX `TensorProto` element type; with `narrow`, a narrow
    type (float8, float4, int4...: held widened, `unity.runtime.narrow`) is its
    ml_dtypes name, else an error.

    Example:
        >>> elem_dtype(onnx.TensorProto.FLOAT, "x"), elem_dtype(onnx.TensorProto.INT4, "x", narrow=True)
        ('float32', 'int4')
    """
    if elem_type == onnx.TensorProto.BFLOAT16:
        return "bfloat16"
    try:
        dtype = str(np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)))
    except (KeyError, TypeError, ValueError):
        dtype = "unknown"
    if dtype not in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                     "uint64", "float16", "float32", "float64") and not (narrow and dtype in WIDE):  # fmt: skip
        name = onnx.TensorProto.DataType.Name(elem_type) if elem_type else "UNDEFINED"
        raise OnnxImportError(f"{where} has element type {name}, which unity does not support")
    return dtype


def _decode_attr(attr: onnx.AttributeProto) -> Any:
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode() for v in value]
    return value


_MOVES_DATA = frozenset({
    "Concat", "DepthToSpace", "Expand", "Flatten", "Gather", "Identity", "Reshape", "Slice",
    "SpaceToDepth", "Split", "Squeeze", "Tile", "Transpose", "Unsqueeze",
})  # fmt: skip
"""Ops whose outputs hold values of their first input: of its narrow type, if it has one."""


class _GraphImporter:
    def __init__(self, graph: onnx.GraphProto, opset: int, shape_dict: Mapping[str, Sequence[int | str]],
                 dtype_dict: Mapping[str, str] | str | None, keep_params: bool,
                 dataflow: bool = True, host_nodes: bool = True) -> None:  # fmt: skip
        self.graph = graph
        self.host_nodes = host_nodes
        self.dataflow = dataflow
        self.opset = opset
        self.shape_dict = shape_dict
        self.dtype_dict = dtype_dict
        self.keep_params = keep_params
        self.bb = BlockBuilder()
        self.ctx = Context(self.bb, opset)
        self.env: dict[str, Value] = {}
        self.domains: dict[str, int] = {"": opset}
        self._names: set[str] = set()
        self._narrow_inputs: dict[str, str] = {}
        self.order = [(n.name or f"{n.op_type}_{i}", n) for i, n in enumerate(graph.node)]

    def run(self) -> IRModule:
        initializers = {t.name: numpy_helper.to_array(t) for t in self.graph.initializer}
        for t in self.graph.sparse_initializer:
            raise OnnxImportError(f"sparse initializer {t.values.name!r} is not supported")
        params = self._make_inputs(initializers)
        num_input = len(params)
        kept: list[np.ndarray] = []
        for name, data in initializers.items():
            if self.keep_params and data.dtype.kind == "f":
                var = Var(self._var_name(name), TensorStructInfo(data.shape, str(data.dtype)))
                params.append(var)
                kept.append(data)
                self.env[name] = var
            else:
                self.env[name] = data
        with self.bb.function("main", params, attrs={"num_input": num_input}):
            if self.dataflow:
                with self.bb.dataflow():
                    self._round_narrow_inputs()
                    for name, node in self.order:
                        self._convert(node, name=name)
                    outputs = [self.bb.emit_output(self._output(o.name)) for o in self.graph.output]
            else:
                self._round_narrow_inputs()
                for name, node in self.order:
                    self._convert(node, name=name)
                outputs = [self._output(o.name) for o in self.graph.output]
            self.bb.emit_func_output(outputs[0] if len(outputs) == 1 else outputs)
        mod = self.bb.get()
        return mod.with_attr("params", {"main": [Constant(k) for k in kept]}) if self.keep_params else mod

    # -- inputs ---------------------------------------------------------------------------
    def _make_inputs(self, initializers: Mapping[str, np.ndarray]) -> list[Var]:
        fixed = self._fixed_symbols()
        params: list[Var] = []
        for value_info in self.graph.input:
            if value_info.name in initializers:
                continue  # opset < 9 models list initializers among the inputs
            sinfo = self._input_sinfo(value_info, fixed)
            var = Var(self._var_name(value_info.name), sinfo)
            self.ctx.graph_inputs[var] = value_info.name
            self.env[value_info.name] = var
            params.append(var)
        return params

    def _round_narrow_inputs(self) -> None:
        """A graph input of a narrow type (float8, int4...) is given in the dtype holding
        it (an ml_dtypes array is widened by the VM): its values are first cast to the
        type (float8: rounded to its grid, as ml_dtypes' casts do; int4: its low bits)."""
        for name, dtype in self._narrow_inputs.items():
            self.env[name] = cast_to(self.ctx, self.env[name], dtype, saturate=False)

    def _fixed_symbols(self) -> dict[str, int]:
        fixed: dict[str, int] = {}
        for value_info in self.graph.input:
            given = self.shape_dict.get(value_info.name)
            dims = value_info.type.tensor_type.shape.dim
            if given is None or len(given) != len(dims):
                continue
            for dim, value in zip(dims, given, strict=True):
                if dim.dim_param and isinstance(value, int):
                    fixed[dim.dim_param] = value
        return fixed

    def _input_sinfo(self, value_info: onnx.ValueInfoProto, fixed: Mapping[str, int]) -> TensorStructInfo:
        name = value_info.name
        vtype = value_info.type
        if vtype.HasField("optional_type"):  # taken to hold its value (None: a clear VM error)
            vtype = vtype.optional_type.elem_type
        if not vtype.HasField("tensor_type"):
            kind = vtype.WhichOneof("value")
            raise OnnxImportError(
                f"graph input {name!r} is a {kind}; only tensors (and optional tensors) are supported"
            )
        ttype = vtype.tensor_type
        dtype = elem_dtype(ttype.elem_type, f"graph input {name!r}", narrow=True)
        if widened_dtype(dtype) != dtype:  # held widened, cast to its type on entry
            self._narrow_inputs[name] = dtype
            dtype = widened_dtype(dtype)
        if isinstance(self.dtype_dict, str) or (self.dtype_dict and name in self.dtype_dict):
            dtype = self.dtype_dict if isinstance(self.dtype_dict, str) else self.dtype_dict[name]
            self._narrow_inputs.pop(name, None)  # the user's dtype, as given
        if name in self.shape_dict:
            return TensorStructInfo(tuple(self.shape_dict[name]), dtype)
        if not ttype.HasField("shape"):
            raise OnnxImportError(f"graph input {name!r} has no shape: give it in shape_dict")
        dims: list[Dim | int] = []
        for axis, dim in enumerate(ttype.shape.dim):
            if dim.HasField("dim_value"):
                dims.append(int(dim.dim_value))
            elif dim.dim_param:
                dims.append(fixed.get(dim.dim_param, sym(symbol_name(dim.dim_param))))
            else:
                dims.append(sym(f"{symbol_name(name)}_dim{axis}"))
        return TensorStructInfo(tuple(dims), dtype)

    def _var_name(self, name: str) -> str:
        base = re.sub(r"\W", "_", name) or "v"
        if base[0].isdigit():
            base = "v" + base
        out, count = base, 1
        while out in self._names:
            out, count = f"{base}_{count}", count + 1
        self._names.add(out)
        return out

    # -- nodes ----------------------------------------------------------------------------
    def _convert(self, proto: onnx.NodeProto, index: int | str = "", opset: int | None = None,
                 name: str | None = None) -> None:  # fmt: skip
        opset = self.opset if opset is None else opset
        name = name or proto.name or f"{proto.op_type}_{index}"
        inputs = [self._lookup(n, proto, name) if n else None for n in proto.input]
        attrs = {a.name: _decode_attr(a) for a in proto.attribute}
        node = NodeView(name, proto.op_type, inputs, attrs, opset, len(proto.output), list(proto.input))
        self.ctx.node = node
        outputs = self._fold(proto, node)
        runtime = proto.op_type in CONVERTERS or proto.op_type in CONTROL_FLOW
        if outputs is None and (proto.domain not in ("", "ai.onnx") or not runtime):
            self._expand(proto, node, opset)
            return
        if outputs is None:
            try:
                result = (CONTROL_FLOW[proto.op_type](self, proto, node) if proto.op_type in CONTROL_FLOW
                          else CONVERTERS[proto.op_type](self.ctx, node))  # fmt: skip
            except ConstantInputRequired as err:  # run-time data: the host evaluates it
                hostable = self.host_nodes and not any(isinstance(v, SeqValue | EmptyOptional) for v in node.inputs)
                result = host_node(self.ctx, proto, node, opset) if hostable else None
                if result is None:
                    raise err from None
            except (OnnxImportError, NeedsBindingBlocks):
                raise
            except Exception as err:  # converters and struct-info inference: name the node
                raise OnnxImportError(f"{type(err).__name__}: {err}", name, proto.op_type) from err
            outputs = list(result) if isinstance(result, list | tuple) else [result]
            if proto.op_type in _MOVES_DATA:  # a narrow type (int4, float8...) stays what it is
                narrow = self.ctx.onnx_dtype(node.input(0)) if isinstance(node.input(0), Expr) else ""
                for value in outputs:
                    if isinstance(value, Expr):
                        self.ctx.hold(value, narrow)
        for out_name, value in zip(proto.output, outputs, strict=False):
            if out_name:
                self.env[out_name] = value

    def _expand(self, proto: onnx.NodeProto, node: NodeView, opset: int) -> None:
        domain = "" if proto.domain == "ai.onnx" else proto.domain
        version = opset if domain == "" else self.domains.get(domain, 1)
        if not has_function_body(proto.op_type, domain, version):
            raise UnsupportedOpError([(node.name, proto.op_type, proto.domain)])

        def type_of(i: int) -> onnx.TypeProto | None:
            value = node.input(i)
            if value is None:
                return None
            sinfo = self.ctx.sinfo(value)
            return tensor_type(self.ctx.onnx_dtype(value), sinfo.shape)

        try:
            body, body_opset = expand(proto, f"{node.name}__", version, type_of)
        except Exception as err:  # schema functions that cannot be built for these inputs
            raise OnnxImportError(f"cannot expand its function body: {err}", node.name, proto.op_type) from err
        for i, inner in enumerate(body):
            self._convert(inner, f"{node.name}_{i}", body_opset if domain == "" else opset)

    def _lookup(self, name: str, proto: onnx.NodeProto, node_name: str) -> Value:
        if name not in self.env:
            msg = f"input {name!r} is produced by no earlier node, initializer or graph input"
            raise OnnxImportError(msg, node_name, proto.op_type)
        return self.env[name]

    def _fold(self, proto: onnx.NodeProto, node: NodeView) -> list[Value] | None:
        present = [v for v in node.inputs if v is not None]
        if proto.op_type in _NOT_FOLDED or any(isinstance(v, Expr | SeqValue | EmptyOptional) for v in present):
            return None
        if any(isinstance(v, SymTensor) for v in present):
            if not can_fold_symbolic(proto.op_type):
                return None
            attrs = dict(node.attrs)
            if proto.op_type == "Cast":
                attrs["_to_dtype"] = elem_dtype(attrs["to"], f"Cast node {node.name!r}")
            return fold_symbolic(proto.op_type, node.inputs, attrs)  # type: ignore[return-value]
        return _fold_reference(proto, node, self.opset)

    def _output(self, name: str) -> Expr:
        if name not in self.env:
            raise OnnxImportError(f"graph output {name!r} is produced by no node")
        value = self.env[name]
        if isinstance(value, SeqValue):  # a sequence output: a tuple of its tensors
            return Tuple([self.ctx.expr(v) for v in value.items])
        return self.ctx.expr(value)


def _fold_reference(proto: onnx.NodeProto, node: NodeView, opset: int) -> list[Value] | None:
    from onnx.reference import ReferenceEvaluator

    feeds = {n: np.asarray(v) for n, v in zip(proto.input, node.inputs, strict=True) if n}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = ReferenceEvaluator(one_node_model(proto, opset)).run(None, feeds)
    except Exception as err:  # the converter reports bad nodes with better messages
        if proto.op_type not in CONVERTERS:
            raise OnnxImportError(f"cannot evaluate at import time: {err}", node.name, proto.op_type) from err
        return None
    arrays = [np.asarray(r) for r in results]
    if any(a.dtype == object for a in arrays):
        return None
    if sum(a.size for a in arrays) > _FOLD_LIMIT and _has_runtime_converter(proto.op_type):
        return None
    return arrays  # type: ignore[return-value]  # numpy arrays are values


def one_node_model(
    proto: onnx.NodeProto,
    opset: int,
    inputs: Sequence[onnx.ValueInfoProto] | None = None,
    initializers: Sequence[onnx.TensorProto] = (),
) -> onnx.ModelProto:
    """`proto` alone in a model of `opset` (its inputs untyped unless `inputs` are given):
    the reference evaluator given a bare node picks the op's newest version (an opset-11
    `Unsqueeze` with its `axes` attribute failed as Unsqueeze-13, so it was never folded).

    Example:
        >>> node = helper.make_node("Relu", ["x"], ["y"])
        >>> [i.name for i in one_node_model(node, 13).graph.input]
        ['x']
    """
    if inputs is None:
        inputs = [onnx.ValueInfoProto(name=n) for n in dict.fromkeys(n for n in proto.input if n)]
    graph = helper.make_graph([proto], "one_node", list(inputs),
                              [onnx.ValueInfoProto(name=o) for o in proto.output if o],
                              list(initializers))  # fmt: skip
    imports = [helper.make_opsetid("", opset)]
    if proto.domain not in ("", "ai.onnx"):
        imports.append(helper.make_opsetid(proto.domain, 1))
    return helper.make_model(graph, opset_imports=imports)


def _has_runtime_converter(op_type: str) -> bool:
    return op_type in CONVERTERS



