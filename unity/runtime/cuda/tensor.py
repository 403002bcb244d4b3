"""`CUDATensor`: a `Tensor` whose data lives in CUDA device memory.

Made by ``unity.runtime.tensor(x, unity.cuda())`` / ``empty(shape, dtype, unity.cuda())``;
``.numpy()`` copies back to the host, ``copyfrom`` copies in (from numpy or any tensor).

Example:
    >>> import numpy as np, unity
    >>> from unity.runtime.cuda.device_api import use_driver
    >>> from unity.runtime.cuda.emulated import EmulatedDriver
    >>> with use_driver(EmulatedDriver()):
    ...     t = unity.runtime.tensor(np.ones((2, 2), "float32"), unity.cuda())
    ...     t.copyfrom(np.full((2, 2), 3, "float32")).numpy()[0].tolist()
    [3.0, 3.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from unity.runtime.cuda.device_api import DevicePtr, alloc, to_device
from unity.runtime.device import Device
from unity.runtime.tensor import Tensor, numpy_dtype


class CUDATensor(Tensor):
    """An n-d array in device memory `ptr` (C-contiguous).

    Example:
        >>> t = cuda_empty((4,), "float32", Device("cuda", 0))  # doctest: +SKIP
        >>> t.shape, t.dtype                                   # doctest: +SKIP
        ((4,), 'float32')
    """

    __slots__ = ("_dtype", "_shape", "ptr")

    def __init__(self, ptr: DevicePtr, shape: Sequence[int], dtype: str, device: Device) -> None:
        shape = tuple(int(d) for d in shape)
        need = math.prod(shape) * numpy_dtype(dtype).itemsize
        if need > ptr.nbytes:
            raise ValueError(
                f"CUDATensor: shape {shape} of {dtype} needs {need} bytes, the memory has "
                f"{ptr.nbytes}"
            )
        self.ptr, self._shape, self._dtype, self.device = ptr, shape, str(dtype), device

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, as a tuple of ints."""
        return self._shape

    @property
    def dtype(self) -> str:
        """The dtype name."""
        return self._dtype

    @property
    def nbytes(self) -> int:
        """Bytes the contents take."""
        return math.prod(self._shape) * numpy_dtype(self._dtype).itemsize

    def numpy(self) -> np.ndarray:
        """A host copy of the contents.

        Example:
            >>> t.numpy()  # doctest: +SKIP
        """
        out = np.empty(self._shape, numpy_dtype(self._dtype))
        self.ptr.at(0, self.nbytes).read(out)
        return out

    def copyfrom(self, source: np.ndarray | Tensor) -> CUDATensor:
        """Copy `source` (same shape and dtype; numpy or any tensor) into this tensor."""
        data = source.numpy() if isinstance(source, Tensor) else np.asarray(source)
        if data.shape != self._shape:
            raise ValueError(f"copyfrom: shape {data.shape} does not match {self.shape}")
        self.ptr.at(0, self.nbytes).write(data.astype(numpy_dtype(self._dtype), copy=False))
        return self

    def copyto(self, target: Device | Tensor) -> Tensor:
        """This tensor's contents on `target` (a device: a new tensor; a tensor: copied in).

        Example:
            >>> t.copyto(unity.cpu()).numpy()  # doctest: +SKIP
        """
        if isinstance(target, Tensor):
            return target.copyfrom(self.numpy())
        from unity.runtime.tensor import tensor

        return tensor(self.numpy(), target)

    def __repr__(self) -> str:
        return f"<Tensor shape={self.shape} dtype={self.dtype} device={self.device}>"


def cuda_tensor(array: np.ndarray, device: Device) -> CUDATensor:
    """A copy of the host `array` on CUDA `device`.

    Example:
        >>> cuda_tensor(np.zeros(3, "int32"), Device("cuda", 0))  # doctest: +SKIP
    """
    array = np.asarray(array, order="C")
    return CUDATensor(to_device(device.device_id, array), array.shape, array.dtype.name, device)


def cuda_empty(shape: Sequence[int], dtype: str, device: Device) -> CUDATensor:
    """An uninitialized tensor on CUDA `device`.

    Example:
        >>> cuda_empty((2, 3), "float16", Device("cuda", 0)).shape  # doctest: +SKIP
        (2, 3)
    """
    nbytes = math.prod(int(d) for d in shape) * numpy_dtype(dtype).itemsize
    return CUDATensor(alloc(device.device_id, nbytes), shape, dtype, device)
