"""The light ONNX models on the GPU: compile time, latency next to onnxruntime, max error.

For each model (as `bench/onnx_models.py` loads it: seeded random weights and inputs)
in one run: unity's compile time for `target="cuda"` (default GPU schedules), its
latency through the VM on the GPU (`time_evaluator`: CUDA-event timed, inputs already
on the device, after a warm-up that JIT-loads the PTX), onnxruntime's median latency
on its best provider here (CUDA when its GPU build is installed, else the CPU: the line
says which), their ratio, and max |unity - onnxruntime| over the outputs.  Then the
kernels that took longest in one profiled run of the first model (`--top N`).

Without a GPU (or without pycuda and cuda-python) it says so and exits.

Run: ``python bench/gpu_models.py [--models resnet50,encoder] [--repeat 20] [--top 10]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))  # onnx_models' loaders

import numpy as np
import onnxruntime as ort
from onnx_models import load_model, random_inputs

import unity
from unity.relax import VirtualMachine
from unity.relax.frontend.onnx import from_onnx
from unity.runtime.cuda import CudaUnavailableError, driver


def _outputs(value: object) -> list[np.ndarray]:
    items = value if isinstance(value, (list, tuple)) else [value]
    return [item.numpy() if hasattr(item, "numpy") else np.asarray(item) for item in items]


def bench_model(name: str, repeat: int) -> tuple[str, VirtualMachine, list[np.ndarray]]:
    """One model's line of figures, its GPU VM and inputs (for the profile)."""
    model = load_model(name)
    feed = random_inputs(model)
    start = time.perf_counter()
    ex = unity.compile(from_onnx(model), target="cuda")
    compile_s = time.perf_counter() - start
    vm = VirtualMachine(ex, unity.cuda())
    args = list(feed.values())
    ours = _outputs(vm["main"](*args))  # warm-up: loads the PTX
    unity_ms = vm.time_evaluator("main", number=repeat)(*args).mean * 1e3
    providers = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider")
                 if p in ort.get_available_providers()]
    session = ort.InferenceSession(model.SerializeToString(), providers=providers[:1])
    theirs = session.run(None, feed)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        session.run(None, feed)
        times.append(time.perf_counter() - t0)
    ort_ms = statistics.median(times) * 1e3
    error = max(float(np.max(np.abs(a.astype("float64") - b))) for a, b in zip(ours, theirs))
    line = (f"{name:12s} compile {compile_s:5.1f} s  unity {unity_ms:8.2f} ms  ort {ort_ms:8.2f} ms "
            f"({providers[0].replace('ExecutionProvider', '')})  ratio {unity_ms / ort_ms:5.2f}x  "
            f"max |err| {error:.2g}")
    return line, vm, args


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50,encoder")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    try:
        driver()
    except CudaUnavailableError as err:
        print(f"gpu_models: skipped, {err}")
        return
    first = None
    for name in args.models.split(","):
        line, vm, inputs = bench_model(name, args.repeat)
        print(line, flush=True)
        first = first or (name, vm, inputs)
    if first is not None and args.top:
        name, vm, inputs = first
        print(f"\n{name}: the {args.top} longest kernels (CUDA events around each launch)")
        print(vm.profile("main", *inputs).table(top=args.top))


if __name__ == "__main__":
    main()
