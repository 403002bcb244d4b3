"""Packing of a constant operand at compile time: take the packing block out of a kernel.

The matmul and conv2d rules copy their weight into a packed layout at the start of the
kernel (a block annotated ``unity.prepack``).  When the caller passes a constant
weight, that copy can run once at compile time: `split_prepacked` returns the kernel
without the packing block, taking the packed buffer as its parameter instead, and
`pack_array` computes the packed constant with numpy.

Before (inside the kernel)::

    w_global = T.alloc_buffer((2, 64, 3, 3, 32))
    for ax0_0 in T.parallel(2): ...
        with T.block("w_global"):
            T.block_attr({"unity.prepack": "oihw:32"})
            w_global[v0 // 32, v1, v2, v3, v0 % 32] = w[v0, v1, v2, v3]
    ... w_global[...] ...

After ``split_prepacked(func)``: `w_global` is the parameter where `w` was, the block
is gone, and ``pack_array("oihw:32", w)`` gives its value.

Example:
    >>> pack_array("kn:2", np.arange(8, dtype="float32").reshape(2, 4)).shape
    (2, 2, 2)
"""

from __future__ import annotations

import numpy as np

from unity.schedule.tree import find_path, replace_stmts, walk
from unity.tir.buffer import Buffer
from unity.tir.function import PrimFunc
from unity.tir.stmt import BlockRealize, For

__all__ = ["PREPACK", "pack_array", "prepacked_params", "split_prepacked"]

PREPACK = "unity.prepack"
"""Block annotation of a weight-packing block: ``"<recipe>:<tile>"``."""


def pack_array(recipe: str, array: np.ndarray) -> np.ndarray:
    """The packed layout of `array` that the block annotated `recipe` would write.

    Recipes: ``oihw:t`` (conv weight ``[O, C, R, S] -> [O/t, C, R, S, t]``),
    ``oihw_blocked:b:t`` (a conv weight for blocked data, ``[O, C, R, S] -> [O/t, C/b, R, S,
    b, t]``), ``kn:t`` (matmul ``B[K, N] -> [N/t, K, t]``), ``nk:t`` (dense weight ``W[N, K]
    -> [N/t, K, t]``).

    Example:
        >>> pack_array("nk:2", np.arange(6, dtype="float32").reshape(2, 3))[0, :, 1].tolist()
        [3.0, 4.0, 5.0]
    """
    kind, *sizes = recipe.split(":")
    t = int(sizes[-1])
    if kind == "oihw_blocked":
        b = int(sizes[0])
        o, c, r, s = array.shape
        out = array.reshape(o // t, t, c // b, b, r, s).transpose(0, 2, 4, 5, 3, 1)
    elif kind == "oihw":
        o, c, r, s = array.shape
        out = array.reshape(o // t, t, c, r, s).transpose(0, 2, 3, 4, 1)
    elif kind == "kn":
        k, n = array.shape
        out = array.reshape(k, n // t, t).transpose(1, 0, 2)
    elif kind == "nk":
        n, k = array.shape
        out = array.reshape(n // t, t, k).transpose(0, 2, 1)
    else:
        raise ValueError(f"pack_array: unknown packing recipe {recipe!r}")
    return np.asarray(out, order="C")


def prepacked_params(func: PrimFunc) -> dict[int, str]:
    """`{param index: recipe}` for each parameter a packing block of `func` copies.

    Only a parameter read by nothing but its packing block qualifies.

    Example:
        >>> prepacked_params(scheduled_conv)  # doctest: +SKIP
        {1: 'oihw:32'}
    """
    out: dict[int, str] = {}
    for realize, src, _ in _packing_blocks(func):
        out[func.params.index(src)] = str(realize.block.annotations[PREPACK])
    return out


def split_prepacked(func: PrimFunc, indices: set[int]) -> PrimFunc:
    """`func` with the packing blocks of the params `indices` removed; the packed
    buffers become those parameters.

    Example:
        >>> split_prepacked(scheduled_conv, {1}).params[1].shape  # doctest: +SKIP
        (2, 64, 3, 3, 32)
    """
    params = list(func.params)
    removed: dict = {}
    dropped: set[Buffer] = set()
    for realize, src, dst in _packing_blocks(func):
        index = params.index(src)
        if index not in indices:
            continue
        params[index] = dst
        dropped.add(dst)
        removed[_top_statement(func, realize)] = None
    if not removed:
        return func
    body = replace_stmts(func.body, removed)
    if isinstance(body, BlockRealize):
        root = body.block
        root = root.replace(alloc_buffers=tuple(b for b in root.alloc_buffers if b not in dropped))
        body = body.replace(block=root)
    return func.replace(params=tuple(params), body=body)


def _packing_blocks(func: PrimFunc) -> list[tuple[BlockRealize, Buffer, Buffer]]:
    params = set(func.buffer_params())
    found = []
    for stmt in walk(func.body):
        if not isinstance(stmt, BlockRealize) or PREPACK not in stmt.block.annotations:
            continue
        block = stmt.block
        if len(block.reads) != 1 or len(block.writes) != 1:
            continue
        src, dst = block.reads[0].buffer, block.writes[0].buffer
        if src not in params or dst in params:
            continue
        readers = [
            s for s in walk(func.body)
            if isinstance(s, BlockRealize) and s is not stmt and src in {r.buffer for r in s.block.reads}
        ]  # fmt: skip
        if not readers:
            found.append((stmt, src, dst))
    return found


def _top_statement(func: PrimFunc, realize: BlockRealize):
    """The loop nest (a statement of the root scope) holding `realize`."""
    path = find_path(func.body, lambda s: s is realize)
    for s in path:
        if isinstance(s, For):
            return s
    return realize
