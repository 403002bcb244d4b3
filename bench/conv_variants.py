"""Transposed and 3-D convolutions against onnxruntime: a transposed conv as one conv over
its output phases (the `DecomposeConvTranspose` pass), a 3-D conv as one 2-D conv over
stacked depth taps (the importer), and the direct transposed conv the pass replaces.

Each case is a small ONNX model compiled by `unity.compile` (default schedules); the
runtimes alternate, each run after a pause, and the figure is the median.  The "direct"
column compiles the same model with ``disabled_pass=["DecomposeConvTranspose"]`` (the TOPI
form: every tap of every output tested for the few that exist).

Run: ``python bench/conv_variants.py [--repeat 7]``

Zen 4 with AVX-512, 2 cores (2026-12-06), unity / onnxruntime (max relative difference
at most 1.3e-6), and the direct form:

    ConvTranspose 64->32 k2 s2 p0 at 64x64   0.85 / 1.03 ms   0.83x   direct  17.1 ms
    ConvTranspose 64->32 k4 s2 p1 at 64x64   1.86 / 2.92 ms   0.64x   direct 113.0 ms
    ConvTranspose 64->32 k3 s2 p1 at 64x64   2.06 / 1.77 ms   1.16x   direct  59.4 ms
    ConvTranspose 64->64 k4 s2 p1 depthwise  0.94 / 4.15 ms   0.23x   direct   4.6 ms
    conv3d x2 on 16x16x32x32                 5.19 / 5.50 ms   0.94x
    3-D U-Net on 4x16x64x64                 13.01 / 21.94 ms  0.59x   (1.51x with the direct
                                                                       transposed conv, ad hoc)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import unity
from unity import relax
from unity.cli.timing import alternate_latencies
from unity.relax.frontend.onnx import from_onnx

RNG = np.random.default_rng(0)


def _model(nodes: list, shape: tuple[int, ...], weights: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _weight(*shape: int, scale: float = 0.1) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype("float32")


def transposed(kernel: int, stride: int, pad: int, out: int = 32, groups: int = 1) -> onnx.ModelProto:
    """A ConvTranspose from 64 channels over a 64 x 64 image (a decoder or GAN layer)."""
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[stride] * 2, pads=[pad] * 4,
                            group=groups)  # fmt: skip
    return _model([node], (1, 64, 64, 64), {"w": _weight(64, out // groups, kernel, kernel)})


def conv3d_net() -> onnx.ModelProto:
    """Two 3x3x3 convs with a ReLU and a 2x2x2 max pool between (a video block)."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1] * 6),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2] * 3, strides=[2] * 3),
             helper.make_node("Conv", ["p", "w2"], ["y"], pads=[1] * 6)]  # fmt: skip
    return _model(nodes, (1, 16, 16, 32, 32), {"w": _weight(32, 16, 3, 3, 3), "w2": _weight(32, 32, 3, 3, 3)})


def unet3d() -> onnx.ModelProto:
    """A small 3-D U-Net: conv, pool, conv, 2x transposed conv, concat with the skip, conv."""
    weights = {"w1": _weight(16, 4, 3, 3, 3), "w2": _weight(32, 16, 3, 3, 3, scale=0.05),
               "wt": _weight(32, 16, 2, 2, 2), "w3": _weight(8, 32, 3, 3, 3, scale=0.05)}  # fmt: skip
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1] * 6), helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2] * 3, strides=[2] * 3),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1] * 6), helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("ConvTranspose", ["r2", "wt"], ["up"], strides=[2] * 3),
        helper.make_node("Concat", ["up", "r1"], ["cat"], axis=1),
        helper.make_node("Conv", ["cat", "w3"], ["y"], pads=[1] * 6),
    ]  # fmt: skip
    return _model(nodes, (1, 4, 16, 64, 64), weights)


def _direct(model: onnx.ModelProto) -> relax.VirtualMachine:
    """`model` compiled with its transposed convs in the direct TOPI form (the pass off)."""
    with unity.transform.PassContext(opt_level=3, disabled_pass=["DecomposeConvTranspose"]):
        return relax.VirtualMachine(unity.compile(from_onnx(model)), unity.cpu())


def bench(name: str, model: onnx.ModelProto, shape: tuple[int, ...], repeat: int,
          direct: relax.VirtualMachine | None = None) -> None:  # fmt: skip
    """Compile `model`, check it against onnxruntime and print the alternated medians."""
    import onnxruntime as ort

    x = RNG.standard_normal(shape).astype("float32")
    vm = relax.VirtualMachine(unity.compile(from_onnx(model)), unity.cpu())
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]
    diff = float(np.abs(vm["main"](x).numpy() - want).max() / max(np.abs(want).max(), 1e-30))
    runs = [lambda: vm["main"](x), lambda: session.run(None, {"x": x})]
    if direct is not None:
        runs.append(lambda: direct["main"](x))
    times = [float(np.median(t)) for t in alternate_latencies(runs, repeat)]
    extra = f"   direct {times[2]:8.2f} ms" if direct is not None else ""
    print(f"{name:40s} {times[0]:8.2f} / {times[1]:8.2f} ms  {times[0] / times[1]:5.2f}x"
          f"   max rel diff {diff:.1e}{extra}", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each (median)")
    args = parser.parse_args()
    print(f"{'case':40s}  unity / onnxruntime      ratio")
    for kernel, stride, pad in ((2, 2, 0), (4, 2, 1), (3, 2, 1)):
        model = transposed(kernel, stride, pad)
        name = f"ConvTranspose 64->32 k{kernel} s{stride} p{pad} at 64x64"
        bench(name, model, (1, 64, 64, 64), args.repeat, _direct(model))
    model = transposed(4, 2, 1, out=64, groups=64)  # a learned bilinear up-sampling
    bench("ConvTranspose 64->64 k4 s2 p1 depthwise", model, (1, 64, 64, 64), args.repeat, _direct(model))
    bench("conv3d x2 on 16x16x32x32", conv3d_net(), (1, 16, 16, 32, 32), args.repeat)
    bench("3-D U-Net on 4x16x64x64", unet3d(), (1, 4, 16, 64, 64), args.repeat)


if __name__ == "__main__":
    main()
