"""The thin CUDA launch layer imports without pycuda and explains what is missing."""

import importlib.util

import pytest

from unity.runtime.cuda import CudaUnavailableError, driver, is_available

HAS_PYCUDA = importlib.util.find_spec("pycuda") is not None


def test_is_available_answers_without_raising():
    assert is_available() in (True, False)


@pytest.mark.skipif(HAS_PYCUDA, reason="pycuda is installed")
def test_driver_without_pycuda_names_the_missing_package():
    with pytest.raises(CudaUnavailableError, match="pycuda is not installed"):
        driver(0)
