"""`CudaPythonDriver`: the CUDA driver API through NVIDIA's `cuda-python` bindings.

`cuda.bindings.driver` (package `cuda-bindings` / `cuda-python`) ships binary wheels
and finds `libcuda` at run time, so it works on GPU machines where pycuda (source
only, built against the driver) is not installed.  Each call returns its `CUresult`
first; any other result raises `RuntimeError` naming the call and the driver's message.
Kernel arguments are packed as the driver wants them: an array of pointers, each to a
copy of one argument (a numpy scalar of the parameter's type; a device pointer as a
64-bit integer).

Example:
    >>> drv = CudaPythonDriver(0)                                  # doctest: +SKIP
    >>> fn = drv.load_ptx(ptx).get_function("main_kernel0")         # doctest: +SKIP
    >>> drv.launch(fn, (4, 1, 1), (64, 1, 1), [drv.alloc(1024), np.int32(3)])  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from unity.runtime.cuda.driver import CudaDriver, CudaUnavailableError


def _bindings() -> Any:
    """`cuda.bindings.driver` (older releases: `cuda.cuda`); CudaUnavailableError if absent."""
    try:
        from cuda.bindings import driver as cu
    except ImportError as err:
        try:
            from cuda import cuda as cu  # type: ignore[no-redef]  # cuda-python before 12.6
        except ImportError:
            raise CudaUnavailableError(f"cuda-python is not installed (pip install cuda-python) "
                                       f"({err})") from None
    return cu


class _Memory:
    """A device allocation, freed when this object goes."""

    def __init__(self, drv: CudaPythonDriver, ptr: Any, nbytes: int) -> None:
        self.drv, self.ptr, self.nbytes = drv, ptr, nbytes

    def __int__(self) -> int:
        return int(self.ptr)

    def __del__(self) -> None:
        try:
            self.drv.cu.cuMemFree(self.ptr)
        except Exception:  # noqa: BLE001,S110  # the interpreter may be shutting down
            pass


class _Module:
    """A loaded PTX module: `get_function(name)` -> the kernel handle (looked up once)."""

    def __init__(self, drv: CudaPythonDriver, module: Any) -> None:
        self.drv, self.module, self.functions = drv, module, {}

    def get_function(self, name: str) -> Any:
        fn = self.functions.get(name)
        if fn is None:
            fn = self.drv.call("cuModuleGetFunction", self.module, name.encode())
            self.functions[name] = fn
        return fn


class CudaPythonDriver(CudaDriver):
    """A CUDA context (the device's primary one) through `cuda.bindings.driver`.

    Example:
        >>> drv = CudaPythonDriver(0)  # doctest: +SKIP
        >>> drv.to_host(drv.to_device(np.ones(4, "float32")), np.empty(4, "float32"))  # doctest: +SKIP
    """

    backend = "cuda-python"

    def __init__(self, device_id: int = 0, bindings: Any = None) -> None:
        self.cu = bindings if bindings is not None else _bindings()
        self.device_id = device_id
        try:
            self.call("cuInit", 0)
            count = self.call("cuDeviceGetCount")
            if count <= device_id:
                raise CudaUnavailableError(f"CUDA device {device_id} does not exist ({count} found)")
            self.device = self.call("cuDeviceGet", device_id)
            self.context = self.call("cuDevicePrimaryCtxRetain", self.device)
            self.call("cuCtxSetCurrent", self.context)
        except CudaUnavailableError:
            raise
        except Exception as err:  # noqa: BLE001  # no libcuda: the bindings raise their own errors
            raise CudaUnavailableError(f"cuda-python found no usable GPU: {err}") from None

    def call(self, name: str, *args: Any) -> Any:
        """Driver call `name` on `args`: its value(s), or `RuntimeError` on an error result.

        Example:
            >>> drv.call("cuDeviceGetCount")  # doctest: +SKIP
            1
        """
        return self.check(name, getattr(self.cu, name)(*args))

    def check(self, call: str, result: Any) -> Any:
        """The value(s) after a call's `CUresult`; raise on an error result.

        Example:
            >>> drv.check("cuDeviceGetCount", drv.cu.cuDeviceGetCount())  # doctest: +SKIP
            1
        """
        err, *values = result if isinstance(result, tuple) else (result,)
        if int(err) != 0:
            got = self.cu.cuGetErrorString(err)
            text = str(err)
            if isinstance(got, tuple) and isinstance(got[1], bytes):
                text = got[1].decode()
            raise RuntimeError(f"CUDA driver call {call} failed: {text} ({err})")
        return values[0] if len(values) == 1 else tuple(values) if values else None

    def load_ptx(self, ptx: str) -> _Module:
        """Load PTX, JIT-compiled for this device.

        Example:
            >>> fn = drv.load_ptx(ptx).get_function("main_kernel0")  # doctest: +SKIP
        """
        return _Module(self, self.call("cuModuleLoadData", ptx.encode() + b"\0"))

    def launch(self, fn: Any, grid: tuple[int, ...], block: tuple[int, ...], args: list[Any]) -> None:
        """Launch `fn`: each argument copied into its own slot, the slots' addresses in an
        array (`kernelParams`).

        Example:
            >>> drv.launch(fn, (1, 1, 1), (32, 1, 1), [mem, np.int32(7)])  # doctest: +SKIP
        """
        slots = [_slot(a) for a in args]  # alive until the launch has copied them
        params = np.array([s.ctypes.data for s in slots], dtype=np.uint64)
        self.call("cuLaunchKernel", fn, *(int(g) for g in grid), *(int(b) for b in block), 0, 0,
                  params.ctypes.data if slots else 0, 0)

    def alloc(self, nbytes: int) -> _Memory:
        """Device memory of `nbytes` bytes (freed with the returned object).

        Example:
            >>> int(drv.alloc(1024)) > 0  # doctest: +SKIP
            True
        """
        size = max(int(nbytes), 1)
        return _Memory(self, self.call("cuMemAlloc", size), size)

    def address(self, mem: Any) -> int:
        """The device address of `mem`.

        Example:
            >>> drv.address(drv.alloc(4)) > 0  # doctest: +SKIP
            True
        """
        return int(mem)

    def write(self, mem: Any, offset: int, array: np.ndarray) -> None:
        """Copy the contiguous host `array` to byte `offset` of `mem`.

        Example:
            >>> drv.write(mem, 0, np.ones(4, "float32"))  # doctest: +SKIP
        """
        array = np.asarray(array, order="C")
        if array.nbytes:
            self.call("cuMemcpyHtoD", int(mem) + offset, array.ctypes.data, array.nbytes)

    def read(self, mem: Any, offset: int, out: np.ndarray) -> None:
        """Copy `out.nbytes` bytes from byte `offset` of `mem` into the contiguous `out`.

        Example:
            >>> drv.read(mem, 0, np.empty(4, "float32"))  # doctest: +SKIP
        """
        if not out.flags.c_contiguous:
            raise ValueError("CudaPythonDriver.read: the host array must be contiguous")
        if out.nbytes:
            self.call("cuMemcpyDtoH", out.ctypes.data, int(mem) + offset, out.nbytes)

    def synchronize(self) -> None:
        """Wait for the device.

        Example:
            >>> drv.synchronize()  # doctest: +SKIP
        """
        self.call("cuCtxSynchronize")

    def time_launches(self, launch: Callable[[], None], number: int) -> float:
        """Seconds `number` calls of `launch()` take on the device, between two CUDA events.

        Example:
            >>> drv.time_launches(lambda: None, 10)  # doctest: +SKIP
        """
        start = self.call("cuEventCreate", 0)
        end = self.call("cuEventCreate", 0)
        try:
            self.call("cuEventRecord", start, 0)
            for _ in range(number):
                launch()
            self.call("cuEventRecord", end, 0)
            self.call("cuEventSynchronize", end)
            return self.call("cuEventElapsedTime", start, end) / 1e3
        finally:
            self.cu.cuEventDestroy(start)
            self.cu.cuEventDestroy(end)


def _slot(arg: Any) -> np.ndarray:
    """One kernel argument as a one-element array: numpy scalars keep their type, device
    memory becomes its 64-bit address."""
    if isinstance(arg, np.generic):
        return np.array([arg])
    return np.array([int(arg)], dtype=np.uint64)
