"""`split`: one loop becomes a nest of loops whose extents are the factors.

Before::

    for i in T.serial(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi]

After ``sch.split(i, factors=[None, 4])`` (4 does not divide 10: a guard appears)::

    for i_0, i_1 in T.grid(3, 4):
        with T.block("B"):
            vi = T.axis.spatial(10, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < 10)
            B[vi] = A[vi]
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from unity.ir import dtype as dt
from unity.schedule.analysis import _add, as_int, child_realizes, simplify
from unity.schedule.error import ScheduleError
from unity.schedule.state import LoopRV, ScheduleState
from unity.schedule.tree import replace_stmts
from unity.tir.expr import PrimExpr, Var, const, logical_and
from unity.tir.functor import substitute
from unity.tir.stmt import BlockRealize, For, ForKind

Factor = int | PrimExpr | None


def split(state: ScheduleState, loop: LoopRV, factors: Sequence[Factor]) -> list[LoopRV]:
    """Split `loop` into `len(factors)` nested loops (one factor may be `None`: inferred).

    Args:
        state: the schedule state.
        loop: the loop to split.
        factors: the extents of the new loops, outermost first.

    Returns:
        Handles to the new loops, outermost first.

    Raises:
        ScheduleError: more than one `None`, a non-positive factor, or factors whose
            product is smaller than the loop's extent.

    Example:
        >>> io, ii = sch.split(i, factors=[None, 32])  # doctest: +SKIP
    """
    func_name, func, path = state.resolve_loop(loop, "split")
    node: For = path[-1]
    extents = _resolve_factors(list(factors), node, func)
    new_vars = [Var(f"{node.loop_var.name}_{k}", node.loop_var.dtype) for k in range(len(extents))]
    fused: PrimExpr = new_vars[-1]
    stride: PrimExpr = extents[-1]
    for var, ext in zip(reversed(new_vars[:-1]), reversed(extents[:-1])):
        fused = var * stride + fused
        stride = _mul(stride, ext)
    value = fused if as_int(node.min) == 0 else node.min + fused
    body = substitute(node.body, {node.loop_var: value})
    if not _divides(stride, node.extent):
        body = _guard(body, value < _add(node.min, node.extent))
    for var, ext in zip(reversed(new_vars), reversed(extents)):
        body = For(var, const(0, var.dtype), ext, ForKind.SERIAL, body)
    state.commit(func_name, func.replace(body=replace_stmts(func.body, {node: body})))
    return [state.loop_rv(func_name, v) for v in new_vars]


def _resolve_factors(factors: list[Factor], loop: For, func: object) -> list[PrimExpr]:
    if not factors:
        raise ScheduleError("split", "needs at least one factor", func, loop)
    if sum(f is None for f in factors) > 1:
        raise ScheduleError("split", "at most one factor may be None (inferred)", func, loop)
    known: PrimExpr = const(1, loop.extent.dtype)
    for f in factors:
        if f is None:
            continue
        if isinstance(f, bool) or not isinstance(f, (numbers.Integral, PrimExpr)) or (
            isinstance(f, PrimExpr) and not dt.is_integer(f.dtype)
        ):
            kind = getattr(f, "dtype", None) or type(f).__name__
            msg = f"factor {f!r} must be an integer, an integer expression or None, not {kind}"
            raise ScheduleError("split", msg, func, loop)
        k = int(f) if isinstance(f, numbers.Integral) else as_int(f)
        if k is not None and k <= 0:
            raise ScheduleError("split", f"factor {k} is not positive", func, loop)
        known = _mul(known, const(f, loop.extent.dtype))
    out: list[PrimExpr] = []
    for f in factors:
        if f is None:
            out.append(_ceildiv(loop.extent, known))
        else:
            out.append(const(f, loop.extent.dtype))
    total, ext = as_int(_product(out)), as_int(loop.extent)
    if total is not None and ext is not None and total < ext:
        msg = f"the factors {[as_int(e) for e in out]} multiply to {total} < the loop extent {ext}"
        raise ScheduleError("split", msg, func, loop)
    return out


def _product(items: list[PrimExpr]) -> PrimExpr:
    out = items[0]
    for e in items[1:]:
        out = _mul(out, e)
    return out


def _mul(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    ka, kb = as_int(a), as_int(b)
    if ka is not None and kb is not None:
        return const(ka * kb, a.dtype)
    if ka == 1:
        return b
    if kb == 1:
        return a
    return a * b


def _ceildiv(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    ka, kb = as_int(a), as_int(b)
    if ka is not None and kb is not None:
        return const(-(-ka // kb), a.dtype)
    if kb == 1:
        return a
    return simplify((a + (b - 1)) // b)


def _divides(total: PrimExpr, extent: PrimExpr) -> bool:
    kt, ke = as_int(total), as_int(extent)
    if kt is not None and ke is not None:
        return kt == ke
    if total is extent:
        return True
    try:
        from unity.tir.arith import Analyzer
    except ImportError:
        return False
    from unity.tir.expr import eq

    return bool(Analyzer().can_prove(eq(total, extent)))


def _guard(body, cond: PrimExpr):
    mapping = {}
    for realize in child_realizes_incl(body):
        pred = realize.predicate
        new = cond if as_int(pred) == 1 else logical_and(pred, cond)
        mapping[realize] = realize.replace(predicate=new)
    return replace_stmts(body, mapping)


def child_realizes_incl(stmt) -> list[BlockRealize]:
    """Block realizes at or under `stmt` that are not nested in another block.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((8,), name="A")
        >>> func = te.create_prim_func([A, te.compute((8,), lambda i: A[i] + 1.0, name="B")])
        >>> realize = child_realizes_incl(func.body)[0]
        >>> realize.block.name_hint, child_realizes_incl(realize) == [realize]
        ('B', True)
    """
    if isinstance(stmt, BlockRealize):
        return [stmt]
    return child_realizes(stmt)
