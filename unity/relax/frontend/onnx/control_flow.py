"""ONNX control flow: `If` (a branch chosen at import time is inlined; one chosen at run
time is a relax `If` whose branches are the converted subgraphs), and `Loop` / `Scan`
unrolled when their trip count (a Scan's sequence length) is known at import time.

A condition known at import time (a constant, or computed from shapes: exported models
test ``Size(shape) == 4`` to pick a 2-D or 3-D path) inlines the chosen branch's nodes
into the graph, as if they stood in place of the `If`.  A run-time condition needs
relax's `If`, which may not stand in a dataflow block: the importer then builds `main`
from plain binding blocks (`NeedsBindingBlocks` restarts it that way).

Example:
    >>> import onnx
    >>> from onnx import TensorProto, helper
    >>> from unity.relax.frontend.onnx import from_onnx
    >>> def branch(name, op):
    ...     out = helper.make_tensor_value_info(name, TensorProto.FLOAT, [3])
    ...     return helper.make_graph([helper.make_node(op, ["x"], [name])], name, [], [out])
    >>> node = helper.make_node("If", ["c"], ["y"], then_branch=branch("t", "Exp"),
    ...                         else_branch=branch("e", "Neg"))
    >>> graph = helper.make_graph(
    ...     [node], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
    ...                   helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
    ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    >>> mod = from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    >>> type(mod["main"].body.blocks[0].bindings[-1].value).__name__
    'If'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx
import sympy
from onnx import numpy_helper

from unity.relax import op as R
from unity.relax.expr import Constant, Expr, If, SeqExpr, Tuple, TupleGetItem
from unity.relax.frontend.onnx.context import NodeView, Value
from unity.relax.frontend.onnx.runtime_loop import runtime_loop
from unity.relax.frontend.onnx.symbolic import SymTensor
from unity.relax.frontend.onnx.validate import node_order

if TYPE_CHECKING:
    from unity.relax.frontend.onnx.importer import _GraphImporter


class NeedsBindingBlocks(Exception):
    """Raised inside a dataflow block by an `If` decided at run time: import again
    without dataflow blocks.

    Example:
        >>> issubclass(NeedsBindingBlocks, Exception)
        True
    """


def subgraphs(proto: onnx.NodeProto) -> dict[str, onnx.GraphProto]:
    """The subgraph attributes of a node (`If`'s branches, `Loop`'s and `Scan`'s body).

    Example:
        >>> from onnx import helper
        >>> g = helper.make_graph([], "b", [], [])
        >>> sorted(subgraphs(helper.make_node("If", ["c"], [], then_branch=g, else_branch=g)))
        ['else_branch', 'then_branch']
    """
    return {a.name: a.g for a in proto.attribute if a.type == onnx.AttributeProto.GRAPH}


def convert_if(imp: _GraphImporter, proto: onnx.NodeProto, node: NodeView) -> list[Value]:
    """The values of an `If` node's outputs (the chosen branch's, or a relax `If`'s).

    Example:
        >>> outputs = convert_if(importer, proto, node)  # doctest: +SKIP
    """
    ctx = imp.ctx
    graphs = subgraphs(proto)
    then_graph, else_graph = graphs["then_branch"], graphs["else_branch"]
    for graph in (then_graph, else_graph):
        if len(graph.output) != len(proto.output):
            raise ctx.fail(f"branch {graph.name!r} has {len(graph.output)} outputs; the If has "
                           f"{len(proto.output)}")
    cond = node.input(0)
    if cond is None:
        raise ctx.fail("misses its condition")
    if not isinstance(cond, Expr | SymTensor):
        flat = np.asarray(cond).reshape(-1)
        if flat.size != 1:
            raise ctx.fail(f"condition must have one element, got shape {np.shape(cond)}")
        chosen = then_graph if bool(flat[0]) else else_graph
        return inline_graph(imp, chosen, f"{node.name}/{chosen.name or 'branch'}")
    if imp.dataflow:
        raise NeedsBindingBlocks(node.name)
    cond_expr = _scalar_condition(imp, ctx.expr(cond))
    bodies, dtypes = [], []
    for graph in (then_graph, else_graph):
        with imp.bb.nested() as blocks:
            values = inline_graph(imp, graph, f"{node.name}/{graph.name or 'branch'}")
            exprs = [ctx.expr(v) for v in values]
            result = exprs[0] if len(exprs) == 1 else imp.bb.emit(Tuple(tuple(exprs)))
        bodies.append(SeqExpr(tuple(blocks), result))
        dtypes.append([ctx.dtype(e) for e in exprs])
    for k, (a, b) in enumerate(zip(*dtypes, strict=True)):
        if a != b:
            raise ctx.fail(f"branches disagree on the dtype of output {k}: {a} and {b}")
    out = imp.bb.emit(If(cond_expr, bodies[0], bodies[1]))
    if len(proto.output) == 1:
        return [out]
    return [imp.bb.emit(TupleGetItem(out, k)) for k in range(len(proto.output))]


def _scalar_condition(imp: _GraphImporter, cond: Expr) -> Expr:
    sinfo = imp.ctx.sinfo(cond)
    if sinfo.dtype != "bool":
        raise imp.ctx.fail(f"condition must be bool, got {sinfo.dtype}")
    if sinfo.shape is not None and len(sinfo.shape) > 0:
        if any(d != 1 for d in sinfo.shape):
            raise imp.ctx.fail(f"condition must have one element, got shape {tuple(sinfo.shape)}")
        cond = imp.bb.emit(R.reshape(cond, ()))
    return cond


MAX_UNROLL = 256
"""The most iterations a `Loop` or `Scan` is unrolled into (each is a copy of its body)."""


def convert_scan(imp: _GraphImporter, proto: onnx.NodeProto, node: NodeView) -> list[Value]:
    """`Scan` (opset 9+) unrolled over its static sequence length: the body once per
    element, states carried from step to step, the per-step outputs stacked.

    Example:
        >>> outputs = convert_scan(importer, proto, node)  # doctest: +SKIP
    """
    ctx = imp.ctx
    if node.opset < 9:
        raise ctx.fail("is supported from opset 9 (opset 8's batched form with sequence_lens is not)")
    body = subgraphs(proto)["body"]
    m = int(node.attr("num_scan_inputs"))
    inputs = list(node.inputs)
    n = len(inputs) - m
    if n < 0 or len(body.input) != len(inputs):
        raise ctx.fail(f"body takes {len(body.input)} inputs; the node gives {len(inputs)} "
                       f"({m} of them scanned)")
    k = len(body.output) - n
    in_axes = [ctx.normalize_axes([a], ctx.ndim(x))[0] for a, x in
               zip(node.attr("scan_input_axes", [0] * m), inputs[n:], strict=True)]
    in_dirs = list(node.attr("scan_input_directions", [0] * m))
    lengths = {ctx.shape(x)[a] for x, a in zip(inputs[n:], in_axes, strict=True)}
    if len(lengths) != 1 or not next(iter(lengths)).is_number:
        got = sorted(map(str, lengths))
        raise ctx.fail(f"needs one static sequence length over its scanned inputs, got {got}")
    steps = int(next(iter(lengths)))
    _check_unroll(ctx, steps)
    states, per_step = inputs[:n], [[] for _ in range(k)]
    for t in range(steps):
        elems = [_element(imp, x, a, steps - 1 - t if d else t)
                 for x, a, d in zip(inputs[n:], in_axes, in_dirs, strict=True)]
        outs = inline_graph(imp, body, f"{node.name}/step{t}", [*states, *elems])
        states = outs[:n]
        for j in range(k):
            per_step[j].append(outs[n + j])
    out_axes = list(node.attr("scan_output_axes", [0] * k))
    out_dirs = list(node.attr("scan_output_directions", [0] * k))
    stacked = [_stack(imp, vals[::-1] if d else vals, a)
               for vals, a, d in zip(per_step, out_axes, out_dirs, strict=True)]
    return [*states, *stacked]


def convert_loop(imp: _GraphImporter, proto: onnx.NodeProto, node: NodeView) -> list[Value]:
    """`Loop` unrolled when its trip count and condition are known at import time (the
    body's condition output too, step by step) and it runs at most `MAX_UNROLL` steps:
    loop-carried values pass from step to step, the per-step scan outputs are stacked on
    a new first axis.  Otherwise a recursive relax function runs it (`runtime_loop`).

    Example:
        >>> outputs = convert_loop(importer, proto, node)  # doctest: +SKIP
    """
    ctx = imp.ctx
    body = subgraphs(proto)["body"]
    trip, cond, *carried = node.inputs
    if len(body.input) != 2 + len(carried):
        raise ctx.fail(f"body takes {len(body.input)} inputs; the node gives 2 + {len(carried)}")
    if len(body.output) < 1 + len(carried):
        raise ctx.fail(f"body gives {len(body.output)} outputs; it must give the condition and "
                       f"the {len(carried)} loop-carried values")  # fmt: skip
    if trip is None and cond is None:
        raise ctx.fail("has neither a trip count nor a condition: it would never end")
    unrolled = _unrolled(imp, node, body)
    return unrolled if unrolled is not None else runtime_loop(imp, proto, node)


def _unrolled(imp: _GraphImporter, node: NodeView, body: onnx.GraphProto) -> list[Value] | None:
    """The loop's outputs unrolled step by step, or None when a step needs run-time data
    or the loop runs more than `MAX_UNROLL` steps (the steps already unrolled are left
    for dead-code elimination)."""
    trip, cond, *carried = node.inputs
    limit = None if trip is None else _number(imp, trip, "trip count M")
    going = True if cond is None else _number(imp, cond, "condition")
    if (trip is not None and limit is None) or going is None:
        return None
    per_step: list[list[Value]] = [[] for _ in range(len(body.output) - 1 - len(carried))]
    t = 0
    while going and (limit is None or t < limit):
        if t >= MAX_UNROLL:
            return None
        outs = inline_graph(imp, body, f"{node.name}/step{t}",
                            [np.array(t, "int64"), np.array(bool(going)), *carried])
        going = _number(imp, outs[0], "condition computed by the body")  # without a cond input too
        if going is None:
            return None
        carried = outs[1:1 + len(carried)]
        for j, value in enumerate(outs[1 + len(carried):]):
            per_step[j].append(value)
        t += 1
    if per_step and t == 0:
        raise imp.ctx.fail("runs no iteration, so its scan outputs have no known shape")
    return [*carried, *(_stack(imp, vals, 0) for vals in per_step)]


def _check_unroll(ctx: object, steps: int) -> None:
    if steps > MAX_UNROLL:
        msg = f"would unroll into more than {MAX_UNROLL} copies of its body"
        raise ctx.fail(msg)  # type: ignore[attr-defined]


def _number(imp: _GraphImporter, value: Value, what: str) -> int | bool | None:
    """A one-element value known at import time (a trip count, a condition) as a number;
    None when it is run-time data."""
    if isinstance(value, SymTensor) and all(sympy.sympify(v).is_number for v in value.values.flat):
        value = value.values.astype(value.dtype)
    if not isinstance(value, np.ndarray | np.generic):
        return None
    flat = np.asarray(value).reshape(-1)
    if flat.size != 1:
        raise imp.ctx.fail(f"{what} must have one element, got shape {np.shape(value)}")
    return flat[0].item()


def _element(imp: _GraphImporter, x: Value, axis: int, index: int) -> Value:
    """`x[..., index, ...]` along `axis` (the axis removed)."""
    if isinstance(x, np.ndarray | np.generic):
        return np.take(np.asarray(x), index, axis=axis)
    return imp.ctx.emit(R.take(imp.ctx.expr(x), Constant(np.array(index, "int64")), axis))


def _stack(imp: _GraphImporter, values: list[Value], axis: int) -> Value:
    """`values` stacked on a new `axis` (negative: counted in the result's rank)."""
    if all(isinstance(v, np.ndarray | np.generic) for v in values):
        return np.stack([np.asarray(v) for v in values], axis=axis)
    exprs = [imp.ctx.expr(v) for v in values]
    rank = imp.ctx.ndim(exprs[0]) + 1
    axis = axis + rank if axis < 0 else axis
    return imp.ctx.emit(R.concat([imp.ctx.emit(R.expand_dims(e, axis)) for e in exprs], axis))


def inline_graph(imp: _GraphImporter, graph: onnx.GraphProto, prefix: str,
                 inputs: list[Value] | None = None) -> list[Value]:  # fmt: skip
    """Convert a subgraph's nodes in place (its names are local; outer values are
    visible; `inputs` bind its graph inputs, a loop body's) and return its outputs' values.

    Example:
        >>> values = inline_graph(importer, then_graph, "if_0/then")  # doctest: +SKIP
    """
    saved, saved_node = dict(imp.env), imp.ctx.node
    try:
        for value_info, value in zip(graph.input, inputs or [], strict=False):
            imp.env[value_info.name] = value
        for t in graph.initializer:
            imp.env[t.name] = numpy_helper.to_array(t)
        for name, inner in node_order(graph):
            imp._convert(inner, name=f"{prefix}/{name}")
        values = [imp.env.get(o.name) for o in graph.output]
    finally:
        imp.env, imp.ctx.node = saved, saved_node
    for o, value in zip(graph.output, values, strict=True):
        if value is None:
            raise imp.ctx.fail(f"branch {graph.name!r} never produces its output {o.name!r}")
    return values


CONTROL_FLOW = {"If": convert_if, "Loop": convert_loop, "Scan": convert_scan}
"""The ops with subgraphs, converted by the importer itself (they convert their bodies)."""
