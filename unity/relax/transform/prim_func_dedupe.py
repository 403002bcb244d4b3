"""Find structurally equal PrimFuncs cheaply: the helper behind the merging of duplicates.

LegalizeOps (one PrimFunc per op call) and FuseTIR (one per fused group) both merge
PrimFuncs that are structurally equal, so that each distinct kernel is scheduled,
lowered and compiled once.  Hashing every PrimFunc is most of that cost (DenseNet-121
makes ~800 PrimFuncs in LegalizeOps), so only those whose parameter signature (dtypes
and constant dims) another one shares are hashed and compared.

Example:
    >>> same = first_equal({"a": f, "b": f_copy, "c": g})  # doctest: +SKIP
    >>> same == {"a": "a", "b": "a", "c": "c"}              # doctest: +SKIP
    True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from typing import TypeVar

from unity.ir.structural import structural_equal, structural_hash
from unity.tir.buffer import Buffer
from unity.tir.expr import IntImm
from unity.tir.function import PrimFunc

K = TypeVar("K", bound=Hashable)


def first_equal(
    funcs: Mapping[K, PrimFunc], may_merge: Callable[[K], bool] = lambda key: True
) -> dict[K, K]:
    """Map each key to the first key (in `funcs`' order) whose PrimFunc equals its own.

    Args:
        funcs: PrimFuncs by key (a GlobalVar, a name), in priority order.
        may_merge: False for keys that must stay themselves (they still serve as the
            first of their kind for later keys).

    Returns:
        `key -> representative`; a key that is its own representative keeps its function.

    Example:
        >>> first_equal({})
        {}
    """
    signatures = {key: signature(func) for key, func in funcs.items()}
    look_alikes = Counter(signatures.values())
    kinds: dict[Hashable, list[K]] = {}
    same: dict[K, K] = {}
    for key, func in funcs.items():
        sig = signatures[key]
        kind = kinds.setdefault((sig, structural_hash(func)) if look_alikes[sig] > 1 else sig, [])
        twin = next((first for first in kind if structural_equal(funcs[first], func)), None)
        if twin is None or not may_merge(key):
            kind.append(key)
            same[key] = key
        else:
            same[key] = twin
    return same


def signature(func: PrimFunc) -> tuple[Hashable, ...]:
    """Parameter dtypes and constant dims: equal whenever the PrimFuncs are structurally equal.

    Example:
        >>> from unity import tir
        >>> A = tir.decl_buffer((4,), "float32", "A")
        >>> signature(tir.PrimFunc((A,), tir.Evaluate(tir.const(0))))
        (('float32', (4,)),)
    """
    return tuple(
        (p.dtype, tuple(d.value if isinstance(d, IntImm) else None for d in p.shape))
        if isinstance(p, Buffer)
        else p.dtype
        for p in func.params
    )
