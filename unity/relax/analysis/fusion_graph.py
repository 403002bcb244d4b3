"""Build the `IndexedForwardGraph` of a relax dataflow block, for `FuseOps`.

One node per binding, in binding order, with the pattern of its value: a `call_tir`
takes its PrimFunc's `op_pattern` attribute (opaque when absent), also when it passes
extra symbolic values `tir_vars` (`FuseTIR` passes them on to the fused kernel), a tuple
is `TUPLE`, a tuple item `INJECTIVE`, anything else `OPAQUE`.  Values from outside the block (parameters, earlier blocks, constants)
get opaque nodes of their own.  A binding whose var is not a `DataflowVar` is used after
the block, so it is marked `extern_ref`.  An edge carries its consumer's pattern, except
that a broadcast op reads an argument of its result's shape elementwise (as in TVM).

Example:
    >>> graph = create_fusion_graph(block, mod)  # doctest: +SKIP
    >>> [n.pattern.name for n in graph.nodes]  # doctest: +SKIP
    ['OPAQUE', 'ELEMWISE', 'BROADCAST']
"""

from __future__ import annotations

from unity.ir.module import GlobalVar, IRModule
from unity.relax.analysis.dominator import GraphNode, IndexedForwardGraph
from unity.relax.analysis.op_pattern import OpPatternKind, staged_params
from unity.relax.expr import (
    Call, Constant, DataflowBlock, DataflowVar, Expr, Tuple, TupleGetItem, Var, VarBinding,
)  # fmt: skip
from unity.relax.op.call_tir import call_tir
from unity.relax.struct_info import TensorStructInfo, shapes_equal
from unity.tir.function import PrimFunc


def create_fusion_graph(block: DataflowBlock, mod: IRModule) -> IndexedForwardGraph:
    """The forward graph of `block`'s bindings (node `ref`s are the bindings).

    Example:
        >>> len(create_fusion_graph(DataflowBlock(()), IRModule()).nodes)
        0
    """
    graph = IndexedForwardGraph()
    defined: dict[Var, GraphNode] = {}
    for binding in block.bindings:
        value: Expr = binding.value  # type: ignore[attr-defined]  # both binding kinds have it
        pattern = OpPatternKind.OPAQUE
        if isinstance(binding, VarBinding):
            pattern = value_pattern(value, mod)
        node = graph.add_node(binding, pattern, not isinstance(binding.var, DataflowVar))
        edges: dict[GraphNode, OpPatternKind] = {}
        staged: dict[GraphNode, bool] = {}
        copied = _staged_args(value, mod) if pattern == OpPatternKind.OUT_ELEMWISE_FUSABLE else ()
        for leaf in _leaves(value):
            producer = defined.get(leaf) or _outside_node(graph, leaf)  # type: ignore[arg-type]
            kind = _edge_pattern(pattern, leaf, binding.var)
            edges[producer] = min(kind, edges.get(producer, kind))
            staged[producer] = staged.get(producer, True) and any(leaf is a for a in copied)
        for producer, kind in edges.items():  # one edge per distinct producer
            graph.add_edge(producer, node, kind, staged[producer])
        defined[binding.var] = node
    return graph


def _staged_args(value: Expr, mod: IRModule) -> list[Expr]:
    """The arguments of a `call_tir` whose PrimFunc reads them only through a copy
    (`staged_params`: a conv's padding)."""
    func = called_prim_func(value, mod)
    args = value.args[1] if func is not None else None  # type: ignore[attr-defined]
    if func is None or not isinstance(args, Tuple):
        return []
    positions = staged_params(func)
    return [a for n, a in enumerate(args.fields) if n in positions]


def _edge_pattern(pattern: OpPatternKind, arg: Expr, result: Var) -> OpPatternKind:
    """A broadcast op reads an argument of the result's own shape elementwise (as in TVM)."""
    if pattern != OpPatternKind.BROADCAST:
        return pattern
    a, r = arg.struct_info_, result.struct_info_
    if not isinstance(a, TensorStructInfo) or not isinstance(r, TensorStructInfo):
        return pattern
    if a.shape is None or r.shape is None or not shapes_equal(a.shape, r.shape):
        return pattern
    return OpPatternKind.ELEMWISE


def value_pattern(value: Expr, mod: IRModule) -> OpPatternKind:
    """The fusion pattern of a bound value.

    Example:
        >>> value_pattern(Tuple(()), IRModule()).name
        'TUPLE'
    """
    if isinstance(value, Tuple):
        return OpPatternKind.TUPLE
    if isinstance(value, TupleGetItem):
        return OpPatternKind.INJECTIVE
    func = called_prim_func(value, mod)
    if func is None:
        return OpPatternKind.OPAQUE
    pattern = func.attrs.get("op_pattern")
    return OpPatternKind(pattern) if pattern is not None else OpPatternKind.OPAQUE


def called_prim_func(value: Expr, mod: IRModule) -> PrimFunc | None:
    """The PrimFunc that `value` calls with `call_tir`, if it is such a call.

    Example:
        >>> called_prim_func(Tuple(()), IRModule()) is None
        True
    """
    if not isinstance(value, Call) or value.op is not call_tir:
        return None
    gvar = value.args[0]
    if not isinstance(gvar, GlobalVar) or gvar not in mod:
        return None
    func = mod[gvar]
    return func if isinstance(func, PrimFunc) else None


def _leaves(value: Expr) -> list[Expr]:
    """The variables and constants `value` reads, in order."""
    out: list[Expr] = []

    def walk(expr: object) -> None:
        if isinstance(expr, Var | Constant):
            out.append(expr)
        elif isinstance(expr, Tuple):
            for f in expr.fields:
                walk(f)
        elif isinstance(expr, TupleGetItem):
            walk(expr.tuple_value)
        elif isinstance(expr, Call):
            if isinstance(expr.op, Expr):
                walk(expr.op)
            for a in expr.args:
                walk(a)

    walk(value)
    return out


def _outside_node(graph: IndexedForwardGraph, leaf: Expr) -> GraphNode:
    """The opaque node of a value defined outside the block (made on first use)."""
    node = graph.lookup(leaf)
    if node is None:
        node = graph.add_node(leaf, OpPatternKind.OPAQUE)
    return node


__all__ = ["called_prim_func", "create_fusion_graph", "value_pattern"]
