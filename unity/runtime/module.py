"""The compiled `Module`: kernels by name, their sources, timing, export and load.

A module is JSON metadata (one entry per function, see `unity.runtime.function`) plus
a way to find each function's machine code: an llvmlite JIT engine after
`unity.build`, or a shared library opened with ctypes after `load_module`.  Loading
imports nothing from the compiler (no IR, no llvmlite).

Example:
    >>> import unity
    >>> lib = unity.build(func)                      # doctest: +SKIP
    >>> lib.export_library("/tmp/kernels.so")        # doctest: +SKIP
    >>> lib2 = unity.runtime.load_module("/tmp/kernels.so")  # doctest: +SKIP
    >>> lib2["main"](a, b, c)                        # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import statistics
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from unity.runtime import thread_pool
from unity.runtime.cache_flush import flush_arrays
from unity.runtime.device import Device
from unity.runtime.function import PackedFunc
from unity.runtime.kernel_runs import RUN_KERNELS, RUN_KERNELS_SYMBOL

METADATA_SYMBOL = "__unity_metadata"
"""Name of the NUL-terminated JSON string a compiled module carries its metadata in."""


class Module:
    """Compiled functions: `lib["name"](*args)`, `get_source`, `time_evaluator`, export.

    Args:
        metadata: `{"functions": {name: function metadata}}`.
        address_of: Returns the address of a symbol in the machine code.
        sources: Returns the text form of a format (`"ll"`, `"asm"`), when known.
        exporter: Writes a shared library to a path.
        keepalive: Owner of the machine code (a JIT engine or a ctypes library).

    Example:
        >>> sorted(lib.function_names)  # doctest: +SKIP
        ['main']
    """

    def __init__(
        self,
        metadata: dict[str, Any],
        address_of: Callable[[str], int],
        *,
        sources: Callable[[str], str] | None = None,
        exporter: Callable[[str], None] | None = None,
        keepalive: object = None,
    ) -> None:
        self.metadata = metadata
        self._address_of = address_of
        self._sources = sources
        self._exporter = exporter
        self._keepalive = keepalive
        self._functions: dict[str, PackedFunc] = {}
        runner = address_of(RUN_KERNELS_SYMBOL)  # absent from libraries exported before it
        self.run_kernels = RUN_KERNELS(runner) if runner else None
        """The library's run loop (`unity.runtime.kernel_runs`), or None."""
        slot = address_of(thread_pool.NUM_THREADS_SYMBOL)
        if slot:
            thread_pool.register_slot(slot)
            weakref.finalize(self, thread_pool.unregister_slot, slot)

    @property
    def function_names(self) -> list[str]:
        """Names of the functions in the module."""
        return list(self.metadata["functions"])

    def __contains__(self, name: str) -> bool:
        return name in self.metadata["functions"]

    def __getitem__(self, name: str) -> PackedFunc:
        return self.get_function(name)

    def get_function(self, name: str) -> PackedFunc:
        """The function `name` (KeyError lists the functions there are).

        Example:
            >>> lib.get_function("main")  # doctest: +SKIP
        """
        func = self._functions.get(name)
        if func is not None:
            return func
        meta = self.metadata["functions"].get(name)
        if meta is None:
            raise KeyError(f"module has no function {name!r}; it has {self.function_names}")
        packed = meta.get("packed_symbol")  # absent from libraries exported before it
        func = PackedFunc(
            meta, self._address_of(meta["symbol"]), self._address_of(packed) if packed else 0
        )
        func.owner = self  # type: ignore[attr-defined]  # keeps the machine code alive
        self._functions[name] = func
        return func

    def get_source(self, fmt: str = "ll") -> str:
        """The module as text: `"ll"` (optimized LLVM IR) or `"asm"` (assembly).

        Example:
            >>> "noalias" in lib.get_source("ll")  # doctest: +SKIP
            True
        """
        if self._sources is None:
            raise ValueError(f"get_source({fmt!r}): a loaded library keeps no source")
        return self._sources(fmt)

    def export_library(self, path: str) -> None:
        """Write the module as a shared library that `load_module` can open.

        Example:
            >>> lib.export_library("/tmp/kernels.so")  # doctest: +SKIP
        """
        if self._exporter is None:
            raise ValueError("export_library: this module cannot be exported")
        self._exporter(str(path))

    def time_evaluator(
        self,
        name: str,
        dev: Device,
        number: int = 10,
        repeat: int = 1,
        min_repeat_ms: int = 0,
        flush_cache: bool = False,
    ) -> Callable[..., ProfileResult]:
        """A function that runs `name` `number` times per repeat and returns the timings.

        Args:
            name: The function to time.
            dev: The device it runs on (synchronized after each repeat).
            number: Runs per measurement; the mean of them is one result.
            repeat: Number of measurements.
            min_repeat_ms: Raise `number` until one measurement lasts at least this long.
            flush_cache: Before each run, evict every argument but the first from the CPU
                caches (`cache_flush.flush_arrays`; TVM's ``cache_flush_cpu_non_first_arg``)
                and time the runs one by one, the flushes left out: the weights come from
                memory, as in a model too large for the caches.

        Example:
            >>> lib.time_evaluator("main", unity.cpu(), number=10)(a, b, c).mean  # doctest: +SKIP
        """
        func = self.get_function(name)

        def evaluate(*args: object) -> ProfileResult:
            c_args = func.convert_args(args)
            func.call_converted(c_args)  # warm up, and surface a failed assert once
            cold = args[1:] if flush_cache else None  # evicted before each run
            runs, results = number, []
            for _ in range(repeat):
                while True:
                    elapsed = _timed_runs(func, c_args, runs, dev, cold)
                    if elapsed * 1e3 >= min_repeat_ms or runs >= 1 << 30:
                        break
                    runs = max(runs * 2, int(runs * min_repeat_ms / max(elapsed * 1e3, 1e-3) * 1.1))
                results.append(elapsed / runs)
            return ProfileResult(tuple(results))

        return evaluate


def _timed_runs(
    func: PackedFunc, c_args: list[object], runs: int, dev: Device, cold: tuple | None
) -> float:
    """Seconds `runs` calls take; with `cold`, those arguments are evicted from the
    caches before each call, outside the time."""
    if cold is None:
        start = time.perf_counter()
        for _ in range(runs):
            func.call_converted(c_args)
        dev.sync()
        return time.perf_counter() - start
    elapsed = 0.0
    for _ in range(runs):
        flush_arrays(cold)
        start = time.perf_counter()
        func.call_converted(c_args)
        dev.sync()
        elapsed += time.perf_counter() - start
    return elapsed


@dataclass(frozen=True)
class ProfileResult:
    """Seconds per run, one entry per repeat (TVM's `ProfileResult`).

    Example:
        >>> ProfileResult((1.0, 3.0)).mean
        2.0
    """

    results: tuple[float, ...]

    @property
    def mean(self) -> float:
        """Mean seconds per run."""
        return statistics.fmean(self.results)

    @property
    def median(self) -> float:
        """Median seconds per run."""
        return statistics.median(self.results)

    @property
    def min(self) -> float:
        """Fastest seconds per run."""
        return min(self.results)

    @property
    def max(self) -> float:
        """Slowest seconds per run."""
        return max(self.results)

    @property
    def std(self) -> float:
        """Standard deviation of the seconds per run."""
        return statistics.pstdev(self.results)


def load_module(path: str) -> Module:
    """Open a library written by `Module.export_library` (compiles nothing).

    A library written by `Executable.export_library` gives back the `Executable`.

    Example:
        >>> lib = load_module("/tmp/kernels.so")  # doctest: +SKIP
    """
    from unity.runtime.cuda.kernels import is_cuda_library, load_cuda_library

    if os.path.isfile(str(path)) and is_cuda_library(str(path)):  # a cuda executable
        from unity.runtime.vm_executable import attach_vm

        return attach_vm(str(path), load_cuda_library(str(path)))  # type: ignore[return-value]
    try:
        lib = ctypes.CDLL(os.path.abspath(str(path)))  # a bare "model.so" means ./model.so
    except OSError as err:
        raise ValueError(f"load_module: cannot open {path}: {err}") from None
    try:
        cell = ctypes.c_char.in_dll(lib, METADATA_SYMBOL)
    except ValueError:
        raise ValueError(
            f"load_module: {path} is not a unity library (no {METADATA_SYMBOL})"
        ) from None
    metadata = json.loads(ctypes.string_at(ctypes.addressof(cell)).decode())

    def address_of(symbol: str) -> int:
        try:
            return ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value or 0
        except AttributeError:
            try:
                return ctypes.addressof(ctypes.c_int32.in_dll(lib, symbol))
            except ValueError:
                return 0

    def exporter(dest: str) -> None:
        shutil.copyfile(path, dest)

    module = Module(metadata, address_of, exporter=exporter, keepalive=lib)
    from unity.runtime.vm_executable import attach_vm  # a VM Executable when the file has one

    return attach_vm(str(path), module)
