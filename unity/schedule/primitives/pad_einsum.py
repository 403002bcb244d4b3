"""`pad_einsum`: pad an einsum block's iteration domain to multiples of `padding`.

A symbolic extent `n` pads to ``(n + p - 1) // p * p`` (a sequence length: the padded
buffers are as long as that, the copies guard on `n`).

Inputs are copied into zero-padded buffers (one `if_then_else` store per element, so
that `compute_inline` can fold the copy into a consumer, e.g. a shared-memory tile), the
block runs over the padded domain into a padded output, and a final block copies the
valid part back.

Before::

    for i, j, k in T.grid(6, 6, 5):
        with T.block("C"):
            ...  C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

After ``sch.pad_einsum(c, [4, 4, 4])``::

    A_pad[v0, v1] = T.if_then_else(v0 < 6 and v1 < 5, A[v0, v1], 0)  # (8, 8)
    B_pad[ax0, ax1] = ...                                           # (8, 8)
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            ...  C_pad[vi, vj] = C_pad[vi, vj] + A_pad[vi, vk] * B_pad[vk, vj]
    C[v0, v1] = C_pad[v0, v1]                                        # (6, 6)
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from unity.schedule.analysis import as_int, same_expr, with_regions
from unity.schedule.error import ScheduleError
from unity.schedule.primitives.cache import _check_no_reader_inside
from unity.schedule.scope import alloc_in_root, top_level, with_root_block
from unity.schedule.state import BlockRV, ScheduleState
from unity.schedule.tree import find_path, replace_stmts
from unity.tir.buffer import Buffer, BufferRegion, decl_buffer
from unity.tir.expr import (
    Add,
    BufferLoad,
    Cast,
    IterType,
    IterVar,
    Mul,
    PrimExpr,
    Range,
    Select,
    Var,
    const,
    logical_and,
)
from unity.tir.functor import StmtExprVisitor, substitute
from unity.tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, Stmt, seq

P = "pad_einsum"


def pad_einsum(state: ScheduleState, block: BlockRV, padding: Sequence[int]) -> None:
    """Pad each iteration variable's extent of an einsum block up to a multiple of `padding`.

    Raises:
        ScheduleError: wrong number of paddings, a domain not from 0, bindings other
            than one loop per iteration variable, accesses other than plain iteration
            variables, or a reduction that is not a sum (padding with zeros would
            change it).

    Example:
        >>> sch.pad_einsum(sch.get_block("C"), [32, 32, 32])  # doctest: +SKIP
    """
    func_name, func, path = state.resolve_block(block, P)
    func = with_root_block(func)
    path = find_path(func.body, lambda s: s is path[-1])
    realize: BlockRealize = path[-1]  # type: ignore[index]
    blk = realize.block
    if len(padding) != len(blk.iter_vars):
        msg = f"block {blk.name_hint} has {len(blk.iter_vars)} iteration variables; got paddings {list(padding)}"
        raise ScheduleError(P, msg, func, blk)
    for iv, p in zip(blk.iter_vars, padding):
        if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p <= 0:
            msg = f"padding {p!r} of iteration variable {iv.var.name} is not a positive int"
            raise ScheduleError(P, msg, func, blk)
    loops = _loops_of(path, realize, func)
    if blk.init is not None and not (
        isinstance(blk.body, BufferStore) and isinstance(blk.body.value, Add)
    ):
        raise ScheduleError(P, f"block {blk.name_hint} is a reduction other than a sum", func, blk)
    new_ext: dict[Var, PrimExpr] = {}
    for iv, p in zip(blk.iter_vars, padding):
        if as_int(iv.dom.min) != 0:
            raise ScheduleError(P, f"iteration variable {iv.var.name} needs a domain from 0", func, blk)
        new_ext[iv.var] = _padded(iv.dom.extent, p)
        grown = new_ext[iv.var] is not iv.dom.extent and not same_expr(new_ext[iv.var], iv.dom.extent)
        if blk.init is not None and iv.iter_type is IterType.REDUCE and grown:
            _check_zero_when_padded(blk, iv.var, func)
    accesses = _accesses(blk, func)
    shapes = {
        buf: [_cast(new_ext[v], buf.shape[d].dtype) for d, v in enumerate(idx)]
        for buf, idx in accesses.items()
    }
    padded = {buf: decl_buffer(shape, buf.dtype, f"{buf.name}_pad") for buf, shape in shapes.items()
              if any(a is not b and not same_expr(a, b) for a, b in zip(shape, buf.shape))}  # fmt: skip
    if not padded:
        return
    written = {r.buffer for r in blk.writes}
    new_iters = tuple(
        iv.replace(dom=Range(iv.dom.min, _cast(new_ext[iv.var], iv.dom.extent.dtype)))
        for iv in blk.iter_vars
    )
    new_blk = with_regions(substitute(blk.replace(iter_vars=new_iters), {}, padded))
    nest = _rebuild(loops, realize.replace(block=new_blk), new_ext)
    before = [
        _copy(buf, pad, state.unique_block_name(func, pad.name), True)
        for buf, pad in padded.items()
        if buf not in written
    ]
    after = [
        _copy(pad, buf, state.unique_block_name(func, f"{buf.name}_unpad"), False)
        for buf, pad in padded.items()
        if buf in written
    ]
    anchor = top_level(path)  # type: ignore[arg-type]
    for buf in written:
        _check_no_reader_inside(anchor, realize, buf, func, P)
    new_anchor = replace_stmts(anchor, {loops[0][0]: nest})
    body = replace_stmts(func.body, {anchor: seq(*before, new_anchor, *after)})
    state.commit(func_name, alloc_in_root(func.replace(body=body), list(padded.values())))


def _check_zero_when_padded(blk: Block, var: Var, func: object) -> None:
    """The sum's added term must vanish where reduction variable `var` runs past its
    extent: a product with a factor read at `var` from an input (zero-padded there).
    ``exp(A[i, k] - M[i])`` would add ``exp(0) = 1`` per padded `k`."""
    store: BufferStore = blk.body  # type: ignore[assignment]  # checked: a sum
    add: Add = store.value  # type: ignore[assignment]
    acc = [t for t in (add.a, add.b) if isinstance(t, BufferLoad) and t.buffer is store.buffer]
    term = add.b if acc and acc[0] is add.a else add.a
    factors, stack = [], [term]
    while stack:
        e = stack.pop()
        if isinstance(e, Mul):
            stack += [e.a, e.b]
        elif isinstance(e, Cast):
            stack.append(e.value)
        else:
            factors.append(e)
    if not any(isinstance(f, BufferLoad) and f.buffer is not store.buffer
               and any(i is var for i in f.indices) for f in factors):  # fmt: skip
        msg = (f"block {blk.name_hint} adds a term that is not zero where the reduction variable "
               f"{var.name} is padded (a product with a factor read at {var.name} would be): "
               "padding it with zeros would change the sum")
        raise ScheduleError(P, msg, func, blk)


def _loops_of(path: list, realize: BlockRealize, func: object) -> list[tuple[For, IterVar]]:
    blk = realize.block
    by_var = {s.loop_var: s for s in path if isinstance(s, For)}
    out = []
    for iv, value in zip(blk.iter_vars, realize.iter_values):
        if not isinstance(value, Var) or value not in by_var:
            raise ScheduleError(
                P, f"iteration variable {iv.var.name} is not bound to a single loop", func, blk
            )
        out.append((by_var[value], iv))
    chain = [s for s in path if isinstance(s, For)][-len(out) :]
    if {id(c) for c in chain} != {id(lp) for lp, _ in out} or any(
        c.body is not n for c, n in zip(chain, chain[1:] + [realize])
    ):
        raise ScheduleError(
            P, f"the loops of block {blk.name_hint} must be perfectly nested around it", func, blk
        )
    return sorted(out, key=lambda t: chain.index(t[0]))


def _padded(extent: PrimExpr, p: int) -> PrimExpr:
    """`extent` rounded up to a multiple of `p` (``(n + p - 1) // p * p`` when symbolic)."""
    ext = as_int(extent)
    if ext is not None:
        return const(-(-ext // p) * p, extent.dtype)
    if p == 1:
        return extent
    return (extent + (p - 1)) // p * p


def _cast(expr: PrimExpr, dtype: str) -> PrimExpr:
    if expr.dtype == dtype:
        return expr
    value = as_int(expr)
    return const(value, dtype) if value is not None else expr.astype(dtype)


def _rebuild(loops: list[tuple[For, IterVar]], inner: Stmt, new_ext: dict[Var, PrimExpr]) -> Stmt:
    for lp, iv in reversed(loops):
        inner = lp.replace(extent=_cast(new_ext[iv.var], lp.extent.dtype), body=inner)
    return inner


class _Collect(StmtExprVisitor):
    def __init__(self) -> None:
        self.found: dict[Buffer, list[tuple[PrimExpr, ...]]] = {}

    def visit_buffer_load_(self, load: BufferLoad) -> None:
        self.found.setdefault(load.buffer, []).append(load.indices)
        self.visit_prim_expr_(load)

    def visit_buffer_store_(self, store: BufferStore) -> None:
        self.found.setdefault(store.buffer, []).append(store.indices)
        self.visit_stmt_(store)


def _accesses(blk: Block, func: object) -> dict[Buffer, tuple[Var, ...]]:
    col = _Collect()
    col.visit_stmt(blk.body)
    if blk.init is not None:
        col.visit_stmt(blk.init)
    ivars = {iv.var for iv in blk.iter_vars}
    out = {}
    for buf, idxs in col.found.items():
        first = idxs[0]
        if not all(isinstance(i, Var) and i in ivars for i in first) or any(
            any(a is not b for a, b in zip(first, other)) for other in idxs
        ):
            raise ScheduleError(
                P,
                f"block {blk.name_hint} accesses {buf.name} other than by plain iteration variables",
                func,
                blk,
            )
        out[buf] = first
    return out


def _copy(src: Buffer, dst: Buffer, name: str, guard: bool) -> Stmt:
    """`dst[v] = src[v]` over `dst`'s shape (over `src`'s when unpadding), zero outside `src`."""
    shape = dst.shape
    axes = [Var(f"ax{d}", dim.dtype) for d, dim in enumerate(shape)]
    ivars = [
        IterVar(Var(f"v{d}", dim.dtype), Range(const(0, dim.dtype), dim), IterType.SPATIAL)
        for d, dim in enumerate(shape)
    ]
    idx = tuple(iv.var for iv in ivars)
    if guard:
        inside = [v < dim for v, dim in zip(idx, src.shape)]
        cond = inside[0]
        for c in inside[1:]:
            cond = logical_and(cond, c)
        body: Stmt = BufferStore(dst, Select(cond, src[idx], const(0, dst.dtype)), idx)
    else:
        body = BufferStore(dst, src[idx], idx)
    blk = Block(tuple(ivars), (BufferRegion.full(src),) if guard else (BufferRegion.from_point(src, idx),),
                (BufferRegion.from_point(dst, idx),), name, body)  # fmt: skip
    nest: Stmt = BlockRealize(tuple(axes), const(True), blk)
    for ax, dim in zip(reversed(axes), reversed(shape)):
        nest = For(ax, const(0, dim.dtype), dim, ForKind.SERIAL, nest)
    return nest
