"""`StoragePool`: the VM's free intermediate buffers, reused across calls.

An intermediate tensor that only kernels touch is taken from the pool when it is
allocated and given back after its last use (the codegen plans where); the pool
keeps the buffers between calls, so a steady-state call allocates nothing.

Example:
    >>> pool = StoragePool()
    >>> raw, ptr = pool.take(16)
    >>> raw.nbytes
    16
"""

from __future__ import annotations

import numpy as np


class StoragePool:
    """Free buffers by size; `take` reuses one or allocates, `give` returns one.

    Example:
        >>> pool = StoragePool()
        >>> raw, ptr = pool.take(64); pool.give(raw, ptr); pool.take(64)[1] == ptr
        True
    """

    def __init__(self, max_bytes: int = 1 << 30) -> None:
        self.free: dict[int, list[tuple[np.ndarray, int]]] = {}
        self.max_bytes = max_bytes
        self.free_bytes = 0
        self.live_bytes = 0
        """Bytes taken and not yet given back (the intermediates alive now)."""
        self.peak_bytes = 0
        """The most `live_bytes` ever reached (reset it to measure one call)."""

    def take(self, nbytes: int) -> tuple[np.ndarray, int]:
        """A buffer of at least `nbytes` bytes and its address.

        Example:
            >>> pool = StoragePool()
            >>> raw, ptr = pool.take(64)
            >>> raw.nbytes, pool.live_bytes, ptr == raw.ctypes.data
            (64, 64, True)
        """
        nbytes = max(nbytes, 1)
        self.live_bytes += nbytes
        self.peak_bytes = max(self.peak_bytes, self.live_bytes)
        entries = self.free.get(nbytes)
        if entries:
            self.free_bytes -= nbytes
            return entries.pop()
        raw = np.empty(nbytes, np.uint8)
        return raw, raw.ctypes.data

    def give(self, raw: np.ndarray, ptr: int) -> None:
        """Return a buffer taken from this pool (dropped when the pool is full).

        Example:
            >>> pool = StoragePool()
            >>> raw, ptr = pool.take(64)
            >>> pool.give(raw, ptr)
            >>> pool.live_bytes, pool.take(64)[0] is raw  # the buffer is reused
            (0, True)
        """
        self.live_bytes -= raw.size
        if self.free_bytes + raw.size <= self.max_bytes:
            self.free.setdefault(raw.size, []).append((raw, ptr))
            self.free_bytes += raw.size
