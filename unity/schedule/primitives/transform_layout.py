"""`transform_layout`: store an intermediate buffer in a new layout given by a lambda.

Before::

    B_global = T.alloc_buffer((16, 64))
    ...  B_global[v0, v1] = B[v0, v1]  ...  B_global[vk, vj]  ...

After ``sch.transform_layout(b, ("write", 0), lambda k, j: (j // 32, k, j % 32))``::

    B_global = T.alloc_buffer((2, 16, 32))
    ...  B_global[v1 // 32, v0, v1 % 32] = B[v0, v1]  ...  B_global[vj // 32, vk, vj % 32]  ...
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

from unity.schedule.analysis import (
    as_int, const_bound, linear_terms, mixed_radix, simplify, used_vars, with_regions,
)  # fmt: skip
from unity.schedule.error import ScheduleError
from unity.schedule.scope import alloc_in_root, is_param
from unity.schedule.state import BlockRV, ScheduleState
from unity.tir.buffer import Buffer, decl_buffer
from unity.tir.expr import BufferLoad, PrimExpr, Var, const
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, substitute, uses_var
from unity.tir.stmt import Block, BufferStore, Stmt

IndexMap = Callable[..., Sequence[PrimExpr] | PrimExpr]
BufferSpec = tuple[str, int] | int | str


def transform_layout(
    state: ScheduleState, block: BlockRV, buffer: BufferSpec, index_map: IndexMap
) -> None:
    """Rewrite every access `buf[idx]` of an allocated buffer to `new_buf[index_map(*idx)]`.

    Args:
        state: the schedule state.
        block: a block that reads or writes the buffer.
        buffer: `("read", i)` / `("write", i)` (a region of `block`), an int (a write
            index), or the buffer's name.
        index_map: a lambda from the old indices to the new ones.

    Raises:
        ScheduleError: the buffer is a function parameter, the lambda takes the wrong
            number of indices, or a new extent cannot be bounded.

    Example:
        >>> sch.transform_layout(b, ("write", 0), lambda k, j: (j // 32, k, j % 32))  # doctest: +SKIP
    """
    p = "transform_layout"
    func_name, func, path = state.resolve_block(block, p)
    blk = path[-1].block
    buf = _find_buffer(blk, buffer, func, p)
    if is_param(func, buf):
        raise ScheduleError(
            p, f"{buf.name} is a parameter of the function; its layout is fixed", func, blk
        )
    params = [Var(f"i{d}", dim.dtype) for d, dim in enumerate(buf.shape)]
    if len(inspect.signature(index_map).parameters) != buf.ndim:
        msg = f"the index map takes {len(inspect.signature(index_map).parameters)} indices; {buf.name} has {buf.ndim}"
        raise ScheduleError(p, msg, func, blk)
    outputs = index_map(*params)
    outputs = [const(e) for e in (outputs if isinstance(outputs, list | tuple) else (outputs,))]
    names = list(inspect.signature(index_map).parameters)
    dropped = [n for n, v, dim in zip(names, params, buf.shape) if as_int(dim) != 1
               and not any(v in used_vars(e) for e in outputs)]  # fmt: skip
    if dropped:
        msg = (
            f"the index map drops index {', '.join(dropped)} of {buf.name}: distinct elements "
            "would share one location (the map must be one-to-one)"
        )
        raise ScheduleError(p, msg, func, blk)
    new_buf = decl_buffer(
        _new_shape(outputs, params, buf, func, p), buf.dtype, buf.name, scope=buf.scope
    )
    body = _Rewriter(buf, new_buf, params, outputs).visit_stmt(func.body)
    new = alloc_in_root(func.replace(body=body), [new_buf], remove=buf)
    state.commit(func_name, new)


def _find_buffer(blk: Block, spec: BufferSpec, func: PrimFunc, p: str) -> Buffer:
    if isinstance(spec, str):
        for r in (*blk.reads, *blk.writes):
            if r.buffer.name == spec:
                return r.buffer
        raise ScheduleError(
            p, f"block {blk.name_hint} does not access a buffer named {spec!r}", func, blk
        )
    kind, index = spec if isinstance(spec, tuple) else ("write", spec)
    regions = blk.reads if kind == "read" else blk.writes
    if kind not in ("read", "write") or not 0 <= index < len(regions):
        msg = f"block {blk.name_hint} has no {kind} buffer {index} (it has {len(regions)})"
        raise ScheduleError(p, msg, func, blk)
    return regions[index].buffer


def _new_shape(
    outputs: list[PrimExpr], params: list[Var], buf: Buffer, func: PrimFunc, p: str
) -> list[PrimExpr]:
    doms: dict[Var, tuple[int, int]] = {}
    dims = dict(zip(params, buf.shape))
    for v, dim in dims.items():
        extent = as_int(dim)
        if extent is not None:
            doms[v] = (0, extent - 1)
    shape = []
    for e in outputs:
        if isinstance(e, Var) and e in dims:  # a dimension moved as it is (symbolic or not)
            shape.append(dims[e])
            continue
        if any(v not in doms and uses_var(e, v) for v in params):
            fused = _fused_extent(e, dims)
            if fused is not None:  # rows of a symbolic width flattened: ``y * W + x``
                shape.append(fused)
                continue
            msg = (f"{buf.name} has a symbolic shape; only its symbolic dimensions moved as they "
                   "are (a permutation) can be transformed")
            raise ScheduleError(p, msg, func)
        b = const_bound(e, doms)
        if b is None or b[0] != 0:
            msg = f"cannot bound the new index {e.script()} to [0, n) (bounds {b})"
            raise ScheduleError(p, msg, func)
        shape.append(const(b[1] + 1, e.dtype))
    return shape


def _fused_extent(e: PrimExpr, dims: dict[Var, PrimExpr]) -> PrimExpr | None:
    """``1 + sum(c * (dim - 1))`` of an index ``sum(c * v)`` whose coefficients are free of
    the indices (the extent of ``y * W + x`` over dims `H` and `W`: ``H * W``), else None."""
    terms = linear_terms(e, set(dims))
    if terms is None:
        return None
    chain = mixed_radix(terms, dims.__getitem__)
    if chain is not None:  # the top digit's coefficient times its extent
        top_var, top_coef = chain[-1]
        return simplify(top_coef * dims[top_var])
    top: PrimExpr = const(1, e.dtype)
    for v, c in terms:
        top = top + c * (dims[v] - 1)
    return simplify(top)


class _Rewriter(StmtExprMutator):
    def __init__(
        self, old: Buffer, new: Buffer, params: list[Var], outputs: list[PrimExpr]
    ) -> None:
        super().__init__()
        self.old, self.new, self.params, self.outputs = old, new, params, outputs

    def _map(self, indices: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
        vmap = dict(zip(self.params, indices))
        return tuple(simplify(substitute(e, vmap)) for e in self.outputs)

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        load = self._mutate_fields(load)
        if load.buffer is not self.old:
            return load
        return BufferLoad(self.new, self._map(load.indices))

    def visit_buffer_store_(self, store: BufferStore) -> Stmt:
        store = self._mutate_fields(store)
        if store.buffer is not self.old:
            return store
        return BufferStore(self.new, store.value, self._map(store.indices))

    def visit_block_(self, block: Block) -> Stmt:
        touched = any(r.buffer is self.old for r in (*block.reads, *block.writes))
        new = self._mutate_fields(block)
        return with_regions(new) if touched else new
