"""The runnable `Example:` sections of `unity.schedule` pass."""

import doctest
import importlib

import pytest

from unity import tir

MODULES = [
    "analysis", "error", "scope", "schedule", "state", "tensor_intrin", "trace", "tree",
    "primitives.add_unit_loop",
    "primitives.annotate",
    "primitives.blockize",
    "primitives.cache",
    "primitives.compute_at",
    "primitives.compute_inline",
    "primitives.decompose_reduction",
    "primitives.fuse",
    "primitives.lookup",
    "primitives.loop_kind",
    "primitives.pad_einsum",
    "primitives.reorder",
    "primitives.rfactor",
    "primitives.set_scope",
    "primitives.split",
    "primitives.storage_align",
    "primitives.tensorize",
    "primitives.transform_block_layout",
    "primitives.transform_layout",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"unity.schedule.{name}")
    result = doctest.testmod(module, extraglobs={"tir": tir}, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
