"""Device memory for tensors and the VM: `DevicePtr`, and which driver a device uses.

`active_driver(device_id)` is `unity.runtime.cuda.driver()` (pycuda or cuda-python)
unless a stand-in is installed with `use_driver` (tests install the CPU emulator's
`EmulatedDriver`).  Everything else reaches the GPU through the driver's thin API
(`alloc`, `to_device`, `to_host`, `read(mem, offset, out)`, `write(mem, offset,
array)`, `pointer(mem, offset, nbytes, dtype)`, `load_module`, `launch`,
`synchronize`).

Example:
    >>> from unity.runtime.cuda.emulated import EmulatedDriver
    >>> with use_driver(EmulatedDriver()):
    ...     ptr = alloc(0, 16)
    >>> ptr.nbytes
    16
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

_OVERRIDE: list[Any] = []


def active_driver(device_id: int = 0) -> Any:
    """The driver of CUDA device `device_id`: a stand-in from `use_driver`, else `driver()`.

    Raises:
        CudaUnavailableError: no stand-in, and no CUDA backend or no GPU.

    Example:
        >>> active_driver(0)  # doctest: +SKIP
    """
    if _OVERRIDE:
        return _OVERRIDE[-1]
    from unity.runtime.cuda.driver import driver

    return driver(device_id)


@contextlib.contextmanager
def use_driver(drv: Any) -> Iterator[Any]:
    """Run CUDA work through `drv` (for example the emulator) inside the `with` block.

    Example:
        >>> from unity.runtime.cuda.emulated import EmulatedDriver
        >>> with use_driver(EmulatedDriver()) as drv:
        ...     active_driver(0) is drv
        True
    """
    _OVERRIDE.append(drv)
    try:
        yield drv
    finally:
        _OVERRIDE.remove(drv)


@dataclass(frozen=True)
class DevicePtr:
    """`nbytes` bytes at byte `offset` of the device allocation `mem` (owned by `driver`).

    Example:
        >>> DevicePtr(None, None, 8, 4).end
        12
    """

    driver: Any
    mem: Any
    nbytes: int
    offset: int = 0

    @property
    def end(self) -> int:
        """One past the last byte, from the start of the allocation."""
        return self.offset + self.nbytes

    def at(self, offset: int, nbytes: int) -> DevicePtr:
        """The `nbytes` bytes at byte `offset` of this memory (a view; no copy).

        Example:
            >>> DevicePtr(None, None, 64).at(16, 8).offset
            16
        """
        if offset < 0 or offset + nbytes > self.nbytes:
            raise ValueError(
                f"DevicePtr.at: bytes [{offset}, {offset + nbytes}) are outside this "
                f"{self.nbytes}-byte device memory"
            )
        return DevicePtr(self.driver, self.mem, nbytes, self.offset + offset)

    def write(self, array: np.ndarray) -> None:
        """Copy the host array (exactly `nbytes` bytes) to this memory.

        Example:
            >>> from unity.runtime.cuda.emulated import EmulatedDriver
            >>> drv = EmulatedDriver()
            >>> ptr = DevicePtr(drv, drv.alloc(8), 8)
            >>> ptr.write(np.array([1, 2], "int32"))
            >>> ptr.read(np.empty(2, "int32"))
            array([1, 2], dtype=int32)
        """
        array = np.asarray(array, order="C")
        if array.nbytes != self.nbytes:
            raise ValueError(f"DevicePtr.write: {array.nbytes} bytes into {self.nbytes}")
        self.driver.write(self.mem, self.offset, array)

    def read(self, out: np.ndarray) -> np.ndarray:
        """Copy this memory into the contiguous host array `out` and return it.

        Example:
            >>> from unity.runtime.cuda.emulated import EmulatedDriver
            >>> drv = EmulatedDriver()
            >>> ptr = DevicePtr(drv, drv.to_device(np.arange(4, dtype="int32")), 16)
            >>> ptr.at(8, 8).read(np.empty(2, "int32"))
            array([2, 3], dtype=int32)
        """
        if out.nbytes != self.nbytes:
            raise ValueError(f"DevicePtr.read: {self.nbytes} bytes into {out.nbytes}")
        self.driver.read(self.mem, self.offset, out)
        return out

    def kernel_arg(self, dtype: str) -> Any:
        """This pointer as a launch argument of a `dtype*` kernel parameter.

        Example:
            >>> from unity.runtime.cuda.emulated import EmulatedDriver
            >>> drv = EmulatedDriver()
            >>> ptr = DevicePtr(drv, drv.to_device(np.array([1.5, 2.5], "float32")), 8)
            >>> ptr.kernel_arg("float32")  # the emulator's view; a GPU driver gets the address
            array([1.5, 2.5], dtype=float32)
        """
        return self.driver.pointer(self.mem, self.offset, self.nbytes, dtype)


def alloc(device_id: int, nbytes: int) -> DevicePtr:
    """`nbytes` bytes of new memory on CUDA device `device_id`.

    Example:
        >>> alloc(0, 1024)  # doctest: +SKIP
    """
    drv = active_driver(device_id)
    return DevicePtr(drv, drv.alloc(int(nbytes)), int(nbytes))


def to_device(device_id: int, array: np.ndarray) -> DevicePtr:
    """New device memory holding a copy of `array`.

    Example:
        >>> to_device(0, np.ones(4, "float32"))  # doctest: +SKIP
    """
    ptr = alloc(device_id, array.nbytes)
    ptr.write(array)
    return ptr
