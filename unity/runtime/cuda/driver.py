"""`CudaDriver`: module loading, kernel launch and host/device copies over pycuda.

Example:
    >>> from unity.runtime.cuda import driver
    >>> drv = driver()                                   # doctest: +SKIP
    >>> fn = drv.load_module(source, "sm_90").get_function("main_kernel0")  # doctest: +SKIP
    >>> drv.launch(fn, (4, 1, 1), (64, 1, 1), [a_dev, b_dev])              # doctest: +SKIP
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np


class CudaUnavailableError(RuntimeError):
    """pycuda or a CUDA GPU is missing.

    Example:
        >>> err = CudaUnavailableError("CUDA is not available: pycuda is not installed")
        >>> isinstance(err, RuntimeError), str(err)
        (True, 'CUDA is not available: pycuda is not installed')
    """


def is_available() -> bool:
    """True when pycuda imports and a CUDA device is present.

    Example:
        >>> is_available() in (True, False)
        True
    """
    try:
        driver()
    except CudaUnavailableError:
        return False
    return True


@functools.cache
def driver(device_id: int = 0) -> CudaDriver:
    """The driver for GPU `device_id` (created once; raises when CUDA is unavailable).

    Example:
        >>> driver()  # doctest: +SKIP
    """
    return CudaDriver(device_id)


class CudaDriver:
    """A CUDA context on one device, through pycuda.

    Example:
        >>> drv = CudaDriver(0)  # doctest: +SKIP
        >>> mem = drv.to_device(np.arange(4, dtype="float32"))  # doctest: +SKIP
    """

    def __init__(self, device_id: int = 0) -> None:
        try:
            import pycuda.driver as cuda
        except ImportError as err:
            raise CudaUnavailableError(
                "CUDA is not available: pycuda is not installed (it needs a CUDA driver to "
                f"build; pip install pycuda on a machine with a GPU) ({err})"
            ) from None
        try:
            cuda.init()
            if cuda.Device.count() <= device_id:
                raise CudaUnavailableError(f"CUDA device {device_id} does not exist "
                                           f"({cuda.Device.count()} found)")
            self.context = cuda.Device(device_id).retain_primary_context()
            self.context.push()
        except cuda.Error as err:
            raise CudaUnavailableError(f"CUDA is not available: {err}") from None
        self.cuda = cuda
        self.device_id = device_id

    def load_module(self, source: str, arch: str | None = None) -> Any:
        """Compile CUDA C `source` with nvcc (through pycuda) and load it.

        Example:
            >>> mod = driver().load_module(src, "sm_90")  # doctest: +SKIP
        """
        from pycuda.compiler import SourceModule

        return SourceModule(source, no_extern_c=True, arch=arch, options=["-std=c++17"])

    def launch(self, fn: Any, grid: tuple[int, ...], block: tuple[int, ...], args: list[Any]) -> None:
        """Launch kernel `fn` (from `load_module(...).get_function(name)`).

        Example:
            >>> driver().launch(fn, (1, 1, 1), (32, 1, 1), [ptr, np.int32(7)])  # doctest: +SKIP
        """
        fn(*args, grid=tuple(grid), block=tuple(block))

    def alloc(self, nbytes: int) -> Any:
        """Device memory of `nbytes` bytes.

        Example:
            >>> mem = driver().alloc(1024)  # doctest: +SKIP
        """
        return self.cuda.mem_alloc(max(nbytes, 1))

    def to_device(self, array: np.ndarray) -> Any:
        """Copy a host array to new device memory.

        Example:
            >>> mem = driver().to_device(np.ones(4, "float32"))  # doctest: +SKIP
        """
        mem = self.alloc(array.nbytes)
        self.cuda.memcpy_htod(mem, np.ascontiguousarray(array))
        return mem

    def to_host(self, mem: Any, out: np.ndarray) -> None:
        """Copy device memory into the contiguous host array `out`.

        Example:
            >>> out = np.empty(4, "float32")  # doctest: +SKIP
            >>> driver().to_host(driver().to_device(np.ones(4, "float32")), out)  # doctest: +SKIP
        """
        self.cuda.memcpy_dtoh(out, mem)

    def synchronize(self) -> None:
        """Wait for the device.

        Example:
            >>> driver().synchronize()  # doctest: +SKIP
        """
        self.context.synchronize()

    def time_launches(self, launch: Any, number: int) -> float:
        """Seconds `number` calls of `launch()` take on the device, between two CUDA events.

        Example:
            >>> driver().time_launches(lambda: None, 10)  # doctest: +SKIP
        """
        start, end = self.cuda.Event(), self.cuda.Event()
        start.record()
        for _ in range(number):
            launch()
        end.record()
        end.synchronize()
        return start.time_till(end) / 1e3
