"""Operator definitions on TE (nn, math, transform, reduction); numpy references in `testing`.

Example:
    >>> from unity.topi import testing
    >>> testing.softmax_python.__name__
    'softmax_python'
"""
