"""Evict arrays from the CPU caches, so a kernel can be timed as a model runs it.

Timing a kernel back to back keeps its weights in the caches between runs; inside a
model the weights of every layer (100 MB for ResNet-50) do not fit, so each kernel
reads its own from memory. A schedule that reads its weights several times (one pass
per tile of pixels) looks fast when timed warm and is slow in the model. TVM's tuner
flushes the cache before each measurement for this reason
(``cache_flush_cpu_non_first_arg``); `flush_arrays` does the same here: it writes every
cache line of the given arrays back to memory and drops it from all cache levels
(`clflush` on x86, the `dc civac` instruction on AArch64), then waits for that to finish.

The loop is a tiny function compiled once through llvmlite's JIT. On other CPUs (or
where compiling it fails) `flush_arrays` falls back to reading a buffer twice the size
of a large last-level cache, which evicts everything else too.

Example:
    >>> import numpy as np
    >>> w = np.ones(1 << 16, "float32")
    >>> flush_arrays([w]); float(w.sum())    # same values, now read from memory
    65536.0
"""

from __future__ import annotations

import ctypes
import functools
import platform
from collections.abc import Iterable

import numpy as np

try:
    from numpy.lib.array_utils import byte_bounds
except ImportError:  # numpy < 2
    from numpy import byte_bounds  # type: ignore[attr-defined,no-redef]

__all__ = ["flush_arrays"]

_LINE = 64
"""Bytes per cache line (every x86-64 and the common AArch64 cores)."""

_SWEEP_BYTES = 64 << 20
"""Bytes the fallback reads: twice a 32 MB last-level cache."""

_FLUSH = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)

_keep: list[object] = []
"""The execution engine holding the compiled flush (freed with it otherwise)."""


def flush_arrays(arrays: Iterable[object]) -> None:
    """Write back and evict every cache line of each array (numpy array or `Tensor`).

    Arrays that are not on the CPU (no numpy view) are skipped.

    Example:
        >>> flush_arrays([np.zeros((256, 256), "float32")])
    """
    views = [a if isinstance(a, np.ndarray) else getattr(a, "_array", None) for a in arrays]
    views = [v for v in views if isinstance(v, np.ndarray) and v.nbytes]
    if not views:
        return
    flush = _compiled_flush()
    if flush is None:
        _sweep()
        return
    for v in views:
        lo, hi = byte_bounds(v)  # the bytes a view spans, negative or gapped strides included
        flush(lo, hi - lo)


@functools.cache
def _sweep_buffer() -> np.ndarray:
    return np.ones(_SWEEP_BYTES // 4, "float32")


def _sweep() -> None:
    buf = _sweep_buffer()
    buf[:: _LINE // 4] += 1.0  # touch one word per line: each line comes in and stays dirty


@functools.cache
def _compiled_flush() -> object | None:
    """The JIT-compiled `void flush(ptr start, i64 bytes)`, or None where it cannot be."""
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        line_op = "call void @llvm.x86.sse2.clflush(ptr %p)"
        decl = "declare void @llvm.x86.sse2.clflush(ptr)\ndeclare void @llvm.x86.sse2.mfence()"
        fence = "call void @llvm.x86.sse2.mfence()"
    elif machine in ("aarch64", "arm64"):
        line_op = 'call void asm sideeffect "dc civac, $0", "r,~{memory}"(ptr %p)'
        decl = ""
        fence = 'call void asm sideeffect "dsb sy", "~{memory}"()'
    else:
        return None
    text = f"""
{decl}
define void @unity_flush(ptr %start, i64 %bytes) {{
entry:
  %base = ptrtoint ptr %start to i64
  %first = and i64 %base, -{_LINE}
  %end = add i64 %base, %bytes
  br label %loop
loop:
  %a = phi i64 [ %first, %entry ], [ %next, %loop ]
  %p = inttoptr i64 %a to ptr
  {line_op}
  %next = add i64 %a, {_LINE}
  %more = icmp ult i64 %next, %end
  br i1 %more, label %loop, label %done
done:
  {fence}
  ret void
}}
"""
    try:
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        ref = llvm.parse_assembly(text)
        ref.verify()
        machine_ = llvm.Target.from_default_triple().create_target_machine(jit=True)
        engine = llvm.create_mcjit_compiler(ref, machine_)
        engine.finalize_object()
        _keep.append(engine)
        return _FLUSH(engine.get_function_address("unity_flush"))
    except Exception:  # noqa: BLE001  # an LLVM without the intrinsic: use the sweep
        return None

