"""`EmulatedDriver`: a stand-in CUDA driver running kernels in the CPU GPU emulator.

Device memory is host memory (numpy bytes); `launch` runs the kernel's lowered TIR in
`unity.tir.gpu_emulator`, with every block and thread emulated (races and
out-of-bounds accesses raise).  `load_module(source)` finds the kernels' TIR by their
CUDA source, as `CudaKernels` registered it when it was compiled in this process
(a model loaded from a file carries no TIR, so it cannot be emulated in a new process).
Install it with `use_driver` so that `unity.cuda()` tensors and the VM use it.

Example:
    >>> import numpy as np
    >>> from unity.runtime.cuda.device_api import use_driver
    >>> import unity
    >>> with use_driver(EmulatedDriver()):
    ...     unity.runtime.tensor(np.arange(3, dtype="float32"), unity.cuda()).numpy().tolist()
    [0.0, 1.0, 2.0]
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

_SOURCES: dict[str, Any] = {}


def register_source(source: str, lowered: Any) -> None:
    """Remember the lowered TIR module whose CUDA C is `source` (for emulated launches).

    Example:
        >>> register_source("// empty", None)
    """
    _SOURCES[source] = lowered


class _EmulatedModule:
    def __init__(self, lowered: Any) -> None:
        self.lowered = lowered

    def get_function(self, name: str) -> tuple[str, Any]:
        return name, self.lowered[name]


class EmulatedDriver:
    """The `CudaDriver` API over host memory and the GPU emulator.

    Attributes:
        launches: How many kernels have been launched (for tests).
        sample_blocks: Emulate only this many blocks of each launch (spread from the first
            to the last; None: all): a race and bounds check of a whole model, whose
            results are then only partly computed.

    Example:
        >>> EmulatedDriver().alloc(8).nbytes
        8
    """

    emulated = True

    def __init__(self, sample_blocks: int | None = None) -> None:
        self.launches = 0
        self.sample_blocks = sample_blocks

    def alloc(self, nbytes: int) -> np.ndarray:
        """Device memory: `nbytes` zeroed bytes.

        Example:
            >>> EmulatedDriver().alloc(4)
            array([0, 0, 0, 0], dtype=uint8)
        """
        return np.zeros(max(int(nbytes), 1), np.uint8)[: int(nbytes)]

    def to_device(self, array: np.ndarray) -> np.ndarray:
        """A copy of `array` in new memory.

        Example:
            >>> EmulatedDriver().to_device(np.array([1], "int16"))
            array([1, 0], dtype=uint8)
        """
        mem = self.alloc(array.nbytes)
        self.write(mem, 0, array)
        return mem

    def to_host(self, mem: np.ndarray, out: np.ndarray) -> None:
        """Copy `mem` into `out`.

        Example:
            >>> drv, out = EmulatedDriver(), np.empty(2, "int32")
            >>> drv.to_host(drv.to_device(np.array([7, 8], "int32")), out)
            >>> out
            array([7, 8], dtype=int32)
        """
        self.read(mem, 0, out)

    def write(self, mem: np.ndarray, offset: int, array: np.ndarray) -> None:
        """Copy `array` to byte `offset` of `mem`.

        Example:
            >>> drv = EmulatedDriver()
            >>> mem = drv.alloc(4)
            >>> drv.write(mem, 2, np.array([5, 6], "uint8"))
            >>> mem
            array([0, 0, 5, 6], dtype=uint8)
        """
        raw = np.asarray(array, order="C").reshape(-1).view(np.uint8)
        mem[offset: offset + raw.size] = raw

    def read(self, mem: np.ndarray, offset: int, out: np.ndarray) -> None:
        """Copy bytes from byte `offset` of `mem` into the contiguous array `out`.

        Example:
            >>> drv, out = EmulatedDriver(), np.empty(1, "uint8")
            >>> drv.read(np.array([1, 2, 3], "uint8"), 2, out)
            >>> out
            array([3], dtype=uint8)
        """
        out.reshape(-1).view(np.uint8)[...] = mem[offset: offset + out.nbytes]

    def pointer(self, mem: np.ndarray, offset: int, nbytes: int, dtype: str) -> np.ndarray:
        """The kernel's view of `nbytes` bytes at `offset`: a flat array of `dtype`.

        Example:
            >>> drv = EmulatedDriver()
            >>> mem = drv.to_device(np.array([1.0, 2.0, 3.0], "float32"))
            >>> drv.pointer(mem, 4, 8, "float32")
            array([2., 3.], dtype=float32)
        """
        from unity.runtime.tensor import numpy_dtype

        dt = numpy_dtype(dtype)
        count = nbytes // dt.itemsize
        return mem[offset: offset + count * dt.itemsize].view(dt)

    def load_module(self, source: str, arch: str | None = None) -> _EmulatedModule:
        """The kernels compiled to `source` (their TIR, registered when they were built).

        Example:
            >>> from unity import tir
            >>> from unity.ir.module import IRModule
            >>> A, tx = tir.decl_buffer((4,), "float32", "A"), tir.Var("tx")
            >>> store = tir.BufferStore(A, A[tx] * 2.0, (tx,))
            >>> body = tir.For(tx, tir.const(0), tir.const(4), tir.ForKind.THREAD_BINDING, store,
            ...                thread_binding="threadIdx.x")
            >>> register_source("// double", IRModule({"double": tir.PrimFunc((A,), body)}))
            >>> drv = EmulatedDriver()
            >>> name, kernel = drv.load_module("// double").get_function("double")
            >>> name, len(kernel.params)
            ('double', 1)
        """
        lowered = _SOURCES.get(source)
        if lowered is None:
            raise RuntimeError(
                "EmulatedDriver: these kernels were not compiled in this process, so their TIR "
                "is unknown (an exported model holds CUDA C and PTX only); compile the model "
                "again to emulate it"
            )
        return _EmulatedModule(lowered)

    def launch(self, fn: tuple[str, Any], grid: tuple[int, ...], block: tuple[int, ...],
               args: list[Any]) -> None:
        """Run kernel `fn` over the grid in the emulator.

        Example:
            >>> from unity import tir
            >>> from unity.ir.module import IRModule
            >>> A, tx = tir.decl_buffer((4,), "float32", "A"), tir.Var("tx")
            >>> store = tir.BufferStore(A, A[tx] * 2.0, (tx,))
            >>> body = tir.For(tx, tir.const(0), tir.const(4), tir.ForKind.THREAD_BINDING, store,
            ...                thread_binding="threadIdx.x")
            >>> register_source("// double", IRModule({"double": tir.PrimFunc((A,), body)}))
            >>> drv = EmulatedDriver()
            >>> fn = drv.load_module("// double").get_function("double")
            >>> mem = drv.to_device(np.arange(4, dtype="float32"))
            >>> drv.launch(fn, (1, 1, 1), (4, 1, 1), [drv.pointer(mem, 0, 16, "float32")])
            >>> drv.pointer(mem, 0, 16, "float32"), drv.launches
            (array([0., 2., 4., 6.], dtype=float32), 1)
        """
        from unity.tir.gpu_emulator import _emulate_launch

        name, kernel = fn
        self.launches += 1
        with np.errstate(all="ignore"):
            _emulate_launch(name, kernel, list(grid), list(block), list(args), self.sample_blocks)

    def synchronize(self) -> None:
        """Nothing to wait for: every launch is synchronous.

        Example:
            >>> EmulatedDriver().synchronize()
        """

    def time_launches(self, launch: Any, number: int) -> float:
        """Wall seconds of `number` calls of `launch()` (emulated: not a GPU's time).

        Example:
            >>> EmulatedDriver().time_launches(lambda: None, 3) >= 0
            True
        """
        start = time.perf_counter()
        for _ in range(number):
            launch()
        return time.perf_counter() - start
