"""ONNX `If`: a branch chosen at import time is inlined; one chosen at run time is a
relax `If` whose branches are the converted subgraphs.

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
from onnx import numpy_helper

from unity.relax import op as R
from unity.relax.expr import Expr, If, SeqExpr, Tuple, TupleGetItem
from unity.relax.frontend.onnx.context import NodeView, Value
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


def branches(proto: onnx.NodeProto) -> tuple[onnx.GraphProto, onnx.GraphProto]:
    """The `then_branch` and `else_branch` subgraphs of an `If` node.

    Example:
        >>> from onnx import helper
        >>> g = helper.make_graph([], "b", [], [])
        >>> [b.name for b in branches(helper.make_node("If", ["c"], [], then_branch=g, else_branch=g))]
        ['b', 'b']
    """
    graphs = {a.name: a.g for a in proto.attribute if a.type == onnx.AttributeProto.GRAPH}
    return graphs["then_branch"], graphs["else_branch"]


def convert_if(imp: _GraphImporter, proto: onnx.NodeProto, node: NodeView) -> list[Value]:
    """The values of an `If` node's outputs (the chosen branch's, or a relax `If`'s).

    Example:
        >>> outputs = convert_if(importer, proto, node)  # doctest: +SKIP
    """
    ctx = imp.ctx
    then_graph, else_graph = branches(proto)
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
    cond_expr = _scalar_condition(imp, node, ctx.expr(cond))
    bodies = []
    for graph in (then_graph, else_graph):
        with imp.bb.nested() as blocks:
            values = inline_graph(imp, graph, f"{node.name}/{graph.name or 'branch'}")
            exprs = [ctx.expr(v) for v in values]
            result = exprs[0] if len(exprs) == 1 else imp.bb.emit(Tuple(tuple(exprs)))
        bodies.append(SeqExpr(tuple(blocks), result))
    out = imp.bb.emit(If(cond_expr, bodies[0], bodies[1]))
    if len(proto.output) == 1:
        return [out]
    return [imp.bb.emit(TupleGetItem(out, k)) for k in range(len(proto.output))]


def _scalar_condition(imp: _GraphImporter, node: NodeView, cond: Expr) -> Expr:
    sinfo = imp.ctx.sinfo(cond)
    if sinfo.dtype != "bool":
        raise imp.ctx.fail(f"condition must be bool, got {sinfo.dtype}")
    if sinfo.shape is not None and len(sinfo.shape) > 0:
        if any(not (d == 1) for d in sinfo.shape):
            raise imp.ctx.fail(f"condition must have one element, got shape {tuple(sinfo.shape)}")
        cond = imp.bb.emit(R.reshape(cond, ()))
    return cond


def inline_graph(imp: _GraphImporter, graph: onnx.GraphProto, prefix: str) -> list[Value]:
    """Convert a subgraph's nodes in place (its names are local; outer values are
    visible) and return its outputs' values.

    Example:
        >>> values = inline_graph(importer, then_graph, "if_0/then")  # doctest: +SKIP
    """
    saved, saved_node = dict(imp.env), imp.ctx.node
    try:
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
