"""The thin CUDA launch layer: load a module, get a function, launch it, copy memory.

The backend (pycuda, else NVIDIA's cuda-python) is imported lazily (on first use), so
nothing here needs a GPU to be imported.  Everything goes through `driver()`, the one
place that talks to either.

Example:
    >>> from unity.runtime import cuda as rc
    >>> rc.is_available() in (True, False)
    True
"""

from unity.runtime.cuda.driver import (
    CudaDriver, CudaUnavailableError, PycudaDriver, driver, is_available,
)  # fmt: skip

__all__ = ["CudaDriver", "CudaUnavailableError", "PycudaDriver", "driver", "is_available"]
