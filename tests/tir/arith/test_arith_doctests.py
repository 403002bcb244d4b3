"""The `Example:` sections of `unity.tir.arith` run and pass."""

import doctest
import importlib

import pytest

MODULES = [
    "analyzer", "canonical", "const_fold", "const_int_bound", "int_set", "iter_affine", "key", "linear",
    "pattern", "poly_bound", "rewrite_simplify", "rewrite_vector", "sympy_bridge",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"unity.tir.arith.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
