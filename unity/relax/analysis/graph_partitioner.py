"""Partition a dataflow graph into fusion groups with TVM's dominator-based rules.

Each node starts in its own group (a union-find tree).  Three phases walk the nodes in
topological order and try to merge a node's group with its post-dominator's, when every
path between them satisfies a condition on the groups' patterns:

- phase 0: an out-elemwise-fusable op (conv2d, matmul) absorbs the chain of elementwise /
  broadcast ops it reaches through an elementwise edge (bias, batch-norm scale, relu,
  residual add);
  elementwise and broadcast ops fuse into an injective or reduction dominator;
- phase 1: the same for elementwise / broadcast ops, plus injective ops and tuples fused
  into their dominator when all paths are injective, or into an anchor that is their
  only consumer and reads them through a copy of its own (a staged edge: a padded conv
  computes ShuffleNet's channel shuffle inside its padding, one launch and one pass
  over memory fewer; ShuffleNet 6-8% faster on Zen 3), or into an anchor's group when
  it is a group of its own read only by an elementwise op of that group's epilogue and
  reads nothing of the group (a zero pad of a small tensor added to a conv's output:
  computed where the epilogue reads it);
- phase 2: injective ops fuse into a tuple whose group has already fused into injective
  consumers.

Groups never grow past `max_fuse_depth` nodes.  Opaque nodes never fuse.

Example:
    >>> from unity.relax.analysis.dominator import IndexedForwardGraph
    >>> from unity.relax.analysis.op_pattern import OpPatternKind
    >>> g = IndexedForwardGraph()
    >>> x = g.add_node("x", OpPatternKind.OPAQUE)
    >>> a = g.add_node("exp", OpPatternKind.ELEMWISE)
    >>> b = g.add_node("add", OpPatternKind.BROADCAST, extern_ref=True)
    >>> g.add_edge(x, a, OpPatternKind.ELEMWISE); g.add_edge(a, b, OpPatternKind.BROADCAST)
    >>> groups = partition_graph(g)
    >>> groups[a.index].find_root() is groups[b.index].find_root()
    True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from unity.relax.analysis.dominator import GraphNode, IndexedForwardGraph, PostDominatorTree
from unity.relax.analysis.op_pattern import OpPatternKind as K

PathCondition = Callable[[K, bool], bool]
"""`(pattern of a group on the path, whether it is the sink) -> allowed`."""


@dataclass(eq=False)
class Group:
    """A fusion group: a union-find tree whose root carries the group's facts.

    Example:
        >>> child, root = Group(K.ELEMWISE, "x"), Group(K.INJECTIVE, "y")
        >>> child.parent = root
        >>> child.find_root() is root, root.pattern.name
        (True, 'INJECTIVE')
    """

    pattern: K
    root_ref: object
    parent: Group | None = None
    anchor_ref: object | None = None
    num_nodes: int = 1

    def find_root(self) -> Group:
        """The root of this group's tree (with path compression).

        Example:
            >>> Group(K.ELEMWISE, "x").find_root().root_ref
            'x'
        """
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node.parent is not None and node.parent is not root:
            node.parent, node = root, node.parent
        return root


def partition_graph(graph: IndexedForwardGraph, max_fuse_depth: int = 256) -> list[Group]:
    """Group the nodes of `graph` for fusion; returns the group of each node by index.

    Example:
        >>> len(partition_graph(IndexedForwardGraph()))
        0
    """
    return _Partitioner(graph, max_fuse_depth).run()


class _Partitioner:
    def __init__(self, graph: IndexedForwardGraph, max_fuse_depth: int) -> None:
        self.graph = graph
        self.max_fuse_depth = max_fuse_depth
        self.groups = [_initial_group(n) for n in graph.nodes]
        self.visited: set[int] = set()
        self.inputs: dict[int, list[GraphNode]] = {n.index: [] for n in graph.nodes}
        for node in graph.nodes:
            for edge in node.outputs:
                self.inputs[edge.node.index].append(node)

    def run(self) -> list[Group]:
        tree = PostDominatorTree(self.graph)
        for phase in range(3):
            for gnode in self.graph.nodes:
                self._fuse_node(gnode, tree, phase)
        return self.groups

    def _fuse_node(self, gnode: GraphNode, tree: PostDominatorTree, phase: int) -> None:
        group = self.groups[gnode.index]
        dom = tree.nodes[gnode.index]
        if group.pattern == K.OPAQUE or dom.parent is None:
            return
        sink = dom.parent.gnode
        if self._count_fused_nodes(gnode, sink) > self.max_fuse_depth:
            return
        sink_group = self.groups[sink.index]
        if phase == 2:
            self._fuse_into_tuple(gnode, sink, group)
            return
        if group.find_root() is sink_group.find_root() or sink_group.pattern == K.TUPLE:
            return
        if group.pattern == K.OUT_ELEMWISE_FUSABLE:
            if phase == 0 and dom.pattern == K.ELEMWISE:  # the anchor's output read elementwise
                self._try_fuse(gnode, sink, lambda kind, _: kind <= K.BROADCAST)
        elif group.pattern <= K.BROADCAST:
            if dom.pattern <= K.INJECTIVE or dom.pattern == K.COMM_REDUCE:
                self._try_fuse(gnode, sink, _broadcast_path)
        elif group.pattern in (K.INJECTIVE, K.TUPLE) and phase == 1:
            # phase 1 comes after phase 0, so that conv2d groups are complete first
            if group.pattern == K.INJECTIVE and _staged_into(gnode, sink):
                self._try_fuse(gnode, sink, _staged_path)
            elif group.pattern == K.INJECTIVE and self._epilogue_operand(gnode, sink):
                self._commit_fuse(gnode, sink)
            else:
                self._try_fuse(gnode, sink, lambda kind, _: kind <= K.INJECTIVE)

    def _epilogue_operand(self, gnode: GraphNode, sink: GraphNode) -> bool:
        """Whether `gnode`, an injective op on its own, is read only by `sink`, an
        elementwise or broadcast op of an anchor's epilogue, and reads nothing of that
        group, directly or through other ops: it can be computed where the epilogue reads it (a zero pad of a small conv
        output added to a conv's: `SplitConvByLiveTaps`' pieces)."""
        group = self.groups[gnode.index]
        if group.find_root() is not group or group.num_nodes != 1 or gnode.extern_ref:
            return False
        if len(gnode.outputs) != 1 or gnode.outputs[0].node is not sink or sink.pattern > K.BROADCAST:
            return False
        root = self.groups[sink.index].find_root()
        if root.pattern != K.OUT_ELEMWISE_FUSABLE:
            return False
        seen, stack = {gnode.index}, list(self.inputs[gnode.index])
        while stack:  # nothing gnode reads, however indirectly, may come from the group
            node = stack.pop()
            if node.index in seen:
                continue
            seen.add(node.index)
            if self.groups[node.index].find_root() is root:
                return False
            stack.extend(self.inputs[node.index])
        return True

    def _fuse_into_tuple(self, gnode: GraphNode, sink: GraphNode, group: Group) -> None:
        if group.pattern > K.INJECTIVE:
            return
        sink_group = self.groups[sink.index]
        root = sink_group.find_root()
        if root.pattern == K.TUPLE:
            return
        if sink_group.pattern == K.TUPLE and root.pattern <= K.INJECTIVE:
            self._try_fuse(gnode, sink, lambda kind, _: kind <= K.INJECTIVE)

    def _try_fuse(self, src: GraphNode, sink: GraphNode, cond: PathCondition) -> None:
        if self._check_path(src, sink, cond):
            self._commit_fuse(src, sink)

    # -- paths ----------------------------------------------------------------------------
    def _check_path(self, src: GraphNode, sink: GraphNode, cond: PathCondition) -> bool:
        """Whether every node on every path from `src` (excluded) to `sink` passes `cond`."""
        self.visited.clear()
        return all(self._check_path_from(e.node, sink, cond) for e in src.outputs)

    def _check_path_from(self, node: GraphNode, sink: GraphNode, cond: PathCondition) -> bool:
        if node.index in self.visited:
            return True
        self.visited.add(node.index)
        if not cond(self.groups[node.index].find_root().pattern, node is sink):
            return False
        if node is sink:
            return True
        return all(self._check_path_from(e.node, sink, cond) for e in node.outputs)

    def _commit_fuse(self, src: GraphNode, sink: GraphNode) -> None:
        """Merge the groups of every node on the paths from `src` to `sink` into sink's."""
        target = self.groups[sink.index].find_root()
        self.visited.clear()
        stack = [src]
        while stack:
            node = stack.pop()
            if node is sink or node.index in self.visited:
                continue
            self.visited.add(node.index)
            _merge(self.groups[node.index], target)
            stack.extend(e.node for e in node.outputs)

    def _count_fused_nodes(self, child: GraphNode, sink: GraphNode) -> int:
        """The size the sink's group would reach after fusing the paths from `child`."""
        self.visited.clear()
        sink_root = self.groups[sink.index].find_root()
        seen_groups: set[int] = {id(sink_root)}
        total = sink_root.num_nodes
        stack = [child]
        while stack:
            node = stack.pop()
            if node is sink or node.index in self.visited:
                continue
            self.visited.add(node.index)
            root = self.groups[node.index].find_root()
            if id(root) not in seen_groups:
                seen_groups.add(id(root))
                total += root.num_nodes
            stack.extend(e.node for e in node.outputs)
        return total


def _initial_group(node: GraphNode) -> Group:
    anchor = node.ref if node.pattern == K.OUT_ELEMWISE_FUSABLE else None
    return Group(node.pattern, node.ref, anchor_ref=anchor)


def _broadcast_path(kind: K, is_sink: bool) -> bool:
    """Injective ops may sit on parallel branches; the sink may be any fusable anchor."""
    if not is_sink:
        return kind <= K.INJECTIVE
    return kind <= K.INJECTIVE or kind in (K.COMM_REDUCE, K.OUT_ELEMWISE_FUSABLE)


def _staged_into(gnode: GraphNode, sink: GraphNode) -> bool:
    """Whether `gnode`'s only consumer is `sink`, an anchor that copies it first (a
    channel shuffle before a padded conv: the shuffle is computed inside the padding)."""
    return (
        sink.pattern == K.OUT_ELEMWISE_FUSABLE
        and len(gnode.outputs) == 1
        and gnode.outputs[0].node is sink
        and gnode.outputs[0].staged
    )


def _staged_path(kind: K, is_sink: bool) -> bool:
    return kind <= K.INJECTIVE or (is_sink and kind == K.OUT_ELEMWISE_FUSABLE)


def _merge(child: Group, parent: Group) -> None:
    child, parent = child.find_root(), parent.find_root()
    if child is parent:
        return
    parent.num_nodes += child.num_nodes
    child.parent = parent
    if child.anchor_ref is not None:
        parent.anchor_ref = child.anchor_ref
        parent.pattern = max(child.pattern, parent.pattern)
