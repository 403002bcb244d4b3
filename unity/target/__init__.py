"""Compilation targets: `Target("llvm")` (host CPU) and `Target("cuda")`.

Example:
    >>> from unity.target import Target
    >>> Target("llvm").kind
    'llvm'
"""

from unity.target.target import Target

__all__ = ["Target"]
