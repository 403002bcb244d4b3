"""Per-kernel profile of light ONNX models (random weights): where the latency goes.

Run: ``python bench/profile_kernels.py --models squeezenet,alexnet [--top 15] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

from onnx_models import MODEL_NAMES, compile_model, load_model, random_inputs

from unity.runtime import cpu
from unity.runtime.vm import VirtualMachine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="squeezenet,shufflenet,alexnet,resnet50")
    parser.add_argument("--top", type=int, default=15, help="call sites shown")
    parser.add_argument("--repeat", type=int, default=3, help="profiled runs (averaged)")
    args = parser.parse_args()
    for name in [n.strip() for n in args.models.split(",") if n.strip()]:
        if name not in MODEL_NAMES:
            parser.error(f"unknown model {name}; known: {', '.join(MODEL_NAMES)}")
        model = load_model(name)
        ex, _ = compile_model(model)
        vm = VirtualMachine(ex, cpu())
        report = vm.profile(*random_inputs(model).values(), repeat=args.repeat)
        print(f"== {name}: {report.total_seconds * 1e3:.1f} ms per run, "
              f"{len(report.rows)} kernel call sites")  # fmt: skip
        print(report.table(top=args.top))
        print("by kernel:", ", ".join(f"{k} x{c} {s * 1e3:.1f}ms" for k, c, s in report.by_kernel()[:8]))
        print(flush=True)


if __name__ == "__main__":
    main()
