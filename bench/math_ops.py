"""Transcendental-heavy operators against onnxruntime: exp, erf, GELU, softmax, layer norm.

Each operator is a one- or few-node ONNX model, compiled by `unity.compile` (default
schedules; `exp`/`erf` lowered to our polynomial and rational forms) and run by
onnxruntime's CPU provider in the same process.  Each runtime is timed in steady state:
blocks of back-to-back calls, the blocks of the two runtimes alternating with a pause
between them (so the other's worker threads have stopped spinning); the figure is the
best block's time per call.  The last column is the largest difference from onnxruntime's output, relative to
that output's largest magnitude.

Run: ``python bench/math_ops.py``

Zen 3, 2 cores (2026-12-05), per call, unity / onnxruntime (two runs):

    exp       (128, 3072)          0.092 / 0.093 ms   0.99x-1.03x
    erf       (128, 3072)          0.087 / 0.161 ms   0.52x-0.54x
    gelu      (128, 3072)          0.114 / 0.315 ms   0.33x-0.38x   (erf + 4 elementwise ops)
    softmax   (1, 12, 128, 128)    0.119 / 0.066 ms   1.57x-1.98x   (six loop nests, see below)
    layernorm (128, 768)           0.033 / 0.039 ms   0.84x-0.91x

Zen 4 with AVX-512, 2 cores (2026-12-06, after stop 28 ran softmax's stages in one loop
over the rows), two runs:

    exp       (128, 3072)          0.065 / 0.044 ms   1.46x-1.49x   (16-lane code, ~24 ops)
    erf       (128, 3072)          0.063 / 0.147 ms   0.43x-0.49x
    gelu      (128, 3072)          0.075 / 0.203 ms   0.32x-0.37x
    softmax   (1, 12, 128, 128)    0.050 / 0.046 ms   1.08x-1.09x
    layernorm (128, 768)           0.019 / 0.028 ms   0.66x-0.68x

After `exp` scaled by `2^n` with AVX-512's `vscalefps` (`tir.ldexp`; the two
exponent-field products before it), same machine, two runs:

    exp       (128, 3072)          0.044 / 0.043 ms   1.01x-1.03x
    erf       (128, 3072)          0.062 / 0.111 ms   0.56x-0.57x
    gelu      (128, 3072)          0.075 / 0.204 ms   0.37x-0.39x
    softmax   (1, 12, 128, 128)    0.046 / 0.047 ms   0.99x-1.02x
    layernorm (128, 768)           0.019 / 0.029 ms   0.63x-0.64x

Our softmax ran (until stop 28) its max, exp, sum and scaling as separate parallel loop
nests over the whole tensor; onnxruntime does each row in one pass, and so do we now.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import unity
from unity.relax.frontend.onnx import from_onnx
from unity.runtime import cpu
from unity.runtime.vm import VirtualMachine

OPSET = 17


def _model(nodes: list, shape: tuple[int, ...], consts: dict[str, np.ndarray]) -> onnx.ModelProto:
    """A graph from input `x` to output `y` through `nodes`, with `consts` as initializers."""
    graph = helper.make_graph(
        nodes,
        "op",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in consts.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def models() -> dict[str, tuple[onnx.ModelProto, tuple[int, ...]]]:
    """The benchmarked operators: name -> (model, input shape).

    Example:
        >>> sorted(models())
        ['erf', 'exp', 'gelu', 'layernorm', 'softmax']
    """
    wide, rows, scores = (128, 3072), (128, 768), (1, 12, 128, 128)
    gelu = [
        helper.make_node("Mul", ["x", "inv_sqrt2"], ["a"]),
        helper.make_node("Erf", ["a"], ["b"]),
        helper.make_node("Add", ["b", "one"], ["c"]),
        helper.make_node("Mul", ["x", "c"], ["d"]),
        helper.make_node("Mul", ["d", "half"], ["y"]),
    ]
    gelu_consts = {"inv_sqrt2": 2**-0.5, "one": 1.0, "half": 0.5}
    norm = helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], axis=-1)
    norm_consts = {"gamma": np.ones(rows[-1]), "beta": np.zeros(rows[-1])}
    return {
        "exp": (_model([helper.make_node("Exp", ["x"], ["y"])], wide, {}), wide),
        "erf": (_model([helper.make_node("Erf", ["x"], ["y"])], wide, {}), wide),
        "gelu": (_model(gelu, wide, gelu_consts), wide),
        "softmax": (_model([helper.make_node("Softmax", ["x"], ["y"])], scores, {}), scores),
        "layernorm": (_model([norm], rows, norm_consts), rows),
    }


def per_call(
    fns: list[Callable[[], object]], calls: int, blocks: int, pause_s: float
) -> list[float]:
    """Seconds per call of each of `fns`: the best of `blocks` blocks of `calls` calls,
    the runtimes' blocks alternating after a pause.

    Example:
        >>> [t >= 0 for t in per_call([lambda: None], calls=3, blocks=2, pause_s=0)]
        [True]
    """
    best = [float("inf")] * len(fns)
    for fn in fns:
        fn()
    for _ in range(blocks):
        for n, fn in enumerate(fns):
            time.sleep(pause_s)
            fn()  # the first call after the pause wakes the threads; not timed
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            best[n] = min(best[n], (time.perf_counter() - start) / calls)
    return best


def main(argv: list[str] | None = None) -> None:
    """Time every operator of `models()` in unity and onnxruntime; print the table.

    Example:
        >>> main(["--ops", "exp", "--calls", "2", "--blocks", "1"])  # doctest: +SKIP
    """
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=",".join(models()), help="comma-separated subset")
    parser.add_argument("--calls", type=int, default=200, help="calls per timed block")
    parser.add_argument("--blocks", type=int, default=7, help="timed blocks per runtime")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'op':10s} {'shape':20s} {'unity ms':>9s} {'ort ms':>9s} {'ratio':>7s} {'max rel':>10s}")
    for name in args.ops.split(","):
        model, shape = models()[name]
        x = (rng.standard_normal(shape) * 2).astype(np.float32)
        vm = VirtualMachine(unity.compile(from_onnx(model), target="llvm"), cpu())
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        ours, theirs = vm["main"](x).numpy(), sess.run(None, {"x": x})[0]
        diff = float(np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs)))
        t_unity, t_ort = per_call(
            [lambda: vm["main"](x), lambda: sess.run(None, {"x": x})],
            args.calls, args.blocks, pause_s=0.1,
        )  # fmt: skip
        print(
            f"{name:10s} {str(shape):20s} {t_unity * 1e3:9.3f} {t_ort * 1e3:9.3f} "
            f"{t_unity / t_ort:6.2f}x {diff:10.2e}"
        )


if __name__ == "__main__":
    main()
