"""The thin CUDA launch layer: load a module, get a function, launch it, copy memory.

pycuda is imported lazily (on first use), so nothing here needs a GPU to be imported.
Everything goes through `driver()`, the one place that talks to pycuda; a
`cuda-python` driver-API version would replace only that class.

Example:
    >>> from unity.runtime import cuda as rc
    >>> rc.is_available() in (True, False)
    True
"""

from unity.runtime.cuda.driver import CudaDriver, CudaUnavailableError, driver, is_available

__all__ = ["CudaDriver", "CudaUnavailableError", "driver", "is_available"]
