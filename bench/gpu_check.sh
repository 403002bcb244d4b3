#!/bin/sh
# Every check that needs a GPU, in one go (a lent device's minutes are few): versions and
# the backend that drives the GPU, the GPU tests, then the two GPU benchmarks; each log
# lands in $OUT (the device tool's folder) or ./gpu_logs.  Run from the repository root:
#     sh bench/gpu_check.sh
# The steps' time limits add up to under the device tool's 10 minutes a command.  Wheels
# under .wheels/ (`sh bench/gpu_wheels.sh` fetches llvmlite for Python 3.12, for a device
# whose llvmlite is older than 0.45; carry '.wheels') are installed into .wheels/site first.
set -u
out=${OUT:-gpu_logs}
mkdir -p "$out"
python=${PYTHON:-python3}
path="$PWD"
if ls .wheels/*.whl >/dev/null 2>&1; then
    $python -m pip install -q --no-index --no-deps --target .wheels/site .wheels/*.whl 2>&1 | tail -2
    path="$PWD/.wheels/site:$path"
fi
export PYTHONUNBUFFERED=1 PYTHONPATH="$path${PYTHONPATH:+:$PYTHONPATH}"
{
    nvidia-smi -L
    $python -c "import sys, numpy, sympy, onnx, llvmlite, llvmlite.binding as b
print('python', sys.version.split()[0], '| numpy', numpy.__version__, '| sympy', sympy.__version__,
      '| onnx', onnx.__version__, '| llvmlite', llvmlite.__version__,
      'LLVM', '.'.join(map(str, b.llvm_version_info)))"
    $python -c "from unity.runtime.cuda import driver; print('backend:', driver().backend)"
} 2>&1 | tee "$out/device.txt"
timeout 300 $python -m pytest -q -m "gpu or not slow" tests/codegen/cuda/test_cuda_gpu.py \
    tests/relax/cuda/test_cuda_vm_gpu.py tests/runtime/test_cuda_driver.py \
    tests/relax/frontend/test_onnx_node.py::test_node_runs_on_the_gpu_fast_subset 2>&1 | tee "$out/tests.txt"
timeout 110 $python bench/gpu_matmul.py 2>&1 | tee "$out/gpu_matmul.txt"
timeout 160 $python bench/gpu_models.py --repeat 20 --top 15 2>&1 | tee "$out/gpu_models.txt"
