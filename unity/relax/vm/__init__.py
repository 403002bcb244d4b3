"""Lowering relax to VM bytecode: the `alloc_tensor` builtin, memory builtins, `codegen`.

Example:
    >>> from unity.relax.vm import alloc_tensor
    >>> alloc_tensor((2,), "float32").op.name
    'relax.builtin.alloc_tensor'
"""

from unity.relax.vm import memory
from unity.relax.vm.builtin import alloc_tensor

__all__ = ["alloc_tensor", "memory"]
