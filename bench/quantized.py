"""Quantized ONNX models against onnxruntime: an FP8 QDQ MLP and int4 weight-only matmuls.

- ``fp8-mlp``: ``x (32, 768)`` quantized to float8 e4m3fn and back before each of two
  MatMuls whose weights are float8 initializers (768 -> 3072 -> 768, ReLU between), as
  NVIDIA ModelOpt exports FP8 models.  unity rounds the activations to the float8 grid in
  float32 and folds the weights' dequantization at compile time.
- ``int4-matmul``: ``x (32, 768) @ DequantizeLinear(w int4 (768, 3072), block_size=32)``
  (opset 21 blocked quantization, as weight-only int4 LLM exports have it).

Printed per model: the median latency of each runtime (runs alternate), their ratio, and
each one's largest difference from the ONNX reference implementation's output, relative
to that output's largest magnitude.

Run: ``python bench/quantized.py [--repeat 9]``

Zen 4 with AVX-512, 2 cores (2026-12-06), two runs::

    fp8-mlp      unity 2.23-2.49 ms   onnxruntime 15.2-16.1 ms   0.14-0.16x   unity 1.5e-06, onnxruntime 1.1e+00
    int4-matmul  unity 1.03-1.18 ms   onnxruntime 1.06-1.10 ms   0.97-1.08x   unity 1.1e-06, onnxruntime 5.0e-03

onnxruntime 1.32's CPU result for the FP8 MLP is wrong (110% of the output's magnitude
off the reference, which a numpy computation of the same QDQ arithmetic matches
exactly); for the int4 matmul its own int4 kernel quantizes the activations (0.5% off).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import unity
from unity import relax
from unity.cli.timing import alternate_latencies
from unity.relax.frontend.onnx import from_onnx

RNG = np.random.default_rng(0)
ROWS, WIDTH, HIDDEN = 32, 768, 3072


def _model(nodes: list, inits: dict[str, np.ndarray], opset: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [ROWS, WIDTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def fp8_mlp() -> onnx.ModelProto:
    """Two float8 QDQ MatMuls with a ReLU between."""
    f8 = ml_dtypes.float8_e4m3fn
    inits = {
        "w1": (RNG.standard_normal((WIDTH, HIDDEN)) * 4).astype(f8), "s1": np.float32(0.01),
        "w2": (RNG.standard_normal((HIDDEN, WIDTH)) * 4).astype(f8), "s2": np.float32(0.005),
        "sa": np.float32(0.02), "sh": np.float32(0.05), "z": np.zeros((), f8),
    }  # fmt: skip
    node = helper.make_node
    nodes = [
        node("QuantizeLinear", ["x", "sa", "z"], ["xq"]), node("DequantizeLinear", ["xq", "sa", "z"], ["xd"]),
        node("DequantizeLinear", ["w1", "s1", "z"], ["w1d"]), node("MatMul", ["xd", "w1d"], ["h"]),
        node("Relu", ["h"], ["r"]),
        node("QuantizeLinear", ["r", "sh", "z"], ["rq"]), node("DequantizeLinear", ["rq", "sh", "z"], ["rd"]),
        node("DequantizeLinear", ["w2", "s2", "z"], ["w2d"]), node("MatMul", ["rd", "w2d"], ["y"]),
    ]  # fmt: skip
    return _model(nodes, inits, 19)


def int4_matmul() -> onnx.ModelProto:
    """A MatMul with int4 weights dequantized in blocks of 32 rows."""
    w = RNG.integers(-8, 8, (WIDTH, HIDDEN)).astype(ml_dtypes.int4)
    scale = (RNG.random((WIDTH // 32, HIDDEN)) * 0.02 + 0.001).astype(np.float32)
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["wd"], axis=0, block_size=32),
             helper.make_node("MatMul", ["x", "wd"], ["y"])]  # fmt: skip
    return _model(nodes, {"w": w, "s": scale}, 21)


def bench(name: str, model: onnx.ModelProto, repeat: int) -> None:
    """Compile `model`, compare both runtimes with the ONNX reference implementation and
    print the alternated medians."""
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator

    x = RNG.standard_normal((ROWS, WIDTH)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    vm = relax.VirtualMachine(unity.compile(from_onnx(model)), unity.cpu())
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])

    def diff(got: np.ndarray) -> float:
        return float(np.abs(got - want).max() / np.abs(want).max())

    ours, theirs = diff(vm["main"](x).numpy()), diff(session.run(None, {"x": x})[0])
    runs = [lambda: vm["main"](x), lambda: session.run(None, {"x": x})]
    t_ours, t_theirs = (float(np.median(t)) for t in alternate_latencies(runs, repeat))
    print(f"{name:12s} unity {t_ours:5.2f} ms   onnxruntime {t_theirs:5.2f} ms   {t_ours / t_theirs:4.2f}x   "
          f"max rel diff from the reference: unity {ours:.1e}, onnxruntime {theirs:.1e}", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="timed runs of each (median)")
    args = parser.parse_args()
    bench("fp8-mlp", fp8_mlp(), args.repeat)
    bench("int4-matmul", int4_matmul(), args.repeat)


if __name__ == "__main__":
    main()
