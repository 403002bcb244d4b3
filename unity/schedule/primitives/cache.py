"""`cache_read` / `cache_write`: stage a buffer through a copy in another storage scope.

Before::

    for i in T.serial(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)

After ``sch.cache_read(b, 0, "local")``::

    A_local = T.alloc_buffer((8,), scope="local")
    for ax0 in T.serial(8):
        with T.block("A_local"):
            v0 = T.axis.spatial(8, ax0)
            A_local[v0] = A[v0]
    for i in T.serial(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A_local[vi] * T.float32(2)

``cache_write(b, 0, "local")`` instead makes ``B`` write ``B_local`` and adds a block
``B_local`` after it that copies ``B_local`` back to ``B``.
"""

from __future__ import annotations

from unity.schedule.analysis import buffers_read, buffers_written, child_realizes
from unity.schedule.error import ScheduleError
from unity.schedule.scope import (
    alloc_in_root,
    scope_body,
    scope_realizes,
    top_level,
    with_root_block,
)  # fmt: skip
from unity.schedule.state import BlockRV, ScheduleState
from unity.schedule.tree import find_path, replace_stmts
from unity.tir.buffer import SCOPES, Buffer, BufferRegion, decl_buffer
from unity.tir.expr import IterType, IterVar, Range, Var, const
from unity.tir.function import PrimFunc
from unity.tir.functor import substitute
from unity.tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, Stmt, seq


def _check_scope(scope: str, primitive: str) -> None:
    if scope not in SCOPES:
        raise ScheduleError(primitive, f"unknown storage scope {scope!r}; use one of {SCOPES}")


def _copy_nest(src: Buffer, dst: Buffer, name: str) -> Stmt:
    """Loops `ax*` over the whole buffer and a block `name` doing `dst[v] = src[v]`."""
    axes = [Var(f"ax{d}", dim.dtype) for d, dim in enumerate(src.shape)]
    ivars = [
        IterVar(Var(f"v{d}", dim.dtype), Range(const(0, dim.dtype), dim), IterType.SPATIAL)
        for d, dim in enumerate(src.shape)
    ]
    idx = tuple(iv.var for iv in ivars)
    store = BufferStore(dst, src[idx] if idx else src[()], idx)  # type: ignore[index]
    blk = Block(
        tuple(ivars),
        (BufferRegion.from_point(src, idx),),
        (BufferRegion.from_point(dst, idx),),
        name,
        store,
    )
    nest: Stmt = BlockRealize(tuple(axes), const(True), blk)
    for ax, dim in zip(reversed(axes), reversed(src.shape)):
        nest = For(ax, const(0, dim.dtype), dim, ForKind.SERIAL, nest)
    return nest


def _cache_buffer(buf: Buffer, scope: str) -> Buffer:
    return decl_buffer(buf.shape, buf.dtype, f"{buf.name}_{scope.replace('.', '_')}", scope=scope)


def _resolve(state: ScheduleState, block: BlockRV, p: str):
    func_name, func, path = state.resolve_block(block, p)
    func = with_root_block(func)
    path = find_path(func.body, lambda s: s is path[-1])
    return func_name, func, path


def _check_no_reader_inside(
    anchor: Stmt, writer: BlockRealize, buf: Buffer, func: PrimFunc, p: str
) -> None:
    """The copy goes after the writer's whole loop nest: nothing in that nest may read `buf`."""
    nest = [anchor] if isinstance(anchor, BlockRealize) else child_realizes(anchor)
    for r in nest:
        if r is not writer and buf in buffers_read([r]):
            msg = f"block {r.block.name_hint} reads {buf.name} inside the loop nest of its writer {writer.block.name_hint}"
            raise ScheduleError(p, msg, func, r.block)


def cache_read(
    state: ScheduleState, block: BlockRV, read_buffer_index: int, storage_scope: str
) -> BlockRV:
    """Copy the `read_buffer_index`-th buffer `block` reads into a new buffer in `storage_scope`.

    Every block of the scope that reads the buffer then reads the copy.  The copy block
    goes right after the buffer's producer, or first in the scope when it has none.

    Raises:
        ScheduleError: a bad index or scope, or a buffer with more than one writer.

    Example:
        >>> a_local = sch.cache_read(sch.get_block("C"), 0, "local")  # doctest: +SKIP
    """
    p = "cache_read"
    _check_scope(storage_scope, p)
    func_name, func, path = _resolve(state, block, p)
    blk = path[-1].block
    if not 0 <= read_buffer_index < len(blk.reads):
        msg = f"block {blk.name_hint} reads {len(blk.reads)} buffers; index {read_buffer_index} is out of range"
        raise ScheduleError(p, msg, func, blk)
    buf = blk.reads[read_buffer_index].buffer
    siblings = scope_realizes(func, path)
    writers = [r for r in siblings if buf in buffers_written([r])]
    if len(writers) > 1:
        raise ScheduleError(p, f"{buf.name} has more than one writer in the scope", func, blk)
    cache = _cache_buffer(buf, storage_scope)
    name = state.unique_block_name(func, cache.name)
    nest = _copy_nest(buf, cache, name)
    start = siblings.index(writers[0]) + 1 if writers else 0
    mapping: dict[Stmt, Stmt | None] = {}
    for r in siblings[start:]:
        if buf in buffers_read([r]) and r not in writers:
            mapping[r] = substitute(r, {}, {buf: cache})
    if writers:
        anchor = top_level(find_path(func.body, lambda s: s is writers[0]))
        _check_no_reader_inside(anchor, writers[0], buf, func, p)
        mapping[anchor] = seq(replace_stmts(anchor, mapping), nest)
    else:
        body = scope_body(func, path)
        mapping[body] = seq(nest, replace_stmts(body, mapping))
    new = func.replace(body=replace_stmts(func.body, mapping))
    state.commit(func_name, alloc_in_root(new, [cache]))
    return state.block_rv(func_name, name)


def cache_write(
    state: ScheduleState, block: BlockRV, write_buffer_index: int, storage_scope: str
) -> BlockRV:
    """Make `block` write a new buffer in `storage_scope`, copied back by a new block after it.

    Raises:
        ScheduleError: a bad index or scope, or a buffer with more than one writer.

    Example:
        >>> c_local = sch.cache_write(sch.get_block("C"), 0, "local")  # doctest: +SKIP
    """
    p = "cache_write"
    _check_scope(storage_scope, p)
    func_name, func, path = _resolve(state, block, p)
    realize: BlockRealize = path[-1]
    blk = realize.block
    if not 0 <= write_buffer_index < len(blk.writes):
        msg = f"block {blk.name_hint} writes {len(blk.writes)} buffers; index {write_buffer_index} is out of range"
        raise ScheduleError(p, msg, func, blk)
    buf = blk.writes[write_buffer_index].buffer
    siblings = scope_realizes(func, path)
    if len([r for r in siblings if buf in buffers_written([r])]) > 1:
        raise ScheduleError(p, f"{buf.name} has more than one writer in the scope", func, blk)
    cache = _cache_buffer(buf, storage_scope)
    name = state.unique_block_name(func, cache.name)
    nest = _copy_nest(cache, buf, name)
    anchor = top_level(path)
    _check_no_reader_inside(anchor, realize, buf, func, p)
    new_anchor = replace_stmts(anchor, {realize: substitute(realize, {}, {buf: cache})})
    body = replace_stmts(func.body, {anchor: seq(new_anchor, nest)})
    state.commit(func_name, alloc_in_root(func.replace(body=body), [cache]))
    return state.block_rv(func_name, name)
