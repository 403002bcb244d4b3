"""`Device`: where a tensor lives and a kernel runs (`unity.cpu()`, `unity.cuda()`).

Example:
    >>> import unity
    >>> unity.cpu().device_type, unity.cpu(0).device_id
    ('cpu', 0)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Device:
    """A device: its type (`"cpu"` or `"cuda"`) and index.

    Example:
        >>> Device("cpu", 0)
        cpu(0)
    """

    device_type: str
    device_id: int = 0

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    def sync(self) -> None:
        """Wait for pending work (a no-op on the CPU, where every call is synchronous).

        Example:
            >>> Device("cpu", 0).sync()  # the CPU runs every call synchronously
        """
        if self.device_type == "cuda":
            from unity.runtime.cuda.device_api import active_driver

            active_driver(self.device_id).synchronize()

    @property
    def exist(self) -> bool:
        """True when the device can be used (always for the CPU; CUDA needs pycuda or cuda-python, and a GPU).

        Example:
            >>> cpu().exist
            True
        """
        if self.device_type != "cuda":
            return True
        from unity.runtime.cuda.device_api import active_driver
        from unity.runtime.cuda.driver import CudaUnavailableError

        try:
            active_driver(self.device_id)
        except CudaUnavailableError:
            return False
        return True


def cpu(device_id: int = 0) -> Device:
    """The host CPU.

    Example:
        >>> cpu()
        cpu(0)
    """
    return Device("cpu", device_id)


def cuda(device_id: int = 0) -> Device:
    """CUDA GPU `device_id` (nothing is checked until it is used; see `Device.exist`).

    Memory and launches go through pycuda or cuda-python, or through a stand-in driver installed with
    `unity.runtime.cuda.device_api.use_driver` (the CPU emulator, in tests).

    Example:
        >>> cuda()
        cuda(0)
    """
    if not isinstance(device_id, int) or device_id < 0:
        raise ValueError(f"unity.cuda: device id must be a non-negative int, got {device_id!r}")
    return Device("cuda", device_id)
