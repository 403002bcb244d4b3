"""unity: a deep-learning compiler in Python (relax + TensorIR in one IRModule).

Example:
    >>> import unity
    >>> unity.IRModule().get_global_vars()
    []
"""

from unity.ir import IRModule

__version__ = "0.1.0"
