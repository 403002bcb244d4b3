"""`tensorize`: replace a loop nest that computes what an intrinsic's `desc` computes by
the intrinsic's `impl`, its buffers bound to the matched regions.

Before (with ``dot_4`` registered for a 4-long dot product)::

    for i, k_0, k_1 in T.grid(8, 2, 4):
        with T.block("C"):
            ...
            C[vi] = C[vi] + A[vi, vk] * B[vk]

After ``sch.tensorize(k_1, "dot_4")``::

    for i, k_0 in T.grid(8, 2):
        with T.block("C_o"):
            vi, vk_0 = T.axis.remap("SR", [i, k_0])
            a = T.match_buffer(A[vi, vk_0 * 4:vk_0 * 4 + 4], (4,))
            b = T.match_buffer(B[vk_0 * 4:vk_0 * 4 + 4], (4,))
            c = T.match_buffer(C[vi:vi + 1], (1,))
            ...  # the body of dot_4's impl
"""

from __future__ import annotations

from unity.schedule.analysis import _add, as_int, binding_map, child_realizes, linear
from unity.schedule.error import ScheduleError
from unity.schedule.primitives.blockize import blockize_loop
from unity.schedule.scope import fresh_like
from unity.schedule.state import LoopRV, ScheduleState
from unity.schedule.tensor_intrin import TensorIntrin
from unity.schedule.tree import replace_stmts
from unity.tir.buffer import Buffer, BufferRegion
from unity.tir.expr import BufferLoad, FloatImm, IntImm, PrimExpr, Range, Var, const
from unity.tir.function import PrimFunc
from unity.tir.functor import child_fields, substitute, uses_var
from unity.tir.stmt import BlockRealize, BufferStore, For, MatchBufferRegion, Stmt

P = "tensorize"


def tensorize(state: ScheduleState, loop: LoopRV, intrin: str) -> None:
    """Blockize `loop` and replace its body by the `impl` of intrinsic `intrin`.

    Raises:
        ScheduleError: the intrinsic is unknown, the loop nest's extents differ from the
            desc's, or its block computes something other than the desc's block.

    Example:
        >>> sch.tensorize(ki, "dot_4")  # doctest: +SKIP
    """
    func_name, func, lpath = state.resolve_loop(loop, P)
    target: For = lpath[-1]
    try:
        ti = TensorIntrin.get(intrin)
    except KeyError as err:
        raise ScheduleError(P, str(err.args[0]), func, target) from None
    realizes = child_realizes(target)
    if len(realizes) != 1:
        raise ScheduleError(
            P, f"loop {target.loop_var.name} must hold exactly one block", func, target
        )
    outer_realize, outer = blockize_loop(state, func, lpath, realizes[0], P)
    nest, inner = _nest(outer.body)
    d_nest, d_inner = _nest(_desc_body(ti.desc))
    if [as_int(lp.extent) for lp in nest] != [as_int(lp.extent) for lp in d_nest] or None in [
        as_int(lp.extent) for lp in nest
    ]:
        msg = f"loop extents {[lp.extent.script() for lp in nest]} do not match intrinsic {intrin}'s {[lp.extent.script() for lp in d_nest]}"
        raise ScheduleError(P, msg, func, target)
    loop_map = {d.loop_var: a.loop_var for d, a in zip(d_nest, nest)}
    pairs = _match(inner, d_inner, loop_map, func, intrin)
    fresh = {b: b.replace(data=fresh_like(b.data)) for b in ti.impl.buffer_params()}
    matches = _match_buffers(ti, pairs, nest, func, intrin, fresh)
    impl_body = substitute(_desc_body(ti.impl), {}, fresh)  # its own buffers at each use
    new_outer = outer.replace(body=impl_body, match_buffers=tuple(matches))
    new = outer_realize.replace(block=new_outer)
    state.commit(func_name, func.replace(body=replace_stmts(func.body, {target: new})))


def _desc_body(func: PrimFunc) -> Stmt:
    body = func.body
    if (
        isinstance(body, BlockRealize)
        and not body.block.iter_vars
        and body.block.name_hint == "root"
    ):
        return body.block.body
    return body


def _nest(stmt: Stmt) -> tuple[list[For], BlockRealize]:
    loops = []
    while isinstance(stmt, For):
        loops.append(stmt)
        stmt = stmt.body
    if not isinstance(stmt, BlockRealize):
        raise ScheduleError(P, "the loop nest must be perfectly nested around one block")
    return loops, stmt


def _match(
    actual: BlockRealize, desc: BlockRealize, loop_map: dict[Var, Var], func: PrimFunc, name: str
) -> list:
    """Walk both blocks in parallel; return `(desc_buf, buf, desc_idx, idx)` per access."""
    pairs: list = []
    amap, dmap = (
        binding_map(actual),
        {k: substitute(v, loop_map) for k, v in binding_map(desc).items()},
    )
    bodies = [(actual.block.body, desc.block.body)]
    if (actual.block.init is None) != (desc.block.init is None):
        raise ScheduleError(
            P, f"the block and intrinsic {name} differ in having an init", func, actual.block
        )
    if actual.block.init is not None:
        bodies.append((actual.block.init, desc.block.init))
    for a, d in bodies:
        if not _same(a, d, pairs, amap, dmap):
            msg = f"block {actual.block.name_hint} does not compute what intrinsic {name} describes"
            raise ScheduleError(P, msg, func, actual.block)
    return pairs


def _same(a: object, d: object, pairs: list, amap: dict, dmap: dict) -> bool:
    if type(a) is not type(d):
        return False
    if isinstance(a, BufferLoad | BufferStore):
        pairs.append(
            (
                d.buffer,
                a.buffer,
                [substitute(i, dmap) for i in d.indices],
                [substitute(i, amap) for i in a.indices],
            )
        )
        return a.buffer.dtype == d.buffer.dtype and (
            not isinstance(a, BufferStore) or _same(a.value, d.value, pairs, amap, dmap)
        )
    if isinstance(a, IntImm | FloatImm):
        return a.dtype == d.dtype and a.value == d.value
    if isinstance(a, Var):
        return True
    if isinstance(a, tuple):
        return len(a) == len(d) and all(_same(x, y, pairs, amap, dmap) for x, y in zip(a, d))
    if not hasattr(a, "__dataclass_fields__"):
        return a == d
    if getattr(a, "dtype", None) != getattr(d, "dtype", None) or getattr(
        a, "op", None
    ) is not getattr(d, "op", None):
        return False
    return all(
        _same(getattr(a, f), getattr(d, f), pairs, amap, dmap) for f in child_fields(type(a))
    )


def _match_buffers(
    ti: TensorIntrin, pairs: list, nest: list[For], func: PrimFunc, name: str,
    fresh: dict[Buffer, Buffer],
) -> list[MatchBufferRegion]:
    zero = {lp.loop_var: const(0, lp.loop_var.dtype) for lp in nest}
    regions: dict[Buffer, tuple[Buffer, list[PrimExpr]]] = {}
    for dbuf, buf, didx, idx in pairs:
        lead = len(idx) - len(didx)
        if lead < 0:
            raise ScheduleError(
                P, f"{buf.name} has fewer dimensions than intrinsic {name}'s {dbuf.name}", func
            )
        mins = [_tidy(substitute(i, zero)) for i in idx]
        dmins = [const(0)] * lead + [_tidy(substitute(i, zero)) for i in didx]
        dfull = [const(0)] * lead + list(didx)
        for d, (i, m, di, dm) in enumerate(zip(idx, mins, dfull, dmins)):
            if d < lead and not any(uses_var(i, lp.loop_var) for lp in nest):
                continue  # a leading (batch) index, fixed over the tile: any expression
            la, ld = linear(_add(i, m * -1)), linear(_add(di, dm * -1))
            if la is None or ld is None or la != ld:
                msg = f"the accesses of {buf.name} do not follow intrinsic {name}'s accesses of {dbuf.name}"
                raise ScheduleError(P, msg, func)
        origin = [_tidy(_add(m, dm * -1)) for m, dm in zip(mins, dmins)]
        if dbuf in regions and regions[dbuf][0] is not buf:
            raise ScheduleError(
                P, f"intrinsic {name}'s buffer {dbuf.name} matches two buffers", func
            )
        regions[dbuf] = (buf, origin)
    out = []
    for dbuf, ibuf in zip(ti.desc.buffer_params(), ti.impl.buffer_params()):
        if dbuf not in regions:
            raise ScheduleError(P, f"intrinsic {name}'s buffer {dbuf.name} is not accessed", func)
        buf, origin = regions[dbuf]
        lead = len(origin) - dbuf.ndim
        ranges = [Range(o, const(1, o.dtype)) for o in origin[:lead]]
        ranges += [Range(o, ext) for o, ext in zip(origin[lead:], dbuf.shape)]
        out.append(MatchBufferRegion(fresh[ibuf], BufferRegion(buf, tuple(ranges))))
    return out


def _tidy(expr: PrimExpr) -> PrimExpr:
    """Fold the zeros substitution leaves behind (`k_0 * 4 + 0` -> `k_0 * 4`)."""
    lin = linear(expr)
    if lin is None:
        return expr
    coeffs, c0 = lin
    out: PrimExpr | None = None
    for v, c in coeffs.items():
        term = v if c == 1 else v * c
        out = term if out is None else out + term
    if out is None:
        return const(c0, expr.dtype)
    return out if c0 == 0 else out + c0
