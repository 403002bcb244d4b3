"""Models exported from PyTorch (`transformers`, dynamic batch/sequence axes) next to onnxruntime.

For each ``.onnx`` file in a folder: unity's compile time (import + opt level 3 + LLVM),
the median latency of unity and of onnxruntime over `--repeat` runs taken in turn (so
both see the same load on this shared machine), their ratio (unity / onnxruntime, below
1 is faster), and max |unity - onnxruntime| over the outputs.  The inputs follow the
names exporters give: ``input_ids`` (ids below 1000, or the vocabulary of the fixtures),
``attention_mask`` (ones), ``pixel_values`` (1 x 3 x 224 x 224, or the size the model
fixes), ``images`` (torchvision's detectors: one 3 x 320 x 320 image), ``input_values``
(one second of 16 kHz audio), ``past_*`` (a 5-token cache).

The default folder holds the tiny test fixtures (hidden size 16: their timings are the
VM's overhead, not the kernels'); the mid-size models the figures below come from are made
with ``python tests/relax/frontend/models/make_models.py --large DIR`` (needs torch and
transformers) and timed with ``python bench/exported_models.py DIR``.

Run: ``python bench/exported_models.py [DIR] [--repeat 10] [--batch 1] [--seq 128]``

Where it stood at the end of stop 28 (2026-12-05, 2-core AMD EPYC Zen 3, AVX2, shared;
batch 1, sequence 128; ``--repeat 15``; hidden size 384 and 4 layers for the
transformers).  In brackets, stop 27's ratios (and what they were before its fixes)::

    model        compile  unity ms    ort ms    ratio  max|diff|
    bert             3.6     12.83     13.92    0.92x  1.9e-06   (0.96x; did not import)
    convnext         5.1      7.08      7.78    0.91x  2.3e-06   (0.89x; 2.22x)
    deberta          2.9     13.01     14.15    0.92x  1.7e-06   (not timed)
    gpt2             3.7     13.76     14.15    0.97x  6.2e-06   (1.05x; did not import)
    llama            3.6     12.03     12.99    0.93x  4.3e-06   (1.02x; did not import)
    resnet18         7.7     14.29     20.86    0.68x  3.7e-05   (0.71x; 22.6x)
    segformer       11.2     13.06     16.03    0.81x  5.2e-06   (0.76x)
    swin             8.2     11.64     13.52    0.86x  4.5e-06   (0.93x; did not import)
    t5_encoder       3.1     14.32     14.85    0.96x  3.1e-06   (1.01x; did not import)
    vit              2.0     24.00     24.58    0.98x  5.2e-06   (1.08x; 2.90x)
    wav2vec2        11.0     45.58     44.25    1.03x  9.2e-06   (1.08x; 12.8x; compile 21.9 s)

At sequence 512 (``--seq 512 --repeat 10``): BERT 0.91x, GPT-2 1.01x, Llama 1.02x; the
commit before stop 28's fusion changes, same hour: 0.99x, 1.15x, 1.09x.

On 2026-12-06 (stop 30; 2-core Zen 4 with AVX-512, shared; batch 1, sequence 128,
``--repeat 15``).  In brackets, the same models on this machine at the session's start::

    model        compile  unity ms    ort ms    ratio  max|diff|
    bert             2.2     10.37     11.83    0.88x  1.7e-06   (0.90x)
    convnext         2.9      6.63      7.15    0.93x  2.6e-06   (0.96x)
    gpt2             2.2     12.08     12.49    0.97x  6.0e-06   (0.93x)
    gpt2_cache       2.5     13.69     13.77    0.99x  2.4e-06   (1.10x)
    llama            2.3     10.83     12.54    0.86x  3.7e-06   (0.88x)
    resnet18         4.8     11.63     18.30    0.64x  2.1e-05   (0.63x)
    segformer        6.5      7.95      9.97    0.80x  4.8e-06   (0.74x)
    swin             5.0      9.35      9.76    0.96x  3.8e-06   (0.96x)
    t5_encoder       1.9     10.76     11.20    0.96x  2.9e-06   (0.96x)
    vit              1.2     17.50     17.97    0.97x  5.2e-06   (1.00x)
    wav2vec2         7.3     35.66     40.58    0.88x  8.7e-06   (2.61x)

wav2vec2 had regressed on AVX-512: its positional conv (groups of 24 channels, which no
16-lane block holds, over a symbolic frame count) fell to the fallback rule (34 ms of
105), and its 1-D feature convs split their reduction over rows of 1599 samples; GPT-2
with a cache ran its attention scores' last column tile (``past + seq`` = 133 columns)
lane by lane.  At sequence 100 (``--seq 100``): BERT 0.91x, GPT-2 0.97x, Llama 0.86x,
T5 1.00x.

On 2026-12-07 (stop 39; 2-core Sapphire Rapids, AVX-512, shared; batch 1, sequence 100,
``--repeat 10``).  In brackets, the stop-38 code an hour before::

    model        compile  unity ms    ort ms    ratio  max|diff|
    bert             1.6      6.90      6.43    1.07x  1.8e-06   (1.12x)
    convnext         1.8      4.77      5.02    0.95x  2.6e-06   (1.19x)
    gpt2             1.4      7.44      7.35    1.01x  6.0e-06   (1.17x)
    llama            1.7      6.75      6.46    1.04x  4.0e-06   (1.21x)
    segformer        4.2      7.03      8.80    0.80x  4.8e-06   (0.86x)
    swin             2.8      7.14      8.96    0.80x  3.6e-06   (1.20x)
    t5_encoder       1.3      7.17      6.01    1.19x  2.9e-06   (1.24x)
    vit              0.8     12.06     11.41    1.06x  6.7e-06   (1.23x)

A masked softmax had computed exp's subnormal results (a microcode assist per lane:
GPT-2's, Llama's and Swin's 7x slower than unmasked); ViT's 197 tokens ran their
softmax lane by lane and their attention scores untiled; ConvNeXt's and Swin's
projections over few column panels or a symbolic batch lost their threads or their
register tile.

torchvision's segmentation models and detectors (``make_models.py --tasks DIR``; stop
33, 2026-12-06, Zen 4, ``--repeat 5``; ``_dyn``: symbolic batch, height and width, timed
at 224 x 224; the detectors on one 320 x 320 image)::

    model                                 compile  unity ms    ort ms    ratio  max|diff|
    deeplabv3_mobilenet_v3_large             4.1     18.87     13.10    1.44x  3.7e-09
    deeplabv3_mobilenet_v3_large_dyn         9.4     37.41     11.38    3.29x  3.7e-09
    fasterrcnn_mobilenet_v3_large_320_fpn    7.7    251.40    135.74    1.85x  0.0e+00
    lraspp_mobilenet_v3_large                3.7      7.54      6.32    1.19x  4.5e-08
    lraspp_mobilenet_v3_large_dyn            7.4      9.90      7.48    1.32x  4.5e-08
    retinanet_resnet50_fpn                  17.8   1366.40   1747.08    0.78x  2.0e-04
    ssdlite320_mobilenet_v3_large           85.3    111.71     94.65    1.18x  0.0e+00

At the session's start DeepLabv3 ran 3.52x and LR-ASPP 2.69x (a 16-tap upsampling, the
atrous convs over padding) and the detectors did not compile.

On 2026-12-07 (stop 41; Sapphire Rapids as stop 39; ``--seq 100 --repeat 10``), after
kernels called through one packed argument, symbolic storages shared by their ``Max``
and pointwise tiles over a symbolic size moved back rather than guarded: BERT 0.98x,
ConvNeXt 0.91x, GPT-2 0.88x (with a cache 0.95x), Llama 0.86x, ResNet-18 1.00x,
SegFormer 0.76x, Swin 0.75x, T5 1.01x, ViT 0.95x, wav2vec2 0.90x.  Of the tasks
(``--repeat 5``), with the rate-12 atrous conv over a symbolic size split tap by tap:
DeepLabv3 ``_dyn`` 1.16x -> 1.07x (9.5 / 8.9 ms), LR-ASPP ``_dyn`` 1.04x; torchvision's
MnasNet 1.0 (symbolic batch) 1.22x.  Stop 42 (depthwise convs reading through their
padding): BERT 0.91x, ConvNeXt 0.95x, GPT-2 0.89x (with a cache 0.94x), Llama 0.87x,
ResNet-18 0.97x, SegFormer 0.77x, Swin 0.76x, T5 1.03x, ViT 0.95x, wav2vec2 0.93x;
DeepLabv3 ``_dyn`` 1.07x (8.6 / 8.0 ms), LR-ASPP ``_dyn`` 0.94x (4.9 / 5.2), MnasNet 1.19x
(3.8 / 3.2; back to back, without the pause before each run, 1.05-1.08x); with
weights prefetched from 16 KiB a tile: DeepLabv3 ``_dyn`` 1.00x (9.0 / 9.0 ms), LR-ASPP
``_dyn`` 0.93x, MnasNet 1.12x (3.6 / 3.2).  Stop 43 (Winograd's matmuls prefetching
their weights, 7-row tiles for 49 rows): BERT 0.93x, ConvNeXt 0.99x, GPT-2 0.90x (with a
cache 0.95x), Llama 0.93x, ResNet-18 0.93x, SegFormer 0.75x, Swin 0.78x, T5 1.06x, ViT
1.01x, wav2vec2 0.94x; DeepLabv3 ``_dyn`` 1.01x (7.0 / 7.0 ms), LR-ASPP ``_dyn`` 0.92x,
MnasNet 1.11x (3.5 / 3.1); GoogLeNet and ResNet-50 with every dim fixed (batch 1) 0.82x
and 0.95x.  Stop 44 (native kernel runs in the VM): BERT 0.92x, ConvNeXt 0.87x, GPT-2
0.87x (with a cache 0.92x), Llama 0.86x, ResNet-18 0.91x, SegFormer 0.75x, Swin 0.68x, T5
1.00x, ViT 1.00x, wav2vec2 0.89x; DeepLabv3 ``_dyn`` 1.01x (9.9 / 9.8 ms), LR-ASPP
``_dyn`` 0.91x (both re-exported calibrated); batch-1 GoogLeNet 0.89x, ResNet-50 0.97x.
The
detectors, ``--repeat 5``: Faster R-CNN (MobileNet v3, 320) 0.75x (110 / 147 ms), SSDlite
0.62x, Mask R-CNN 0.90x, Keypoint R-CNN 0.77x (its max |diff| of 23 is one keypoint's
row: two heatmap maxima 4e-5 apart, 25.17994 and 25.17990, swap with the convs' rounding).
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

import unity
from unity import relax
from unity.cli.timing import alternate_latencies
from unity.relax.frontend.onnx import from_onnx

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "relax" / "frontend" / "models"


def model_inputs(model: onnx.ModelProto, batch: int, seq: int, vocab: int) -> dict[str, np.ndarray]:
    """Inputs by the names exporters give them (see the module docstring).

    Example:
        >>> sorted(model_inputs(onnx.load("bert.onnx"), 1, 8, 64))  # doctest: +SKIP
        ['attention_mask', 'input_ids']
    """
    rng = np.random.default_rng(0)
    past = 5
    feeds = {}
    for value in model.graph.input:
        tensor = value.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if value.name == "input_ids":
            feeds[value.name] = rng.integers(0, vocab, (batch, seq)).astype(dtype)
        elif value.name == "attention_mask":
            total = seq + past if any(i.name.startswith("past_") for i in model.graph.input) else seq
            feeds[value.name] = np.ones((batch, total), dtype)
        elif value.name == "pixel_values":
            side = [d or 224 for d in dims[2:]]
            feeds[value.name] = rng.standard_normal((batch, dims[1] or 3, *side)).astype(dtype)
        elif value.name == "images":  # torchvision's detectors: one (3, H, W) image in [0, 1]
            feeds[value.name] = rng.random([d or 320 for d in dims]).astype(dtype)
        elif value.name == "input_values":
            feeds[value.name] = rng.standard_normal((batch, 16000)).astype(dtype)
        elif value.name.startswith("past_"):
            feeds[value.name] = rng.standard_normal((batch, dims[1], past, dims[3])).astype(dtype)
        else:
            raise ValueError(f"{value.name}: no rule for this input's data")
    return feeds


def bench_model(path: str, repeat: int, batch: int, seq: int, width: int = 16) -> str:
    """One table row: compile time, both latencies, their ratio, the largest difference.

    Example:
        >>> print(bench_model("bert.onnx", 3, 1, 8))  # doctest: +SKIP
    """
    model = onnx.load(path)
    vocab = 64 if Path(path).parent == FIXTURES else 1000
    start = time.perf_counter()
    with unity.transform.PassContext(opt_level=3):
        ex = unity.compile(from_onnx(model), target="llvm")
    compile_s = time.perf_counter() - start
    vm = relax.VirtualMachine(ex, unity.cpu())
    options = ort.SessionOptions()
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feeds = model_inputs(model, batch, seq, vocab)
    args = [feeds[i.name] for i in model.graph.input]
    got = vm["main"](*args)
    got = [got] if isinstance(got, unity.runtime.Tensor) else list(got)
    want = session.run(None, feeds)
    diff = max(_diff(g.numpy(), w) for g, w in zip(got, want, strict=True))
    ours, theirs = alternate_latencies([lambda: vm["main"](*args), lambda: session.run(None, feeds)], repeat)
    a, b = float(np.median(ours)), float(np.median(theirs))
    name = Path(path).stem
    return f"{name:{width}s} {compile_s:6.1f} {a:9.2f} {b:9.2f} {a / b:7.2f}x  {diff:.1e}"


def _diff(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| (inf for another shape, 0 for empty outputs: no detections)."""
    if got.shape != want.shape:
        return float("inf")
    return float(np.abs(got.astype(np.float64) - want).max()) if want.size else 0.0


def main() -> None:
    """Time every model of the folder given (default: the test fixtures)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(FIXTURES))
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=128)
    args = parser.parse_args()
    paths = sorted(glob.glob(os.path.join(args.folder, "*.onnx")))
    if not paths:
        raise SystemExit(f"no .onnx files in {args.folder}")
    seq = min(args.seq, 48) if Path(args.folder) == FIXTURES else args.seq  # 64-row position tables
    width = max(16, *(len(Path(p).stem) for p in paths))
    print(f"{'model':{width}s} {'compile':>6s} {'unity ms':>9s} {'ort ms':>9s} {'ratio':>8s}  max|diff|")
    for path in paths:
        print(bench_model(path, args.repeat, args.batch, seq, width), flush=True)


if __name__ == "__main__":
    main()
