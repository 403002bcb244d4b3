"""`Tensor`: an n-d array on a device (on the CPU, a C-contiguous numpy array).

Example:
    >>> import numpy as np
    >>> from unity import runtime
    >>> t = runtime.tensor(np.arange(3, dtype="float32"), runtime.cpu())
    >>> t.shape, t.dtype, t.numpy().tolist()
    ((3,), 'float32', [0.0, 1.0, 2.0])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from unity.runtime.device import Device, cpu


class Tensor:
    """An array on `device`; compiled functions read and write it in place.

    Example:
        >>> Tensor(np.zeros((2, 2), "int8")).shape
        (2, 2)
    """

    __slots__ = ("_array", "device")

    def __init__(self, array: np.ndarray, device: Device | None = None) -> None:
        device = device if device is not None else cpu()
        if device.device_type != "cpu":
            raise ValueError(f"Tensor: device {device} is not supported yet; use unity.cpu()")
        self._array = np.asarray(array, order="C")
        self.device = device

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, as a tuple of ints."""
        return tuple(self._array.shape)

    @property
    def dtype(self) -> str:
        """The dtype name (`"float32"`, `"bool"`, ...)."""
        return self._array.dtype.name

    def numpy(self) -> np.ndarray:
        """A copy of the contents as a numpy array.

        Example:
            >>> Tensor(np.ones(2, "float32")).numpy().sum()
            np.float32(2.0)
        """
        return self._array.copy()

    def copyfrom(self, source: np.ndarray | Tensor) -> Tensor:
        """Copy `source` (same shape) into this tensor and return it.

        Example:
            >>> t = Tensor(np.zeros(2, "float32"))
            >>> t.copyfrom(np.array([1.0, 2.0], "float32")).numpy()
            array([1., 2.], dtype=float32)
        """
        data = source._array if isinstance(source, Tensor) else np.asarray(source)
        if data.shape != self._array.shape:
            raise ValueError(f"copyfrom: shape {data.shape} does not match {self.shape}")
        self._array[...] = data
        return self

    def __repr__(self) -> str:
        return f"<Tensor shape={self.shape} dtype={self.dtype} device={self.device}>\n{self._array}"


def tensor(array: np.ndarray | Sequence[object], device: Device | None = None) -> Tensor:
    """Copy `array` to `device` (default: the CPU).

    Example:
        >>> tensor([1, 2], cpu()).dtype
        'int64'
    """
    if device is not None and device.device_type == "cuda":
        from unity.runtime.cuda.tensor import cuda_tensor

        data = array.numpy() if isinstance(array, Tensor) else np.asarray(array)
        return cuda_tensor(data, device)
    return Tensor(np.array(array, copy=True, order="C"), device)


def empty(shape: Sequence[int], dtype: str = "float32", device: Device | None = None) -> Tensor:
    """An uninitialized tensor.

    Example:
        >>> empty((2, 3), "float16").shape
        (2, 3)
    """
    if device is not None and device.device_type == "cuda":
        from unity.runtime.cuda.tensor import cuda_empty

        return cuda_empty(shape, dtype, device)
    return Tensor(np.empty(tuple(shape), dtype=numpy_dtype(dtype)), device)


def numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of a unity dtype name (`bfloat16` through ml_dtypes).

    Example:
        >>> numpy_dtype("float16").itemsize
        2
    """
    if dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)
