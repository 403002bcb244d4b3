"""The `Example:` sections of the script parser and the printers run and pass."""

import doctest
import importlib

import pytest

MODULES = [
    "unity.ir.printer", "unity.tir.printer", "unity.tir.printer_expr", "unity.script",
    "unity.script.tir", "unity.script.ir", "unity.script.parser.core", "unity.script.parser.errors",
    "unity.script.parser.evaluator", "unity.script.parser.module", "unity.script.parser.tir_expr",
    "unity.script.parser.tir_function", "unity.script.parser.tir_regions",
    "unity.script.parser.tir_specs", "unity.script.parser.tir_stmt",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
