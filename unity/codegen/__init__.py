"""Code generation: TIR -> LLVM IR (CPU) and `build`.

Example:
    >>> from unity.codegen import build
    >>> callable(build)
    True
"""

from unity.codegen.build import build

__all__ = ["build"]
