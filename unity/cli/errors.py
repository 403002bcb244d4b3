"""`CliError`: a problem with what the user typed; printed as one line, exit code 2.

Example:
    >>> str(CliError("no such file: x.onnx"))
    'no such file: x.onnx'
"""

from __future__ import annotations


class CliError(Exception):
    """A user error: the message is printed as `unity: error: MESSAGE`, exit code 2.

    Example:
        >>> str(CliError("no such file: model.onnx")), issubclass(CliError, Exception)
        ('no such file: model.onnx', True)
    """
