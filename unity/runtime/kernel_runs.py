"""Run a sequence of kernel calls from native code: one ctypes call for many kernels.

The VM calls a kernel by packing its arguments into 8-byte slots and calling its packed
entry (`unity.runtime.function`).  Between two kernels of a model there is usually
nothing for Python to do but point at the next buffers, so the VM packs the slots of a
whole run of kernels at once (one `struct.pack_into`) and hands the run to the loop
every library carries (``__unity_run_kernels``, written by
`unity.codegen.llvm_run_kernels`), which calls each packed entry in turn and stops at
the first that fails.  A run is described by a `Plan`, an int64 array built when the VM
is loaded::

    [n, entry_0, offset_0, entry_1, offset_1, ...]   # offset: byte offset of the slots

The result is 0, or ``(k + 1) << 32 | status`` when kernel k returned a non-zero status
(the kernels after it did not run): `failed_kernel` decodes it.

Example:
    >>> run = lib.run_kernels                                       # doctest: +SKIP
    >>> run(Plan([(entry, 0), (entry, 24)]).address, slots_address)  # doctest: +SKIP
    0
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

__all__ = ["RUN_KERNELS", "RUN_KERNELS_SYMBOL", "Plan", "failed_kernel"]

RUN_KERNELS_SYMBOL = "__unity_run_kernels"
"""Name of a library's run loop, ``i64 (ptr plan, ptr slots)``."""

RUN_KERNELS = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)
"""The ctypes type of the run loop."""


class Plan:
    """The plan of a run of kernels, each `(packed entry address, byte offset of its
    slots)`, called in order; `address` is what the run loop takes.

    Example:
        >>> Plan([(0x1000, 0), (0x2000, 16)]).entries
        2
    """

    def __init__(self, entries: Sequence[tuple[int, int]]) -> None:
        words = [len(entries)]
        for entry, offset in entries:
            words += [entry, offset]
        self._array = (ctypes.c_uint64 * len(words))(*words)
        self.entries = len(entries)
        self.address: int = ctypes.addressof(self._array)


def failed_kernel(code: int) -> tuple[int, int]:
    """`(index of the kernel in its run, its status)` from a non-zero run result.

    Example:
        >>> failed_kernel((3 << 32) | 2)
        (2, 2)
    """
    return (code >> 32) - 1, ctypes.c_int32(code & 0xFFFFFFFF).value
