"""On a real GPU (skipped without a device and pycuda or cuda-python): every workload matches numpy."""

import pytest
from gpu_workloads import ALL

import unity
from unity.runtime.cuda import is_available

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not is_available(), reason="needs a CUDA GPU and pycuda or cuda-python"),
]


@pytest.mark.parametrize("name", sorted(ALL))
def test_kernel_matches_numpy_on_the_gpu(name):
    work = ALL[name]()
    lib = unity.build(work.sch.mod, "cuda")
    args = work.fresh_args()
    lib["main"](*args)
    work.check(args)
