"""The forward dataflow graph of a block and its post-dominator tree (used by `FuseOps`).

`IndexedForwardGraph` holds one node per value (a binding, a parameter, a constant) in
topological order, each with its `OpPatternKind` and edges to its consumers; an edge
carries the pattern of the consumer.  A node marked `extern_ref` is used outside the
graph (a function output), so it has no post-dominator inside it.

`PostDominatorTree`: the parent of a node is the nearest node that every path from it to
the graph's sinks goes through (the least common ancestor of its consumers), and
`pattern` is the most general edge pattern met on the way there.

Example:
    >>> g = IndexedForwardGraph()
    >>> a, b, c = (g.add_node(name, OpPatternKind.ELEMWISE) for name in "abc")
    >>> g.add_edge(a, b, OpPatternKind.ELEMWISE)
    >>> g.add_edge(a, c, OpPatternKind.BROADCAST)
    >>> g.add_edge(b, c, OpPatternKind.ELEMWISE)
    >>> tree = PostDominatorTree(g)
    >>> tree.nodes[a.index].parent.gnode.ref, tree.nodes[a.index].pattern.name
    ('c', 'BROADCAST')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from unity.relax.analysis.op_pattern import OpPatternKind


@dataclass(eq=False)
class Edge:
    """An edge to consumer `node`, with the consumer's pattern.

    Example:
        >>> g = IndexedForwardGraph()
        >>> a, b = g.add_node("a", OpPatternKind.ELEMWISE), g.add_node("b", OpPatternKind.OPAQUE)
        >>> g.add_edge(a, b, OpPatternKind.OPAQUE)
        >>> a.outputs[0].node is b, a.outputs[0].pattern.name
        (True, 'OPAQUE')
    """

    node: GraphNode
    pattern: OpPatternKind
    staged: bool = False
    """Whether the consumer reads this value only through a copy of its own (a conv's
    padding): an injective producer may then be computed inside that copy."""


@dataclass(eq=False)
class GraphNode:
    """A value of the graph: `ref` is the relax object it stands for.

    Example:
        >>> node = IndexedForwardGraph().add_node("x", OpPatternKind.INJECTIVE, extern_ref=True)
        >>> node.index, node.ref, node.extern_ref, node.outputs
        (0, 'x', True, [])
    """

    index: int
    ref: object
    pattern: OpPatternKind
    extern_ref: bool = False
    outputs: list[Edge] = field(default_factory=list)


class IndexedForwardGraph:
    """Nodes in topological (post-DFS) order, with edges from producers to consumers.

    Example:
        >>> g = IndexedForwardGraph()
        >>> g.add_node("x", OpPatternKind.OPAQUE).index
        0
    """

    def __init__(self) -> None:
        self.nodes: list[GraphNode] = []
        self.node_map: dict[int, GraphNode] = {}

    def add_node(self, ref: object, pattern: OpPatternKind, extern_ref: bool = False) -> GraphNode:
        """Append a node for `ref` (after all of its producers).

        Example:
            >>> IndexedForwardGraph().add_node("x", OpPatternKind.OPAQUE).pattern.name
            'OPAQUE'
        """
        node = GraphNode(len(self.nodes), ref, pattern, extern_ref)
        self.nodes.append(node)
        self.node_map[id(ref)] = node
        return node

    def lookup(self, ref: object) -> GraphNode | None:
        """The node of `ref`, if any.

        Example:
            >>> IndexedForwardGraph().lookup("x") is None
            True
        """
        return self.node_map.get(id(ref))

    def add_edge(
        self, src: GraphNode, dst: GraphNode, pattern: OpPatternKind, staged: bool = False
    ) -> None:
        """Record that `dst` consumes `src` with `pattern` (`staged`: see `Edge.staged`).

        Example:
            >>> g.add_edge(a, b, OpPatternKind.ELEMWISE)  # doctest: +SKIP
        """
        src.outputs.append(Edge(dst, pattern, staged))


@dataclass(eq=False)
class DomNode:
    """A node of the post-dominator tree.

    Example:
        >>> g = IndexedForwardGraph()
        >>> a, b = g.add_node("a", OpPatternKind.ELEMWISE), g.add_node("b", OpPatternKind.OPAQUE)
        >>> g.add_edge(a, b, OpPatternKind.OPAQUE)
        >>> dom = PostDominatorTree(g).nodes[0]
        >>> dom.parent.gnode is b, dom.depth
        (True, 2)
    """

    gnode: GraphNode
    parent: DomNode | None
    depth: int
    pattern: OpPatternKind


class PostDominatorTree:
    """The post-dominator tree of an `IndexedForwardGraph` (`nodes[i]` for graph node i).

    Example:
        >>> PostDominatorTree(IndexedForwardGraph()).nodes
        []
    """

    def __init__(self, graph: IndexedForwardGraph) -> None:
        self.nodes: list[DomNode] = [None] * len(graph.nodes)  # type: ignore[list-item]  # filled below
        for gnode in reversed(graph.nodes):  # consumers come first
            self.nodes[gnode.index] = self._make(gnode)

    def _make(self, gnode: GraphNode) -> DomNode:
        if gnode.extern_ref or not gnode.outputs:
            return DomNode(gnode, None, 1, OpPatternKind.OPAQUE if gnode.extern_ref else
                           OpPatternKind.ELEMWISE)  # fmt: skip
        pattern = OpPatternKind.ELEMWISE
        parent: DomNode | None = None
        for k, edge in enumerate(gnode.outputs):
            other = self.nodes[edge.node.index]
            parent, pattern = (other, pattern) if k == 0 else _lca(parent, other, pattern)
            pattern = max(pattern, edge.pattern)
        depth = parent.depth + 1 if parent is not None else 1
        return DomNode(gnode, parent, depth, pattern)


def _lca(
    lhs: DomNode | None, rhs: DomNode | None, pattern: OpPatternKind
) -> tuple[DomNode | None, OpPatternKind]:
    """Least common ancestor of two tree nodes, and the patterns met climbing to it."""
    while lhs is not rhs:
        if lhs is None or rhs is None:
            return None, pattern
        if lhs.depth < rhs.depth:
            pattern, rhs = max(pattern, rhs.pattern), rhs.parent
        elif rhs.depth < lhs.depth:
            pattern, lhs = max(pattern, lhs.pattern), lhs.parent
        else:
            pattern = max(pattern, lhs.pattern, rhs.pattern)
            lhs, rhs = lhs.parent, rhs.parent
    return lhs, pattern
