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
        """Wait for pending work (a no-op on the CPU, where every call is synchronous)."""


def cpu(device_id: int = 0) -> Device:
    """The host CPU.

    Example:
        >>> cpu()
        cpu(0)
    """
    return Device("cpu", device_id)


def cuda(device_id: int = 0) -> Device:
    """A CUDA GPU; raises until the CUDA runtime exists (the GPU issue adds it).

    Example:
        >>> cuda()  # doctest: +SKIP
    """
    raise RuntimeError(
        f"unity.cuda({device_id}): the CUDA runtime is not available yet in this build; "
        "use unity.cpu()"
    )
