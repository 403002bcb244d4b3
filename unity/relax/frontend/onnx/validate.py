"""Checks on a whole ONNX graph before any node is converted.

`check_opset` refuses opsets newer than the frontend knows; `node_order` refuses a
value written by two nodes (or by a node and a graph input / initializer) and a
cycle (naming the nodes on it), and returns the nodes in a topological order
(ONNX requires sorted graphs; unsorted acyclic ones are sorted, keeping the file's
order where it is already valid); `check_attribute_types` compares each
attribute's type with the operator schema, so a bad attribute is reported by name
instead of failing deep inside a converter.

Example:
    >>> from onnx import helper
    >>> g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [], [])
    >>> [name for name, _ in node_order(g)]
    ['Relu_0']
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator, Mapping

import onnx
from onnx import defs

from unity.relax.frontend.onnx.errors import OnnxImportError

MIN_OPSET = 7
"""The oldest default-domain opset the frontend accepts (older ones import with its rules)."""

MAX_OPSET = int(defs.onnx_opset_version())
"""The newest default-domain opset: the newest the installed onnx package defines.

The frontend folds with onnx's reference implementation and expands functions from
its schemas, so it knows exactly the opsets that package knows."""

_WIDENING = {onnx.AttributeProto.INT: onnx.AttributeProto.FLOAT,
             onnx.AttributeProto.INTS: onnx.AttributeProto.FLOATS}  # fmt: skip
"""Attribute types accepted where the schema wants another one (an int where a float is due)."""


def check_opset(version: int) -> None:
    """Raise an `OnnxImportError` when the default-domain opset is newer than `MAX_OPSET`.

    Example:
        >>> check_opset(17)
        >>> check_opset(99)  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        OnnxImportError: the model uses ONNX opset 99, newer than unity supports ...
    """
    if version > MAX_OPSET:
        raise OnnxImportError(
            f"the model uses ONNX opset {version}, newer than unity supports (opsets "
            f"{MIN_OPSET} to {MAX_OPSET}, the newest onnx {onnx.__version__} defines): "
            f"re-export the model with opset {MAX_OPSET} or older"
        )


def node_label(node: onnx.NodeProto, index: int) -> str:
    """How errors name a node: its op type and name (or ``<OpType>_<index>`` when unnamed).

    Example:
        >>> from onnx import helper
        >>> node_label(helper.make_node("Relu", ["x"], ["y"]), 3)
        'Relu node "Relu_3"'
    """
    return f'{node.op_type} node "{node.name or f"{node.op_type}_{index}"}"'


def node_order(graph: onnx.GraphProto) -> list[tuple[str, onnx.NodeProto]]:
    """The nodes of `graph` in a valid order, each with its display name.

    Raises:
        OnnxImportError: a value is produced twice, or the nodes form a cycle.

    Example:
        >>> from onnx import helper
        >>> nodes = [helper.make_node("Relu", ["t"], ["y"]), helper.make_node("Abs", ["x"], ["t"])]
        >>> [n for n, _ in node_order(helper.make_graph(nodes, "g", [], []))]
        ['Abs_1', 'Relu_0']
    """
    nodes = list(graph.node)
    producer = _producers(graph, nodes)
    deps = [sorted({producer[v] for v in _reads(node) if v in producer}) for node in nodes]
    order = _topological(deps)
    if order is None:
        raise OnnxImportError(_describe_cycle(nodes, deps, producer))
    return [(nodes[i].name or f"{nodes[i].op_type}_{i}", nodes[i]) for i in order]


def check_attribute_types(
    order: list[tuple[str, onnx.NodeProto]], domains: Mapping[str, int]
) -> None:
    """Raise an `OnnxImportError` for the first attribute whose type its op's schema forbids.

    Nodes of unknown ops or domains are skipped (the unsupported-op check reports them).

    Example:
        >>> from onnx import helper
        >>> node = helper.make_node("Softmax", ["x"], ["y"], axis="one")
        >>> check_attribute_types([("s", node)], {"": 17})  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        OnnxImportError: Softmax node "s": attribute 'axis' must be an INT, got a STRING ('one')
    """
    for name, node in order:
        domain = "" if node.domain == "ai.onnx" else node.domain
        try:
            schema = defs.get_schema(node.op_type, domains.get(domain, 1), domain)
        except defs.SchemaError:
            continue
        for attr in node.attribute:
            spec = schema.attributes.get(attr.name)
            if spec is None or attr.ref_attr_name:
                continue
            want = int(spec.type)
            if attr.type != want and _WIDENING.get(attr.type) != want:
                got = f"{_type_name(attr.type)} ({_show(attr)})"
                msg = f"attribute {attr.name!r} must be {_type_name(want)}, got {got}"
                raise OnnxImportError(msg, name, node.op_type)


def _producers(graph: onnx.GraphProto, nodes: list[onnx.NodeProto]) -> dict[str, int]:
    """Value name -> index of the node writing it; an error when two writers claim a name."""
    outer = {i.name: "a graph input" for i in graph.input}
    outer.update({t.name: "an initializer" for t in graph.initializer})
    producer: dict[str, int] = {}
    for index, node in enumerate(nodes):
        for value in node.output:
            if not value:
                continue
            if value in producer:
                first = producer[value]
                raise OnnxImportError(
                    f"value {value!r} is produced by two nodes: {node_label(nodes[first], first)} "
                    f"and {node_label(node, index)} (ONNX values are assigned once)"
                )
            if value in outer:
                raise OnnxImportError(
                    f"value {value!r} is {outer[value]} and also produced by "
                    f"{node_label(node, index)} (ONNX values are assigned once)"
                )
            producer[value] = index
    return producer


def _reads(node: onnx.NodeProto) -> Iterator[str]:
    """The values `node` reads: its inputs and the outer values its subgraphs use."""
    yield from (v for v in node.input if v)
    for attr in node.attribute:
        for sub in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs):
            yield from _outer_reads(sub)


def _outer_reads(graph: onnx.GraphProto) -> set[str]:
    local = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    local |= {v for n in graph.node for v in n.output}
    return {v for n in graph.node for v in _reads(n) if v not in local}


def _topological(deps: list[list[int]]) -> list[int] | None:
    """A topological order of the nodes (the file's order when it is one), None on a cycle."""
    users: list[list[int]] = [[] for _ in deps]
    waiting = [len(before) for before in deps]
    for index, before in enumerate(deps):
        for d in before:
            users[d].append(index)
    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for user in users[index]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, user)
    return order if len(order) == len(deps) else None


def _describe_cycle(
    nodes: list[onnx.NodeProto], deps: list[list[int]], producer: dict[str, int]
) -> str:
    """'the graph has a cycle: A -(a)-> B -(b)-> A', found by walking back along inputs."""
    alive = set(range(len(nodes)))
    changed = True
    while changed:  # drop nodes that cannot be on a cycle: no unresolved predecessor...
        changed = False
        for i in sorted(alive):
            if not any(d in alive for d in deps[i]) or not any(i in deps[j] for j in alive):
                alive.discard(i)  # ...or no successor left
                changed = True
    start = min(alive)
    path, seen = [start], {start: 0}
    while True:
        nxt = next(d for d in deps[path[-1]] if d in alive)
        if nxt in seen:
            cycle = path[seen[nxt]:] + [nxt]
            break
        seen[nxt] = len(path)
        path.append(nxt)
    cycle.reverse()  # producer -> consumer
    parts = [node_label(nodes[cycle[0]], cycle[0])]
    for a, b in itertools.pairwise(cycle):
        value = next(v for v in _reads(nodes[b]) if producer.get(v) == a)
        parts.append(f"-({value!r})-> {node_label(nodes[b], b)}")
    return "the graph has a cycle: " + " ".join(parts)


def _type_name(kind: int) -> str:
    name = onnx.AttributeProto.AttributeType.Name(kind)
    return ("an " if name[0] in "AEIOU" else "a ") + name


def _show(attr: onnx.AttributeProto) -> str:
    value = onnx.helper.get_attribute_value(attr)
    text = repr(value.decode() if isinstance(value, bytes) else value)
    return text if len(text) <= 40 else text[:37] + "..."
