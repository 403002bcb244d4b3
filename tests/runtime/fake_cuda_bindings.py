"""A stand-in for `cuda.bindings.driver` on host memory: `CudaPythonDriver` runs on it.

"Device" memory is numpy bytes addressed by their real host addresses (so copies are
`ctypes.memmove`); a launch reads the kernel's arguments out of the `kernelParams`
array of pointers as the driver would, then runs the kernel's lowered TIR in the GPU
emulator.  Every call returns its result code first, as the real bindings do.
"""

from __future__ import annotations

import ctypes
import time
from typing import Any

import numpy as np

from unity.ir import dtype as dt
from unity.tir.buffer import Buffer
from unity.tir.gpu_emulator import _compiled, run_grid


class FakeBindings:
    """The driver calls `CudaPythonDriver` makes, on host memory; kernels from `lowered`."""

    def __init__(self, lowered: Any = None, fail: str | None = None) -> None:
        self.lowered, self.fail = lowered, fail
        self.memory: dict[int, np.ndarray] = {}
        self.launches: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []
        self.modules: list[bytes] = []

    def _result(self, call: str, *values: Any) -> tuple[Any, ...]:
        return (999 if call == self.fail else 0, *values)

    def cuGetErrorString(self, err: int) -> tuple[int, bytes]:
        return 0, b"fake failure"

    def cuInit(self, flags: int) -> tuple[Any, ...]:
        return self._result("cuInit")

    def cuDeviceGetCount(self) -> tuple[Any, ...]:
        return self._result("cuDeviceGetCount", 1)

    def cuDeviceGet(self, ordinal: int) -> tuple[Any, ...]:
        return self._result("cuDeviceGet", ordinal)

    def cuDevicePrimaryCtxRetain(self, dev: int) -> tuple[Any, ...]:
        return self._result("cuDevicePrimaryCtxRetain", "context")

    def cuCtxSetCurrent(self, ctx: Any) -> tuple[Any, ...]:
        return self._result("cuCtxSetCurrent")

    def cuCtxSynchronize(self) -> tuple[Any, ...]:
        return self._result("cuCtxSynchronize")

    def cuModuleLoadData(self, image: bytes) -> tuple[Any, ...]:
        assert image.endswith(b"\0")  # the driver reads PTX as a C string
        self.modules.append(image)
        return self._result("cuModuleLoadData", image)

    def cuModuleGetFunction(self, module: bytes, name: bytes) -> tuple[Any, ...]:
        assert b".entry " + name in module, name
        return self._result("cuModuleGetFunction", name.decode())

    def cuMemAlloc(self, size: int) -> tuple[Any, ...]:
        mem = np.zeros(size, np.uint8)
        self.memory[mem.ctypes.data] = mem
        return self._result("cuMemAlloc", mem.ctypes.data)

    def cuMemFree(self, ptr: int) -> tuple[Any, ...]:
        self.memory.pop(int(ptr), None)
        return self._result("cuMemFree")

    def cuMemcpyHtoD(self, dst: int, src: int, nbytes: int) -> tuple[Any, ...]:
        self._check_range(dst, nbytes)
        ctypes.memmove(dst, src, nbytes)
        return self._result("cuMemcpyHtoD")

    def cuMemcpyDtoH(self, dst: int, src: int, nbytes: int) -> tuple[Any, ...]:
        self._check_range(src, nbytes)
        ctypes.memmove(dst, src, nbytes)
        return self._result("cuMemcpyDtoH")

    def cuEventCreate(self, flags: int) -> tuple[Any, ...]:
        return self._result("cuEventCreate", [0.0])

    def cuEventRecord(self, event: list, stream: int) -> tuple[Any, ...]:
        event[0] = time.perf_counter()
        return self._result("cuEventRecord")

    def cuEventSynchronize(self, event: list) -> tuple[Any, ...]:
        return self._result("cuEventSynchronize")

    def cuEventElapsedTime(self, start: list, end: list) -> tuple[Any, ...]:
        return self._result("cuEventElapsedTime", (end[0] - start[0]) * 1e3)

    def cuEventDestroy(self, event: list) -> tuple[Any, ...]:
        return self._result("cuEventDestroy")

    def cuLaunchKernel(self, fn: str, gx: int, gy: int, gz: int, bx: int, by: int, bz: int,
                       shared: int, stream: int, params: int, extra: int) -> tuple[Any, ...]:
        kernel = self.lowered[fn]
        slots = (ctypes.c_uint64 * len(kernel.params)).from_address(params)
        values = []
        for param, slot in zip(kernel.params, slots):
            if isinstance(param, Buffer):
                address = ctypes.c_uint64.from_address(slot).value
                values.append(self._view(address, dt.numpy_name(param.dtype)))
            else:
                value = np.empty(1, dt.numpy_name(param.dtype))
                ctypes.memmove(value.ctypes.data, slot, value.nbytes)
                values.append(value[0])
        self.launches.append((fn, (gx, gy, gz), (bx, by, bz)))
        run_grid(_compiled(kernel), fn, values, [gx, gy, gz], [bx, by, bz])
        return self._result("cuLaunchKernel")

    def _view(self, address: int, dtype: str) -> np.ndarray:
        for base, mem in self.memory.items():
            if base <= address < base + mem.nbytes:
                rest = mem[address - base:]  # whole elements of `dtype` (a pool's tail may be ragged)
                return rest[:rest.size // np.dtype(dtype).itemsize * np.dtype(dtype).itemsize].view(dtype)
        raise AssertionError(f"kernel argument {address:#x} is not device memory")

    def _check_range(self, address: int, nbytes: int) -> None:
        for base, mem in self.memory.items():
            if base <= address and address + nbytes <= base + mem.nbytes:
                return
        raise AssertionError(f"copy of {nbytes} bytes at {address:#x} leaves device memory")
