"""The runnable `Example:` sections of `unity.schedule.default` and of `DefaultSchedules`."""

import doctest
import importlib

import numpy as np
import pytest

MODULES = [
    "unity.schedule.default.analysis",
    "unity.schedule.default.apply",
    "unity.schedule.default.conv2d",
    "unity.schedule.default.conv2d_tiles",
    "unity.schedule.default.epilogue",
    "unity.schedule.default.fallback",
    "unity.schedule.default.injective",
    "unity.schedule.default.matmul",
    "unity.schedule.default.normalize",
    "unity.schedule.default.prepack",
    "unity.schedule.default.reduction",
    "unity.schedule.default.width_versions",
    "unity.schedule.default.winograd",
    "unity.relax.transform.default_schedules",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"np": np}, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
