"""The pass infrastructure (TVM's `tvm.transform`): passes, `Sequential`, `PassContext`.

Example:
    >>> from unity import transform
    >>> with transform.PassContext(opt_level=3) as ctx:
    ...     ctx.opt_level
    3
"""

from unity.ir.transform import (
    ApplyPassToFunction, FunctionPass, ModulePass, Pass, PassContext, PassInfo, PrintIR,
    Sequential, function_pass, get_pass, list_configs, module_pass, register_config,
)  # fmt: skip

__all__ = [
    "ApplyPassToFunction", "FunctionPass", "ModulePass", "Pass", "PassContext", "PassInfo",
    "PrintIR", "Sequential", "function_pass", "get_pass", "list_configs", "module_pass",
    "register_config",
]  # fmt: skip
