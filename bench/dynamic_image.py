"""A CNN compiled for a symbolic image size: latency against the same model compiled for
the fixed size and against onnxruntime, in one run.

The light ResNet-50 (random weights, as `unity bench`) with its input's height and width
made symbolic (``[1, 3, "H", "W"]``) is compiled once; it runs at 224 x 224 (its fixed
7 x 7 average pool allows no other size), alternating with the static build and with
onnxruntime on the symbolic model.  Printed: each latency (median of `--repeat`), the
ratios unity / onnxruntime, and max |unity - onnxruntime|.

Run: ``python bench/dynamic_image.py [--repeat 9] [--folder DIR]``.  With ``--folder``,
each ``.onnx`` image model in DIR whose input's height and width are symbolic (torchvision's
CNNs: ``python tests/relax/frontend/models/make_models.py --images DIR``) is compiled as it
is and with its height and width fixed at 224, and timed at 224 x 224 the same way.

On 2026-12-06 (2-core Zen 4, AVX-512), this script printed: symbolic 47.9 ms, static
41.2, onnxruntime 52.9 (0.91x; static 0.78x), compile 21.5 s symbolic, 5.8 s static,
max |diff| 9.3e-10.  Earlier the same day (an ad hoc script, same-run pairs against
onnxruntime): 59.4 / 43.4 ms (1.37x) once the model compiled (max pooling's output size
over a symbolic input had failed), 54.7 / 49.0 (1.12x) with tiles of the flattened
pixels, 45.1 / 44.0 (1.02x) with Winograd over symbolic sizes.  Later that day (stop 32):
symbolic 39.8 ms, static 35.1, onnxruntime 45.5 (0.88x; static 0.77x), compile 15.2 s
and 7.1 s (the last tile of the pixels moved back rather than guarded, Winograd's
transforms scheduled over symbolic sizes, shape inference's sympy work remembered).
``--folder`` over torchvision's CNNs (symbolic batch, height and width), unity symbolic /
static / onnxruntime ms: ConvNeXt-T 56.8 / 56.1 / 62.0, DenseNet-121 32.8 / 28.2 / 33.1,
EfficientNet-B0 10.2 / 9.3 / 9.0, GoogLeNet 14.1 / 12.5 / 16.1, MobileNet v2 8.8 / 8.1 /
8.5, v3-small 6.2 / 4.7 / 4.0, RegNet-Y-400MF 14.1 / 9.4 / 15.4, ResNet-50 39.2 / 36.0 /
46.1, ShuffleNet v2 5.3 / 4.2 / 5.0, SqueezeNet 1.1 7.1 / 5.2 / 5.2; once concats kept
their rows' columns nested: SqueezeNet 6.0 / 5.3 / 4.8, DenseNet-121 33.9 / 32.6 / 35.9.
Stop 35, with the shape divisions computed once per kernel (compile s symbolic / static,
then ms symbolic / static / onnxruntime): GoogLeNet 36.1 / 16.4, 15.7 / 16.0 / 17.7;
SqueezeNet 12.1 / 5.1, 5.5 / 4.5 / 4.7; DenseNet-121 31.2 / 19.1, 31.7 / 27.7 / 33.7;
ResNet-50 11.7 / 6.4, 36.9 / 35.0 / 43.6; MobileNet v2 7.0 / 4.6, 5.6 / 4.9 / 4.6.
Stop 36, on another machine (2-core Sapphire Rapids, AVX-512 with two FMA units per core:
492 GFLOP/s measured by ``bench/peak.py``; onnxruntime runs 1.4-2x faster here than on the
Zen 4 above, unity 1.1-1.4x), with depthwise convs versioned by the width and symbolic
pads vectorized (ms symbolic / static / onnxruntime): ConvNeXt-T 38.0 / 41.6 / 33.0,
DenseNet-121 23.3 / 22.4 / 19.5, EfficientNet-B0 6.9 / 6.6 / 5.2, GoogLeNet 11.6 / 10.3 /
8.7, MobileNet v2 4.9 / 4.3 / 3.6, v3-small 3.1 / 2.6 / 1.7, RegNet-Y-400MF 8.3 / 6.9 /
6.8, ResNet-50 27.5 / 26.5 / 23.9, ShuffleNet v2 3.7 / 3.2 / 3.3, SqueezeNet 1.1 3.9 / 3.7
/ 2.8.  Stop 37, same machine, channel counts that are no multiple of 16 held blocked with
their last block padded and squeeze-and-excitation convs over one pixel packed (ratios
symbolic / static against onnxruntime, the stop-36 code first, same session): MobileNet
v3-small 1.80x / 1.59x -> 1.32x / 1.14x, v2 1.37x / 1.24x -> 1.26x / 1.14x,
EfficientNet-B0 1.28x / 1.20x -> 1.17x / 1.07x, ShuffleNet v2 1.15x / 1.00x -> 1.02x /
0.90x, the others level within the noise (ConvNeXt-T 1.19x / 1.28x, DenseNet-121 1.20x /
1.15x, GoogLeNet 1.38x / 1.26x, RegNet-Y-400MF 1.25x / 1.01x, ResNet-50 1.16x / 1.12x,
SqueezeNet 1.1 1.37x / 1.26x).  Stop 38, same machine, Winograd only where its larger
weight pays (`winograd_gain`; 64 channels at least; a symbolic size evaluated at 224):
GoogLeNet 1.18x / 1.11x (9.8 / 9.3 / 8.4 ms), SqueezeNet 1.1 1.28x / 1.17x, ResNet-50
1.09x / 1.06x (26.1 / 25.3 / 23.8 ms), DenseNet-121 1.21x / 1.09x, the others level
(ConvNeXt-T 1.14x / 1.28x, EfficientNet-B0 1.15x / 1.08x, MobileNet v2 1.25x / 1.13x,
v3-small 1.28x / 1.11x, RegNet-Y-400MF 1.24x / 1.02x, ShuffleNet v2 1.01x / 0.91x).  Then
RegNet-Y's 1x1 convs on NCHW data over a symbolic size with pixels in vectors (were 8
channels x 7 pixels): RegNet-Y-400MF 1.02x / 1.01x (7.1 / 7.0 / 7.0 ms); with its static
1x1 convs in tiles of 4 channels x up to 64 pixels (`pointwise_tile`; were columns
tiles; over a symbolic size 4 x 32 rather than 8 x 32): 1.02x / 0.94x (7.0 / 6.4 / 6.8
ms).  Stop 39, same machine (ratios symbolic / static, stop 38's final run first):
matmuls whose row blocks had fused with a symbolic batch kept their tile in memory,
rows of no 8/6 divisor took 4- or 2-row tiles, 3 panels ran on 2 threads (ConvNeXt-T
1.15x / 1.27x -> 1.09x / 1.06x, 36.2 / 35.3 / 33.3 ms); a batch of 1 over a symbolic
batch ran its classifier's 8 clamped rows (MobileNet v3-small 1.31x / 1.10x -> 1.16x /
1.04x, v2 1.27x / 1.15x -> 1.15x / 1.10x, EfficientNet-B0 1.18x / 1.09x -> 1.13x /
1.11x, GoogLeNet 1.22x / 1.14x -> 1.17x / 1.10x, ShuffleNet v2 0.99x / 0.89x -> 0.95x /
0.87x); the others level (DenseNet-121 1.22x / 1.11x, RegNet-Y-400MF 1.03x / 0.93x,
ResNet-50 1.07x / 1.05x, SqueezeNet 1.1 1.29x / 1.14x).  Stop 41, same machine, with
symbolic storages shared by their ``Max`` (MobileNet v3-small's pool: 24 buffers -> 4,
as static) and pointwise tiles over a symbolic size moved back rather than guarded
(symbolic / static): ConvNeXt-T 0.98x / 1.02x, DenseNet-121 1.03x / 1.05x,
EfficientNet-B0 1.00x / 1.03x, GoogLeNet 1.05x / 1.07x, MobileNet v2 1.04x / 1.06x,
v3-small 1.03x / 1.01x, RegNet-Y-400MF 0.94x / 0.93x, ResNet-50 0.95x / 0.96x,
ShuffleNet v2 0.87x / 0.85x, SqueezeNet 1.1 1.01x / 1.09x.  Stop 42, same machine, with
depthwise convs over large images reading through their padding (`HoistPadChecks`),
global means over any window and NCHW images summed in vectors: ConvNeXt-T 0.99x /
0.99x, DenseNet-121 0.99x / 1.03x, EfficientNet-B0 0.99x / 0.99x (5.7 / 5.7 / 5.8 ms),
GoogLeNet 1.05x / 1.08x, MobileNet v2 0.98x / 1.00x (3.8 / 3.9 / 3.9), v3-small 0.98x /
0.97x, RegNet-Y-400MF 0.95x / 0.93x, ResNet-50 0.99x / 0.98x, ShuffleNet v2 0.86x /
0.82x, SqueezeNet 1.1 1.09x / 1.11x; then with blocked convs prefetching their weights
from 16 KiB a tile: ConvNeXt-T 0.97x / 0.96x, DenseNet-121 1.03x / 1.04x,
EfficientNet-B0 0.94x / 0.94x, GoogLeNet 1.03x / 1.02x, MobileNet v2 0.83x / 0.86x,
v3-small 1.00x / 0.98x, RegNet-Y-400MF 0.97x / 0.91x, ResNet-50 0.95x / 0.94x,
ShuffleNet v2 0.83x / 0.83x, SqueezeNet 1.1 1.11x / 1.08x.  Stop 43, Winograd's matmuls
prefetching their transformed weights, its transforms priced (SqueezeNet's 13 x 13
convs and GoogLeNet's 96 -> 208 at 14 x 14 direct) and its rows whole register tiles,
the models re-exported with calibrated batch norms (``make_models.py --images``; before,
GoogLeNet's logits were its classifier's bias): ConvNeXt-T 0.93x / 0.94x, DenseNet-121
1.02x / 1.03x, EfficientNet-B0 0.95x / 0.98x, GoogLeNet 1.01x / 1.03x (8.6 / 8.8 / 8.6
ms), MobileNet v2 0.90x / 0.96x, v3-small 1.01x / 0.97x, RegNet-Y-400MF 0.94x / 0.91x,
ResNet-50 0.95x / 0.94x (21.4 / 21.8 / 22.6 ms), ShuffleNet v2 0.85x / 0.84x, SqueezeNet
1.1 1.04x / 1.02x; max |unity - onnxruntime| 4e-8 .. 6e-5 against logits of 0.03-1.9.
Stop 44 (kernels called in native runs by the VM; the parallel loop of a conv over a
symbolic batch no longer the batch; Winograd rows per image), MnasNet 1.0 added, the
machine slower again (onnxruntime's ConvNeXt-T 42.5 ms): ConvNeXt-T 0.94x / 0.95x,
DenseNet-121 0.98x / 1.00x, EfficientNet-B0 0.93x / 0.89x, GoogLeNet 0.94x / 0.95x,
MnasNet 1.04x / 1.06x (3.6 / 3.7 / 3.5 ms; 1.13x / 1.19x at the session's start),
MobileNet v2 0.94x / 0.92x, v3-small 0.88x / 0.87x, RegNet-Y-400MF 0.92x / 0.86x,
ResNet-50 0.91x / 0.91x (24.3 / 24.1 / 26.5 ms), ShuffleNet v2 0.83x / 0.76x, SqueezeNet
1.1 1.00x / 0.98x.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import onnx
import onnxruntime as ort
from onnx_models import load_model

import unity
from unity.cli.timing import alternate_latencies
from unity.ir.transform import PassContext
from unity.relax.frontend.onnx import from_onnx
from unity.runtime import cpu
from unity.runtime.vm import VirtualMachine


def symbolic_image(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with its first input's height and width named "H" and "W" (outputs and
    intermediate shapes left to inference).

    Example:
        >>> symbolic_image(load_model("resnet50")).graph.input[0].type.tensor_type.shape.dim[2].dim_param
        'H'
    """
    out = onnx.ModelProto()
    out.CopyFrom(model)
    dims = out.graph.input[0].type.tensor_type.shape.dim
    for axis, name in ((2, "H"), (3, "W")):
        dims[axis].ClearField("dim_value")
        dims[axis].dim_param = name
    for value in out.graph.output:
        value.type.tensor_type.ClearField("shape")
    del out.graph.value_info[:]
    return out


def _compile(model: onnx.ModelProto) -> tuple[object, float]:
    start = time.perf_counter()
    with PassContext(opt_level=3):
        ex = unity.compile(from_onnx(model), target="llvm")
    return VirtualMachine(ex, cpu())["main"], time.perf_counter() - start


def fixed_image(model: onnx.ModelProto, size: int = 224) -> onnx.ModelProto:
    """`model` with its first input's symbolic height and width fixed at `size` (the
    other symbolic dims, a batch, stay).

    Example:
        >>> fixed_image(symbolic_image(load_model("resnet50"))).graph.input[0].type.tensor_type.shape.dim[2].dim_value
        224
    """
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for axis, dim in enumerate(out.graph.input[0].type.tensor_type.shape.dim):
        if axis >= 2 and dim.dim_param:
            dim.ClearField("dim_param")
            dim.dim_value = size
    return out


def compare(label: str, dynamic: onnx.ModelProto, static: onnx.ModelProto, repeat: int) -> None:
    """Compile both, then print their latencies at 224 x 224 beside onnxruntime's (on the
    symbolic model), taken in turn, and the compile times."""
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    run_dynamic, dynamic_s = _compile(dynamic)
    run_static, static_s = _compile(static)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(dynamic.SerializeToString(), options, providers=["CPUExecutionProvider"])
    name = dynamic.graph.input[0].name
    want = session.run(None, {name: x})[0]
    got = run_dynamic(x)
    got = got[0] if isinstance(got, tuple | list) else got
    diff = float(np.abs(got.numpy() - want).max())
    fns = [lambda: run_dynamic(x), lambda: run_static(x), lambda: session.run(None, {name: x})]
    dyn_ms, static_ms, ort_ms = (float(np.median(t)) for t in alternate_latencies(fns, repeat))
    print(f"{label} at 224x224, compile: symbolic {dynamic_s:.1f} s, static {static_s:.1f} s")
    print(f"  unity symbolic {dyn_ms:6.1f} ms  {dyn_ms / ort_ms:.2f}x onnxruntime")
    print(f"  unity static   {static_ms:6.1f} ms  {static_ms / ort_ms:.2f}x onnxruntime")
    print(f"  onnxruntime    {ort_ms:6.1f} ms  (symbolic model)   max |unity - onnxruntime| {diff:.1e}",
          flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--folder", help="time each .onnx image model in it (input [N, 3, H, W], "
                                         "H and W symbolic) instead of the light ResNet-50")  # fmt: skip
    args = parser.parse_args()
    if args.folder is None:
        static = load_model("resnet50")
        compare("resnet50", symbolic_image(static), static, args.repeat)
        return
    for path in sorted(Path(args.folder).glob("*.onnx")):
        model = onnx.load(path)
        dims = model.graph.input[0].type.tensor_type.shape.dim
        if len(dims) != 4 or not (dims[2].dim_param and dims[3].dim_param):
            print(f"{path.stem}: skipped (its input's height and width are not symbolic)")
            continue
        compare(path.stem, model, fixed_image(model), args.repeat)


if __name__ == "__main__":
    main()
