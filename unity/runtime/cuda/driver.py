"""`driver()`: the CUDA device through pycuda, or through NVIDIA's `cuda-python` bindings.

The launch layer is thin on purpose: load PTX, get a function, launch it, allocate,
copy, time with events.  `CudaDriver` holds what both backends share (CUDA C is
compiled to PTX with nvcc, `unity.codegen.cuda_build.compile_ptx`, and JIT-loaded for
the device at hand); `PycudaDriver` and `CudaPythonDriver`
(`unity.runtime.cuda.driver_cuda_python`) hold the rest.  `driver()` takes pycuda
when it imports, else `cuda-python` (its `cuda.bindings.driver`, which needs no build:
GPU images often carry it where pycuda, a source-only package, cannot be built), and
otherwise raises `CudaUnavailableError` saying what each lacks.  Neither is imported
before the first use.

Example:
    >>> from unity.runtime.cuda import driver
    >>> drv = driver()                                   # doctest: +SKIP
    >>> fn = drv.load_module(source, "sm_90").get_function("main_kernel0")  # doctest: +SKIP
    >>> drv.launch(fn, (4, 1, 1), (64, 1, 1), [a_dev, b_dev])              # doctest: +SKIP
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np


class CudaUnavailableError(RuntimeError):
    """No CUDA backend (pycuda, cuda-python) or no CUDA GPU.

    Example:
        >>> err = CudaUnavailableError("CUDA is not available: pycuda is not installed")
        >>> isinstance(err, RuntimeError), str(err)
        (True, 'CUDA is not available: pycuda is not installed')
    """


def is_available() -> bool:
    """True when a CUDA backend imports and a CUDA device is present.

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
    """The driver for GPU `device_id` (created once): pycuda's, else cuda-python's.

    Raises:
        CudaUnavailableError: neither backend can reach a GPU; the message gives each
            one's reason.

    Example:
        >>> driver()  # doctest: +SKIP
    """
    from unity.runtime.cuda.driver_cuda_python import CudaPythonDriver

    reasons = []
    backends: tuple[Callable[[int], CudaDriver], ...] = (PycudaDriver, CudaPythonDriver)
    for backend in backends:
        try:
            return backend(device_id)
        except CudaUnavailableError as err:
            reasons.append(str(err))
    raise CudaUnavailableError("CUDA is not available: " + "; ".join(reasons))


class CudaDriver(ABC):
    """What the backends share; a backend adds `load_ptx`, `launch`, `alloc`, `write`,
    `read`, `address`, `synchronize` and `time_launches`.

    Example:
        >>> drv = driver()  # doctest: +SKIP
        >>> mem = drv.to_device(np.arange(4, dtype="float32"))  # doctest: +SKIP
    """

    backend = "none"
    """The name of the package underneath."""

    @abstractmethod
    def load_ptx(self, ptx: str) -> Any:
        """Load PTX; the result's `get_function(name)` gives a kernel for `launch`.

        Example:
            >>> fn = driver().load_ptx(ptx).get_function("main_kernel0")  # doctest: +SKIP
        """

    @abstractmethod
    def launch(self, fn: Any, grid: tuple[int, ...], block: tuple[int, ...], args: list[Any]) -> None:
        """Launch kernel `fn` on `grid` x `block` with `args` (numpy scalars, device memory
        or `pointer`s).

        Example:
            >>> driver().launch(fn, (1, 1, 1), (32, 1, 1), [mem, np.int32(7)])  # doctest: +SKIP
        """

    @abstractmethod
    def alloc(self, nbytes: int) -> Any:
        """Device memory of `nbytes` bytes (freed with the returned object).

        Example:
            >>> mem = driver().alloc(1024)  # doctest: +SKIP
        """

    @abstractmethod
    def address(self, mem: Any) -> int:
        """The device address of `mem`.

        Example:
            >>> driver().address(driver().alloc(4)) > 0  # doctest: +SKIP
            True
        """

    @abstractmethod
    def write(self, mem: Any, offset: int, array: np.ndarray) -> None:
        """Copy the contiguous host `array` to byte `offset` of `mem`.

        Example:
            >>> driver().write(mem, 0, np.ones(4, "float32"))  # doctest: +SKIP
        """

    @abstractmethod
    def read(self, mem: Any, offset: int, out: np.ndarray) -> None:
        """Copy `out.nbytes` bytes from byte `offset` of `mem` into `out`.

        Example:
            >>> driver().read(mem, 0, np.empty(4, "float32"))  # doctest: +SKIP
        """

    @abstractmethod
    def synchronize(self) -> None:
        """Wait for the device.

        Example:
            >>> driver().synchronize()  # doctest: +SKIP
        """

    @abstractmethod
    def time_launches(self, launch: Callable[[], None], number: int) -> float:
        """Seconds `number` calls of `launch()` take on the device, between two CUDA events.

        Example:
            >>> driver().time_launches(lambda: None, 10)  # doctest: +SKIP
        """

    def load_module(self, source: str, arch: str | None = None) -> Any:
        """Compile CUDA C `source` to PTX with nvcc and load it (JIT-compiled by the driver).

        Example:
            >>> mod = driver().load_module(src, "sm_90")  # doctest: +SKIP
        """
        from unity.codegen.cuda_build import compile_ptx

        return self.load_ptx(compile_ptx(source, arch))

    def to_device(self, array: np.ndarray) -> Any:
        """Copy a host array to new device memory.

        Example:
            >>> mem = driver().to_device(np.ones(4, "float32"))  # doctest: +SKIP
        """
        array = np.asarray(array, order="C")
        mem = self.alloc(array.nbytes)
        self.write(mem, 0, array)
        return mem

    def to_host(self, mem: Any, out: np.ndarray) -> None:
        """Copy device memory into the contiguous host array `out`.

        Example:
            >>> out = np.empty(4, "float32")  # doctest: +SKIP
            >>> driver().to_host(driver().to_device(np.ones(4, "float32")), out)  # doctest: +SKIP
        """
        self.read(mem, 0, out)

    def pointer(self, mem: Any, offset: int, nbytes: int, dtype: str) -> np.uintp:
        """Byte `offset` of `mem` as a kernel's pointer argument.

        Example:
            >>> driver().pointer(mem, 16, 64, "float32")  # doctest: +SKIP
        """
        return np.uintp(self.address(mem) + offset)


class PycudaDriver(CudaDriver):
    """A CUDA context on one device, through pycuda.

    Example:
        >>> drv = PycudaDriver(0)  # doctest: +SKIP
    """

    backend = "pycuda"

    def __init__(self, device_id: int = 0) -> None:
        try:
            import pycuda.driver as cuda
        except ImportError as err:
            raise CudaUnavailableError(
                "pycuda is not installed (it builds only against a CUDA driver: pip install "
                f"pycuda on a machine with a GPU) ({err})"
            ) from None
        try:
            cuda.init()
            if cuda.Device.count() <= device_id:
                raise CudaUnavailableError(f"CUDA device {device_id} does not exist "
                                           f"({cuda.Device.count()} found)")
            self.context = cuda.Device(device_id).retain_primary_context()
            self.context.push()
        except cuda.Error as err:
            raise CudaUnavailableError(f"pycuda found no usable GPU: {err}") from None
        self.cuda = cuda
        self.device_id = device_id

    def load_ptx(self, ptx: str) -> Any:
        """Load PTX (JIT-compiled for this device); `.get_function(name)` gives a kernel.

        Example:
            >>> fn = driver().load_ptx(ptx).get_function("main_kernel0")  # doctest: +SKIP
        """
        return self.cuda.module_from_buffer(ptx.encode())

    def launch(self, fn: Any, grid: tuple[int, ...], block: tuple[int, ...], args: list[Any]) -> None:
        """Launch kernel `fn` (from `load_ptx(...).get_function(name)`).

        Example:
            >>> driver().launch(fn, (1, 1, 1), (32, 1, 1), [ptr, np.int32(7)])  # doctest: +SKIP
        """
        fn(*args, grid=tuple(grid), block=tuple(block))

    def alloc(self, nbytes: int) -> Any:
        """Device memory of `nbytes` bytes (freed with the returned object).

        Example:
            >>> mem = driver().alloc(1024)  # doctest: +SKIP
        """
        return self.cuda.mem_alloc(max(nbytes, 1))

    def address(self, mem: Any) -> int:
        """The device address of `mem`.

        Example:
            >>> driver().address(driver().alloc(4)) > 0  # doctest: +SKIP
            True
        """
        return int(mem)

    def write(self, mem: Any, offset: int, array: np.ndarray) -> None:
        """Copy the contiguous host `array` to byte `offset` of `mem`.

        Example:
            >>> driver().write(mem, 0, np.ones(4, "float32"))  # doctest: +SKIP
        """
        self.cuda.memcpy_htod(int(mem) + offset, np.asarray(array, order="C"))

    def read(self, mem: Any, offset: int, out: np.ndarray) -> None:
        """Copy `out.nbytes` bytes from byte `offset` of `mem` into `out`.

        Example:
            >>> driver().read(mem, 0, np.empty(4, "float32"))  # doctest: +SKIP
        """
        self.cuda.memcpy_dtoh(out, int(mem) + offset)

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
