"""`transform_block_layout`: give a block new iteration variables, fused or permuted from
its old ones by a lambda, and regenerate the loops over them.

Before::

    for i, j in T.grid(4, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi * 6 + vj]

After ``sch.transform_block_layout(b, lambda vi, vj: (vi * 6 + vj,))``::

    for ax0 in T.serial(24):
        with T.block("B"):
            vi_vj = T.axis.spatial(24, ax0)
            B[vi_vj // 6, vi_vj % 6] = A[vi_vj]

Unlike `fuse`, which keeps the block's variables and binds them to ``f // 6`` and
``f % 6``, the block itself now iterates over the fused variable: an access written in
the old variables as ``vi * 6 + vj`` becomes the point ``vi_vj``, so a tile of the fused
loop is a box of that buffer (what `reverse_compute_at` needs of a tile that crosses rows).

Each output of the lambda fuses old variables of one kind (spatial or reduction) in mixed
radix, ``v0 * (e1 * e2) + v1 * e2 + v2`` for extents ``e1, e2``, or is one of them, or is
half of a split, ``v // c`` and ``v % c`` (both present, `c` dividing `v`'s extent: a
grouped conv's output channel becomes its group and its channel in the group); each old
variable (but unit ones) appears in exactly one output or split, so the map is
one-to-one and onto.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

from unity.schedule.analysis import as_int, linear, linear_terms, mixed_radix, simplify, with_regions
from unity.schedule.error import ScheduleError
from unity.schedule.state import BlockRV, ScheduleState
from unity.schedule.tree import replace_stmts
from unity.tir.arith import Analyzer
from unity.tir.expr import BufferLoad, FloorDiv, FloorMod, IterVar, PrimExpr, Range, Var, const
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, substitute
from unity.tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, Stmt

IndexMap = Callable[..., Sequence[PrimExpr] | PrimExpr]

_P = "transform_block_layout"


def transform_block_layout(state: ScheduleState, block: BlockRV, index_map: IndexMap) -> None:
    """Replace the iteration variables of `block` by `index_map(*old)` and its loops by
    loops over the new variables.

    Args:
        state: the schedule state.
        block: a block whose loops each bind one of its variables, directly.
        index_map: a lambda from the block's variables to the new ones; each output is one
            old variable or a mixed-radix fusion of several of the same kind.

    Raises:
        ScheduleError: the block is guarded or not bound to its own loops, the lambda
            takes the wrong number of variables, or the map is not a fusion/permutation.

    Example:
        >>> sch.transform_block_layout(b, lambda n, c, y, x: (n, c, y * 28 + x))  # doctest: +SKIP
    """
    func_name, func, path = state.resolve_block(block, _P)
    realize: BlockRealize = path[-1]
    blk = realize.block
    loops = _binding_loops(realize, path, func)
    olds = [iv.var for iv in blk.iter_vars]
    n_params = len(inspect.signature(index_map).parameters)
    if n_params != len(olds):
        msg = f"the index map takes {n_params} variables; block {blk.name_hint} has {len(olds)}"
        raise ScheduleError(_P, msg, func, blk)
    outputs = index_map(*olds)
    outputs = [const(e) for e in (outputs if isinstance(outputs, list | tuple) else (outputs,))]
    new_vars, inverse = _invert(outputs, blk, func)
    rewrite = _SimplifyIndices({iv.var: iv.dom for iv in new_vars if as_int(iv.dom.extent) != 1})
    body = rewrite.visit_stmt(substitute(blk.body, inverse))
    init = None if blk.init is None else rewrite.visit_stmt(substitute(blk.init, inverse))
    new_blk = with_regions(blk.replace(iter_vars=tuple(new_vars), body=body, init=init))
    loop_vars = [Var(f"ax{k}", iv.var.dtype) for k, iv in enumerate(new_vars)]
    nest: Stmt = BlockRealize(tuple(loop_vars), realize.predicate, new_blk)
    for lv, iv in reversed(list(zip(loop_vars, new_vars))):
        nest = For(lv, const(0, lv.dtype), iv.dom.extent, ForKind.SERIAL, nest)
    state.commit(func_name, func.replace(body=replace_stmts(func.body, {loops[0]: nest})))


def _binding_loops(realize: BlockRealize, path: list, func: PrimFunc) -> list[For]:
    """The loops directly above `realize` that bind its variables, outermost first; raise
    unless each binds exactly one variable over its whole domain and nothing else is there."""
    blk = realize.block
    if as_int(realize.predicate) != 1:
        raise ScheduleError(_P, f"block {blk.name_hint} is guarded (T.where)", func, blk)
    bound = [v for v in realize.iter_values if as_int(v) is None]
    above = [s for s in path[:-1] if isinstance(s, For)][-len(bound):] if bound else []
    if not bound or [lp.loop_var for lp in above] != bound:
        msg = (
            f"block {blk.name_hint} must be bound to its own loops, one loop per variable "
            "directly above it, in order (as before any other primitive)"
        )
        raise ScheduleError(_P, msg, func, blk)
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        if as_int(value) is not None and as_int(iv.dom.extent) != 1:
            raise ScheduleError(_P, f"variable {iv.var.name} is bound to a constant", func, blk)
    for outer, inner in zip(above, [*above[1:], realize]):
        if outer.body is not inner or outer.kind is not ForKind.SERIAL or as_int(outer.min) != 0:
            msg = f"loop {outer.loop_var.name} must be serial, from 0, holding only the next loop"
            raise ScheduleError(_P, msg, func, outer)
    doms = {v: iv.dom.extent for iv, v in zip(blk.iter_vars, realize.iter_values)}
    analyzer = Analyzer()
    for lp in above:
        if not analyzer.can_prove_equal(lp.extent, doms[lp.loop_var]):
            msg = f"loop {lp.loop_var.name} does not cover its variable's domain exactly"
            raise ScheduleError(_P, msg, func, lp)
    return above


def _invert(
    outputs: list[PrimExpr], blk: Block, func: PrimFunc
) -> tuple[list[IterVar], dict[Var, PrimExpr]]:
    """The new iteration variables and each old variable in terms of them."""
    by_var = {iv.var: iv for iv in blk.iter_vars}
    extent = {iv.var: as_int(iv.dom.extent) for iv in blk.iter_vars}  # None: symbolic (a batch)
    if any(as_int(iv.dom.min) != 0 for iv in blk.iter_vars):
        raise ScheduleError(_P, f"block {blk.name_hint} has an offset domain", func, blk)
    inverse: dict[Var, PrimExpr] = {}
    new_vars: list[IterVar] = []
    splits: dict[Var, dict[type, tuple[Var, int]]] = {}
    for e in outputs:
        if isinstance(e, FloorDiv | FloorMod) and isinstance(e.a, Var) and e.a in extent:
            new_vars.append(_split_part(e, extent, by_var, splits, blk, func))
            continue
        chain = _radix_chain(e, extent, blk, func) if linear(e) is not None else _symbolic_chain(e, by_var, blk, func)
        kinds = {by_var[v].iter_type for v, _ in chain}
        if len(kinds) != 1:
            msg = f"{e.script()} fuses spatial and reduction variables"
            raise ScheduleError(_P, msg, func, blk)
        name = "_".join(v.name for v, _ in chain)
        top = chain[0][0]
        scale, dom = chain[0][1], by_var[top].dom.extent
        if extent[top] is not None and isinstance(scale, int):
            total: int | PrimExpr = scale * extent[top]
        else:  # a symbolic extent or coefficient (a row of symbolic width)
            total = dom if as_int(const(scale, top.dtype)) == 1 else simplify(const(scale, top.dtype) * dom)
        new = Var(name, chain[0][0].dtype)
        new_vars.append(IterVar(new, Range.from_min_extent(const(0, new.dtype), total), kinds.pop()))
        for k, (v, coef) in enumerate(chain):
            if v in inverse:
                raise ScheduleError(_P, f"the index map uses variable {v.name} twice", func, blk)
            value: PrimExpr = new if as_int(const(coef, new.dtype)) == 1 else new // coef
            size = extent[v] if extent[v] is not None else by_var[v].dom.extent
            inverse[v] = value if k == 0 else value % size  # type: ignore[operator]
    for v, parts in splits.items():
        if set(parts) != {FloorDiv, FloorMod} or v in inverse:
            msg = f"the index map must use variable {v.name} exactly as {v.name} // c and {v.name} % c"
            raise ScheduleError(_P, msg, func, blk)
        (hi, c), (lo, _) = parts[FloorDiv], parts[FloorMod]
        inverse[v] = hi * c + lo
    for v, e in extent.items():
        if v in inverse:
            continue
        if e != 1:
            raise ScheduleError(_P, f"the index map drops variable {v.name}", func, blk)
        inverse[v] = const(0, v.dtype)
    return new_vars, inverse


def _split_part(e: PrimExpr, extent: dict[Var, int | None], by_var: dict[Var, IterVar],
                splits: dict[Var, dict[type, tuple[Var, int]]], blk: Block, func: PrimFunc) -> IterVar:
    """The new variable of an output ``v // c`` (extent `e / c`) or ``v % c`` (extent `c`),
    recorded in `splits` so that `v` is rebuilt as ``hi * c + lo``."""
    v, c = e.a, as_int(e.b)
    if c is None or c <= 0 or extent[v] is None or extent[v] % c:  # type: ignore[operator]
        msg = f"{e.script()}: the split factor must be a constant dividing {v.name}'s extent {extent[v]}"
        raise ScheduleError(_P, msg, func, blk)
    parts = splits.setdefault(v, {})
    other = parts.get(FloorMod if type(e) is FloorDiv else FloorDiv)
    if type(e) in parts or (other is not None and other[1] != c):
        raise ScheduleError(_P, f"variable {v.name} is split twice or by two factors", func, blk)
    size = extent[v] // c if type(e) is FloorDiv else c  # type: ignore[operator]
    new = Var(f"{v.name}_{'o' if type(e) is FloorDiv else 'i'}", v.dtype)
    parts[type(e)] = (new, c)
    return IterVar(new, Range.from_min_extent(const(0, new.dtype), const(size, new.dtype)),
                   by_var[v].iter_type)


def _radix_chain(
    e: PrimExpr, extent: dict[Var, int | None], blk: Block, func: PrimFunc
) -> list[tuple[Var, int]]:
    """`[(v, coefficient)]` of `e` = ``sum(c * v)`` over non-unit variables (or `e`'s one
    unit variable), largest
    coefficient first, checked to be a mixed-radix number (each coefficient the next one's
    times that one's extent, the last 1); raise otherwise."""
    lin = linear(e)
    bad = f"{e.script()} is not one variable or a mixed-radix fusion of the block's variables"
    if lin is None or lin[1] != 0 or any(v not in extent for v in lin[0]):
        raise ScheduleError(_P, bad, func, blk)
    chain = sorted(((v, c) for v, c in lin[0].items() if extent[v] != 1), key=lambda t: -t[1])
    if not chain and list(lin[0].values()) == [1]:  # a unit variable kept as it is
        chain = list(lin[0].items())
    if not chain or chain[-1][1] != 1:
        raise ScheduleError(_P, bad, func, blk)
    for (_, c_hi), (v_lo, c_lo) in zip(chain, chain[1:]):
        if extent[v_lo] is None or c_hi != c_lo * extent[v_lo]:  # type: ignore[operator]
            raise ScheduleError(_P, bad, func, blk)
    return chain


def _symbolic_chain(
    e: PrimExpr, by_var: dict[Var, IterVar], blk: Block, func: PrimFunc
) -> list[tuple[Var, PrimExpr]]:
    """`_radix_chain` of a fusion with symbolic coefficients, ``y * W + x`` for `x` of
    extent `W`: each coefficient proved to be the next one's times that one's extent."""
    bad = f"{e.script()} is not one variable or a mixed-radix fusion of the block's variables"
    terms = linear_terms(e, set(by_var))
    if terms is None or len({v for v, _ in terms}) != len(terms):
        raise ScheduleError(_P, bad, func, blk)
    terms = [(v, c) for v, c in terms if as_int(by_var[v].dom.extent) != 1]
    chain = mixed_radix(terms, lambda v: by_var[v].dom.extent)
    if chain is None:
        raise ScheduleError(_P, bad, func, blk)
    return chain[::-1]


class _SimplifyIndices(StmtExprMutator):
    """Simplify every buffer index over the new variables' domains (``(f // 6) * 6 + f % 6``
    becomes ``f``); unit variables are left out, so that they stay variables."""

    def __init__(self, doms: dict[Var, Range]) -> None:
        super().__init__()
        self.doms = doms

    def _indices(self, indices: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
        return tuple(simplify(i, self.doms) for i in indices)

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        load = self._mutate_fields(load)
        return load.replace(indices=self._indices(load.indices))

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        store = self._mutate_fields(store)
        return store.replace(indices=self._indices(store.indices))
