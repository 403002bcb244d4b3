"""unity: a deep-learning compiler in Python (relax + TensorIR in one IRModule).

Example:
    >>> import unity
    >>> unity.IRModule().get_global_vars()
    []
"""

from unity import instrument, runtime, transform
from unity.ir import IRModule
from unity.runtime import cpu, cuda

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """Import the compiler lazily: `unity.runtime.load_module` must not pull it in."""
    if name == "build":
        from unity.codegen import build

        return build
    if name == "compile":
        from unity.relax.vm_build import compile

        return compile
    if name in ("target", "codegen", "tune"):  # unity.tune(mod, ...) is callable
        import importlib

        return importlib.import_module(f"unity.{name}")
    raise AttributeError(f"module 'unity' has no attribute {name!r}")
