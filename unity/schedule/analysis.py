"""Block and loop analysis for schedule primitives: scopes, bindings, regions, bounds.

Example:
    >>> from unity import tir
    >>> i, j = tir.Var("i"), tir.Var("j")
    >>> linear(i * 8 + j + 3)[1]
    3
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from unity.ir import dtype as dt
from unity.schedule.tree import children, walk
from unity.tir.buffer import Buffer, BufferRegion
from unity.tir.expr import (
    Add,
    BufferLoad,
    Cast,
    IntImm,
    IterType,
    Mul,
    PrimExpr,
    Range,
    Sub,
    Var,
    const,
    max_value_of,
    min_value_of,
)  # fmt: skip
from unity.tir.functor import StmtExprVisitor, post_order_visit
from unity.tir.stmt import Block, BlockRealize, BufferStore, For, Stmt


def simplify(expr: PrimExpr, doms: Mapping[Var, Range] | None = None) -> PrimExpr:
    """Simplify with `unity.tir.arith.Analyzer` when it is available (else return `expr`).

    Example:
        >>> simplify(tir.const(3)).value  # doctest: +SKIP
        3
    """
    try:
        from unity.tir.arith import Analyzer
    except Exception:  # noqa: BLE001 - the simplifier is optional; unsimplified is still correct
        return expr
    ana = Analyzer()
    for var, dom in (doms or {}).items():
        ana.bind(var, dom)
    return ana.simplify(expr)


def as_int(expr: PrimExpr) -> int | None:
    """The value of a constant integer expression, else None.

    Example:
        >>> as_int(tir.const(4))
        4
    """
    if isinstance(expr, IntImm):
        return expr.value
    lin = linear(expr)
    if lin is not None and not lin[0]:
        return lin[1]
    return None


def linear(expr: PrimExpr) -> tuple[dict[Var, int], int] | None:
    """Write `expr` as `sum(c * v) + c0` with integer constants, or None if it is not.

    Integer casts that keep every value (int32 to int64) are seen through.

    Example:
        >>> coeffs, c0 = linear(tir.Var("i") * 2 - 1)
        >>> list(coeffs.values()), c0
        ([2], -1)
        >>> y, r = tir.Var("y", "int64"), tir.Var("r", "int32")
        >>> sorted(c for c in linear(y + tir.Cast("int64", r * 3))[0].values())
        [1, 3]
        >>> linear(tir.Cast("int32", y)) is None  # narrowing: values may wrap
        True
    """
    if isinstance(expr, IntImm):
        return {}, expr.value
    if isinstance(expr, Var):
        return {expr: 1}, 0
    if isinstance(expr, Add | Sub):
        a, b = linear(expr.a), linear(expr.b)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(expr, Add) else -1
        coeffs = dict(a[0])
        for v, c in b[0].items():
            coeffs[v] = coeffs.get(v, 0) + sign * c
        return {v: c for v, c in coeffs.items() if c}, a[1] + sign * b[1]
    if isinstance(expr, Mul):
        a, b = linear(expr.a), linear(expr.b)
        if a is None or b is None or (a[0] and b[0]):
            return None
        (coeffs, c0), k = (a, b[1]) if not b[0] else (b, a[1])
        return {v: c * k for v, c in coeffs.items() if c * k}, c0 * k
    if isinstance(expr, Cast) and _widening(expr):  # an int32 kernel tap in int64 indices
        return linear(expr.value)
    return None


def _widening(cast: Cast) -> bool:
    """Whether `cast` takes an integer to an integer type at least as wide (values kept)."""
    source, target = cast.value.dtype, cast.dtype
    return dt.is_int(source) and dt.is_int(target) and dt.bits(target) >= dt.bits(source)


def linear_terms(expr: PrimExpr, over: set[Var]) -> list[tuple[Var, PrimExpr]] | None:
    """Write `expr` as ``sum(v * c_v)`` over variables of `over`, each coefficient `c_v` an
    expression free of them (a symbolic row width), or None if it is not.

    Example:
        >>> y, x, w = tir.Var("y"), tir.Var("x"), tir.Var("w")
        >>> [(v.name, c.script()) for v, c in linear_terms(y * w + x, {y, x})]
        [('y', 'w'), ('x', '1')]
    """
    if isinstance(expr, Var):
        return [(expr, const(1, expr.dtype))] if expr in over else None
    if isinstance(expr, Add):
        a, b = linear_terms(expr.a, over), linear_terms(expr.b, over)
        return None if a is None or b is None else a + b
    if isinstance(expr, Mul):
        for var, coef in ((expr.a, expr.b), (expr.b, expr.a)):
            if isinstance(var, Var) and var in over and not (used_vars(coef) & over):
                return [(var, coef)]
    return None


def mixed_radix(
    terms: list[tuple[Var, PrimExpr]], extent_of: Callable[[Var], PrimExpr]
) -> list[tuple[Var, PrimExpr]] | None:
    """`terms` (`linear_terms`) lowest digit first when they make a mixed-radix number:
    the lowest coefficient 1, each next one the previous times that variable's extent
    (`extent_of`), proved with the analyzer; else None.

    Example:
        >>> y, x, w = tir.Var("y"), tir.Var("x"), tir.Var("w")
        >>> [v.name for v, _ in mixed_radix([(y, w), (x, tir.const(1))], lambda v: w)]
        ['x', 'y']
    """
    from unity.tir.arith import Analyzer

    if not terms:
        return None
    analyzer = Analyzer()
    chain: list[tuple[Var, PrimExpr]] = []
    rest, step = list(terms), const(1, terms[0][1].dtype)
    while rest:
        digit = next((t for t in rest if analyzer.can_prove_equal(t[1], step)), None)
        if digit is None:
            return None
        chain.append(digit)
        rest.remove(digit)
        step = digit[1] * extent_of(digit[0])
    return chain


def const_bound(expr: PrimExpr, doms: Mapping[Var, tuple[int, int]]) -> tuple[int, int] | None:
    """Inclusive integer bounds of `expr` when each var lies in its `(lo, hi)`, else None.

    Handles `+ - *`, and `//` / `%` by a positive constant.

    Example:
        >>> i = tir.Var("i")
        >>> const_bound(i // 4, {i: (0, 15)})
        (0, 3)
    """
    from unity.tir.expr import FloorDiv, FloorMod

    if isinstance(expr, IntImm):
        return expr.value, expr.value
    if isinstance(expr, Var):
        return doms.get(expr)
    if not isinstance(expr, Add | Sub | Mul | FloorDiv | FloorMod):
        return None
    a, b = const_bound(expr.a, doms), const_bound(expr.b, doms)
    if a is None or b is None:
        return None
    if isinstance(expr, Add):
        return a[0] + b[0], a[1] + b[1]
    if isinstance(expr, Sub):
        return a[0] - b[1], a[1] - b[0]
    if isinstance(expr, Mul):
        corners = [x * y for x in a for y in b]
        return min(corners), max(corners)
    if b[0] != b[1] or b[0] <= 0:
        return None
    if isinstance(expr, FloorDiv):
        return a[0] // b[0], a[1] // b[0]
    return (a[0] % b[0], a[1] % b[0]) if a[0] // b[0] == a[1] // b[0] else (0, b[0] - 1)


def is_quasi_affine(expr: PrimExpr, loops: set[Var] | None = None) -> bool:
    """Whether `expr` is built from vars and constants by `+ -`, `*` by a constant, and
    `//` / `%` by a positive constant (the bindings split and fuse produce), and integer
    casts of such.  Given `loops`, a part that uses none of them counts as a constant
    (the rows ``y * W`` of a symbolic width `W`).

    Example:
        >>> i, j, w = tir.Var("i"), tir.Var("j"), tir.Var("w")
        >>> is_quasi_affine(i // 4 * 8 + j % 4), is_quasi_affine(i * j)
        (True, False)
        >>> is_quasi_affine(i * w + j), is_quasi_affine(i * w + j, {i, j})
        (False, True)
    """
    from unity.tir.expr import Cast, FloorDiv, FloorMod

    def constant(e: PrimExpr) -> bool:
        return as_int(e) is not None or (loops is not None and not used_vars(e) & loops)

    if isinstance(expr, IntImm | Var) or (loops is not None and constant(expr)):
        return True
    if isinstance(expr, Add | Sub):
        return is_quasi_affine(expr.a, loops) and is_quasi_affine(expr.b, loops)
    if isinstance(expr, Mul):
        return (constant(expr.a) or constant(expr.b)) and all(
            is_quasi_affine(e, loops) for e in (expr.a, expr.b)
        )
    if isinstance(expr, FloorDiv | FloorMod):
        k = as_int(expr.b)
        return k is not None and k > 0 and is_quasi_affine(expr.a, loops)
    if isinstance(expr, Cast):
        return dt.is_integer(expr.dtype) and is_quasi_affine(expr.value, loops)
    return False


def used_vars(node: object) -> set[Var]:
    """Every `Var` used in an expression or statement, or in a tuple / list of them (a
    buffer access's indices, a block's bindings).

    Example:
        >>> sorted(v.name for v in used_vars(tir.Var("i") + tir.Var("j")))
        ['i', 'j']
        >>> sorted(v.name for v in used_vars((tir.Var("i"), tir.Var("k") * 2)))
        ['i', 'k']
    """
    out: set[Var] = set()
    for item in node if isinstance(node, tuple | list) else (node,):
        post_order_visit(item, lambda n: out.add(n) if isinstance(n, Var) else None)  # type: ignore[arg-type]
    return out


def child_realizes(stmt: Stmt) -> list[BlockRealize]:
    """The block realizes at or under `stmt` that are not nested inside another block.

    Example:
        >>> [r.block.name_hint for r in child_realizes(root_block.body)]  # doctest: +SKIP
        ['B', 'C']
    """
    out: list[BlockRealize] = []
    stack = [stmt]
    while stack:
        s = stack.pop()
        if isinstance(s, BlockRealize):
            out.append(s)
        else:
            stack.extend(reversed(children(s)))
    return out


def bound(expr: PrimExpr, doms: Mapping[Var, Range]) -> tuple[PrimExpr, PrimExpr] | None:
    """`(min, max)` of `expr` as the vars in `doms` range over their domains.

    Works on linear expressions whose other terms are kept symbolic; None otherwise.

    Example:
        >>> i = tir.Var("i")
        >>> [as_int(e) for e in bound(i * 2 + 1, {i: tir.Range.from_min_extent(0, 4)})]
        [1, 7]
    """
    lin = linear(expr)
    if lin is None:
        if not used_vars(expr) & set(doms):
            return expr, expr
        return _bound_terms(expr, doms)
    coeffs, c0 = lin
    lo: PrimExpr = const(c0, expr.dtype)
    hi: PrimExpr = const(c0, expr.dtype)
    for v, c in coeffs.items():
        dom = doms.get(v)
        if dom is None:
            term = v * c if c != 1 else v
            lo, hi = _add(lo, term), _add(hi, term)
            continue
        dmin, dmax = dom.min, dom.min + dom.extent - 1
        a, b = (dmin, dmax) if c > 0 else (dmax, dmin)
        lo, hi = _add(lo, _scale(a, c)), _add(hi, _scale(b, c))
    return simplify(lo), simplify(hi)


def _bound_terms(expr: PrimExpr, doms: Mapping[Var, Range]) -> tuple[PrimExpr, PrimExpr] | None:
    """Interval arithmetic over `+`, `-`, and `*`, `//`, `%` by positive constants, for an
    expression whose non-linear parts (``f % 2`` of an outer fused loop) are outer terms."""
    from unity.tir.expr import Add, FloorDiv, FloorMod, Mul, Sub

    if isinstance(expr, Add | Sub):
        a, b = bound(expr.a, doms), bound(expr.b, doms)
        if a is None or b is None:
            return None
        if isinstance(expr, Add):
            return simplify(_add(a[0], b[0])), simplify(_add(a[1], b[1]))
        return simplify(a[0] - b[1]), simplify(a[1] - b[0])
    if isinstance(expr, Mul):
        return _bound_product(expr, doms)
    k = as_int(getattr(expr, "b", None)) if isinstance(expr, FloorDiv | FloorMod) else None
    if k is None or k <= 0:
        return None
    a = bound(expr.a, doms)
    if a is None:
        return None
    if isinstance(expr, FloorDiv):
        return simplify(a[0] // k), simplify(a[1] // k)
    return const(0, expr.dtype), const(k - 1, expr.dtype)


def _bound_product(expr: PrimExpr, doms: Mapping[Var, Range]) -> tuple[PrimExpr, PrimExpr] | None:
    """Bounds of ``a * f`` with `f` free of the varying vars: a positive constant, a
    non-negative expression (a size: rows of a symbolic width), or any factor of a fixed
    `a`."""
    from unity.tir.arith import Analyzer

    for a, f in ((expr.a, expr.b), (expr.b, expr.a)):  # type: ignore[attr-defined]  # a Mul
        if used_vars(f) & set(doms):
            continue
        span = bound(a, doms)
        if span is None:
            return None
        k = as_int(f)
        if k is not None and k > 0:
            return simplify(_scale(span[0], k)), simplify(_scale(span[1], k))
        if same_expr(span[0], span[1]) or (k is None and Analyzer().can_prove(f >= 0)):
            return simplify(span[0] * f), simplify(span[1] * f)
        return None
    return None


def _scale(e: PrimExpr, c: int) -> PrimExpr:
    k = as_int(e)
    return const(k * c, e.dtype) if k is not None else (e if c == 1 else e * c)


def _add(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    ka, kb = as_int(a), as_int(b)
    if ka is not None and kb is not None:
        return const(ka + kb, a.dtype)
    if ka == 0:
        return b
    if kb == 0:
        return a
    return a + b


def region_of_accesses(
    buffer: Buffer, accesses: list[tuple[PrimExpr, ...]], doms: Mapping[Var, Range]
) -> BufferRegion | None:
    """The hull of `buffer[idx]` for each index tuple, as the vars in `doms` vary.

    Example:
        >>> region_of_accesses(A, [(i,)], {i: tir.Range.from_min_extent(0, 4)})  # doctest: +SKIP
    """
    ranges: list[Range] = []
    for dim in range(buffer.ndim):
        los, his = [], []
        for idx in accesses:
            b = bound(idx[dim], doms)
            if b is None:
                return None
            los.append(b[0])
            his.append(b[1])
        lo = _fold(los, min_value_of)
        hi = _fold(his, max_value_of)
        if same_expr(lo, hi):
            ranges.append(Range(lo, const(1, lo.dtype)))
        else:
            ranges.append(Range(lo, simplify(_add(_add(hi, _neg(lo)), const(1, lo.dtype)))))
    return BufferRegion(buffer, tuple(ranges))


def _neg(e: PrimExpr) -> PrimExpr:
    k = as_int(e)
    return const(-k, e.dtype) if k is not None else e * -1


def _fold(items: list[PrimExpr], fn) -> PrimExpr:
    unique: list[PrimExpr] = []
    for e in items:
        if not any(same_expr(e, u) for u in unique):
            unique.append(e)
    consts = [as_int(e) for e in unique]
    if all(c is not None for c in consts):
        pick = min if fn is min_value_of else max
        return const(pick(consts), unique[0].dtype)  # type: ignore[type-var]
    out = unique[0]
    for e in unique[1:]:
        out = fn(out, e)
    return out


def same_expr(a: PrimExpr, b: PrimExpr) -> bool:
    """Whether `a` and `b` are the same value: equal linear forms, else structurally equal
    (free variables compared by identity).

    Example:
        >>> i = tir.Var("i")
        >>> same_expr(i * 2 + 1, 1 + i + i), same_expr(i, tir.Var("i"))
        (True, False)
    """
    la, lb = linear(a), linear(b)
    if la is not None and lb is not None:
        return la == lb
    if a is b:
        return True
    from unity.ir.structural import structural_equal

    return structural_equal(a, b, map_free_vars=False)


class _Accesses(StmtExprVisitor):
    def __init__(self) -> None:
        self.reads: dict[Buffer, list[tuple[PrimExpr, ...]]] = {}
        self.writes: dict[Buffer, list[tuple[PrimExpr, ...]]] = {}

    def visit_buffer_load_(self, load: BufferLoad) -> None:
        self.reads.setdefault(load.buffer, []).append(load.indices)
        self.visit_prim_expr_(load)

    def visit_buffer_store_(self, store: BufferStore) -> None:
        self.writes.setdefault(store.buffer, []).append(store.indices)
        self.visit_stmt_(store)

    def visit_block_realize_(self, realize: BlockRealize) -> None:
        # A nested block contributes its declared regions, seen from outside its iter vars.
        from unity.tir.functor import substitute

        bmap = binding_map(realize)
        for regions, table in (
            (realize.block.reads, self.reads),
            (realize.block.writes, self.writes),
        ):
            for r in regions:
                lo = tuple(substitute(rng.min, bmap) for rng in r.region)
                hi = tuple(
                    substitute(_add(rng.min, _add(rng.extent, const(-1, rng.extent.dtype))), bmap)
                    for rng in r.region
                )
                table.setdefault(r.buffer, []).extend((lo, hi))


def infer_regions(block: Block, changed: set[Buffer] | None = None
                  ) -> tuple[tuple[BufferRegion, ...], tuple[BufferRegion, ...]]:  # fmt: skip
    """Recompute a block's read and write regions from the accesses in its body and init.

    Buffers the block allocates are left out; a reduction block (one with an init)
    does not list its own output among its reads, as `te.create_prim_func` does.  With
    `changed`, only the accesses of those buffers changed: the block's regions of the
    others are kept (an inline into a concat of 90 parts re-derived 90 regions of long
    index expressions each time).

    Example:
        >>> reads, writes = infer_regions(block)  # doctest: +SKIP
    """
    acc = _Accesses()
    if block.init is not None:
        acc.visit_stmt(block.init)
    acc.visit_stmt(block.body)
    local = set(block.alloc_buffers)
    doms = _inner_loop_doms(block)

    def regions(table: dict[Buffer, list[tuple[PrimExpr, ...]]], old: tuple[BufferRegion, ...]
                ) -> tuple[BufferRegion, ...]:  # fmt: skip
        kept = {} if changed is None else {r.buffer: r for r in old if r.buffer not in changed}
        out = []
        for buf, accesses in table.items():
            if buf in local:
                continue
            region = kept.get(buf) or region_of_accesses(buf, accesses, doms)
            out.append(region if region is not None else BufferRegion.full(buf))
        return tuple(out)

    writes = regions(acc.writes, block.writes)
    if block.init is not None:  # a reduction's self-read of its output is implied (as in TE)
        for buf in acc.writes:
            acc.reads.pop(buf, None)
    reads = regions(acc.reads, block.reads)
    return reads, writes


def _inner_loop_doms(block: Block) -> dict[Var, Range]:
    return {s.loop_var: Range(s.min, s.extent) for s in walk(block.body) if isinstance(s, For)}


def with_regions(block: Block, changed: set[Buffer] | None = None) -> Block:
    """`block` with its reads/writes recomputed by `infer_regions` (those of the
    `changed` buffers only, when given).

    Example:
        >>> with_regions(block).reads  # doctest: +SKIP
    """
    reads, writes = infer_regions(block, changed)
    return block.replace(reads=reads, writes=writes)


def binding_map(realize: BlockRealize) -> dict[Var, PrimExpr]:
    """Map each block iteration var to the value it is bound to.

    Example:
        >>> binding_map(realize)[vi]  # doctest: +SKIP
        i
    """
    return {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}


def reduction_loop_vars(realize: BlockRealize) -> set[Var]:
    """Loop vars used in the bindings of the reduction (or opaque) iter vars of a block.

    Example:
        >>> reduction_loop_vars(matmul_realize)  # doctest: +SKIP
        {k}
    """
    out: set[Var] = set()
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if iv.iter_type is not IterType.SPATIAL:
            out |= used_vars(value)
    return out


def buffers_written(realizes: Iterable[BlockRealize]) -> set[Buffer]:
    """Buffers written by any of the blocks.

    Example:
        >>> buffers_written([realize])  # doctest: +SKIP
    """
    return {r.buffer for br in realizes for r in br.block.writes}


def buffers_read(realizes: Iterable[BlockRealize]) -> set[Buffer]:
    """Buffers read by any of the blocks.

    Example:
        >>> buffers_read([realize])  # doctest: +SKIP
    """
    return {r.buffer for br in realizes for r in br.block.reads}
