"""The `unity` command line: `unity compile`, `unity run`, `unity bench` on ONNX models.

Example:
    >>> from unity.cli import main
    >>> main(["--version"])  # doctest: +SKIP
"""

from unity.cli.main import main

__all__ = ["main"]
