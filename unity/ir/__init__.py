"""What relax and tir share: nodes, `IRModule`, `GlobalVar`, `Op`, diagnostics, printing.

Example:
    >>> from unity.ir import IRModule, GlobalVar
    >>> IRModule().get_global_vars()
    []
"""

from unity.ir import dtype
from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import BaseFunc, GlobalVar, IRModule
from unity.ir.node import Node, Span, binds, hint, ignored, node
from unity.ir.op import Op
from unity.ir.structural import (
    assert_structural_equal, register_leaf_equal, structural_equal, structural_hash,
)  # fmt: skip
from unity.ir import instrument, transform  # noqa: E402 - after the names they use
