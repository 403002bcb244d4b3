#!/bin/sh
# Every check that needs a GPU, in one go (a lent device's minutes are few): which backend
# drives the GPU, the GPU tests, then the two GPU benchmarks; each log lands in $OUT (the
# device tool's folder) or ./gpu_logs.  Run from the repository root:  sh bench/gpu_check.sh
set -u
out=${OUT:-gpu_logs}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
python=${PYTHON:-python3}
{ nvidia-smi -L; $python -c "from unity.runtime.cuda import driver; print('backend:', driver().backend)"; } 2>&1 | tee "$out/device.txt"
timeout 300 $python -m pytest -q -m "gpu or not slow" tests/codegen/cuda/test_cuda_gpu.py \
    tests/relax/cuda/test_cuda_vm_gpu.py tests/runtime/test_cuda_driver.py 2>&1 | tee "$out/tests.txt"
timeout 150 $python bench/gpu_matmul.py 2>&1 | tee "$out/gpu_matmul.txt"
timeout 240 $python bench/gpu_models.py --repeat 20 --top 15 2>&1 | tee "$out/gpu_models.txt"
