"""Recurrent layers (ONNX LSTM / GRU / RNN) next to onnxruntime, over a symbolic sequence.

For each layer kind: a 2-layer stack (``hidden`` units, ``hidden`` inputs) built as ONNX
with the sequence length and batch symbolic, compiled once; then the median latency of
unity and of onnxruntime (2 threads) at each `--seq` length and `--batch`, taken in turn
after a pause (so neither runtime's threads spin on the other's run), their ratio
(unity / onnxruntime, below 1 is faster) and max |unity - onnxruntime|.

Run: ``python bench/recurrent.py [--hidden 256] [--seq 16 100] [--batch 1 16] [--repeat 20]``

Where it stood on 2026-12-08 (stop 45, 2-core Sapphire Rapids, AVX-512, shared; same-run
ratios).  Before stop 45 a layer was unrolled over a static sequence (a symbolic one did not
import): a 2-layer LSTM of 256 units over 100 steps compiled in 18.7 s and ran 6.1x
onnxruntime's time (back to back)::

    layer         seq batch  compile  unity ms   ort ms  ratio  max|diff|
    LSTM-256       16     1      1.2     0.936    1.010  0.93x  1.2e-07
    LSTM-256      100     1      1.2     3.309    3.281  1.01x  1.5e-07
    LSTM-256       16    16      1.2     4.677    4.011  1.17x  1.6e-07
    LSTM-256      100    16      1.2    23.117   19.976  1.16x  1.8e-07
    GRU-256        16     1      0.9     1.066    1.035  1.03x  3.9e-07
    GRU-256       100     1      0.9     3.933    3.464  1.14x  3.9e-07
    GRU-256        16    16      0.9     3.858    4.002  0.96x  5.0e-07
    GRU-256       100    16      0.9    21.877   23.365  0.94x  5.2e-07
    RNN-256        16     1      1.1     0.548    0.696  0.79x  2.1e-06
    RNN-256       100     1      1.1     1.657    2.404  0.69x  2.3e-06
    RNN-256        16    16      1.1     1.590    3.712  0.43x  2.2e-06
    RNN-256       100    16      1.1    10.508   27.462  0.38x  2.5e-06

Alone (no pause, no onnxruntime run between), the LSTM stack over 100 steps at batch 1
took 2.4 ms to onnxruntime's 2.6; run right after onnxruntime's, its threads still
spinning, it took twice as long: each step's parallel loop needs both cores.  Before the
row groups of the same session, batch 16 ran 1.7x (GRU) onnxruntime's time.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import unity
from unity import relax
from unity.cli.timing import alternate_latencies
from unity.relax.frontend.onnx import from_onnx

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def stack(kind: str, hidden: int, layers: int = 2) -> onnx.ModelProto:
    """`layers` single-direction layers of `kind`, each feeding its Y to the next.

    Example:
        >>> [n.op_type for n in stack("GRU", 8).graph.node][:2]
        ['GRU', 'Squeeze']
    """
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    gates = GATES[kind]
    for i in range(layers):
        for name, shape in ((f"W{i}", (1, gates * hidden, hidden)),
                            (f"R{i}", (1, gates * hidden, hidden)),
                            (f"B{i}", (1, 2 * gates * hidden))):  # fmt: skip
            scale = 0.1 if name.startswith("B") else 1 / np.sqrt(hidden)
            value = (rng.standard_normal(shape) * scale).astype(np.float32)
            inits.append(numpy_helper.from_array(value, name))
        nodes.append(helper.make_node(kind, [x, f"W{i}", f"R{i}", f"B{i}"], [f"Y{i}"],
                                      hidden_size=hidden))  # fmt: skip
        axes = f"axes{i}"
        inits.append(numpy_helper.from_array(np.array([1], np.int64), axes))
        nodes.append(helper.make_node("Squeeze", [f"Y{i}", axes], [f"h{i}"]))
        x = f"h{i}"
    out = helper.make_tensor_value_info(x, TensorProto.FLOAT, ["seq", "batch", hidden])
    inp = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", "batch", hidden])
    graph = helper.make_graph(nodes, "stack", [inp], [out], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main() -> None:
    """Time each kind at each sequence length; print one row each."""
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--seq", type=int, nargs="+", default=[16, 100])
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(f"{'layer':12s} {'seq':>4s} {'batch':>5s} {'compile':>8s} {'unity ms':>9s} "
          f"{'ort ms':>8s} {'ratio':>6s}  max|diff|")  # fmt: skip
    for kind in ("LSTM", "GRU", "RNN"):
        proto = stack(kind, args.hidden)
        start = time.perf_counter()
        with unity.transform.PassContext(opt_level=3):
            ex = unity.compile(from_onnx(proto), target="llvm")
        compile_s = time.perf_counter() - start
        fn = relax.VirtualMachine(ex, unity.cpu())["main"]
        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        session = ort.InferenceSession(proto.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])  # fmt: skip
        for seq, batch in ((s, b) for b in args.batch for s in args.seq):
            x = np.random.default_rng(seq).standard_normal((seq, batch, args.hidden))
            x = x.astype(np.float32)
            diff = float(np.abs(fn(x).numpy() - session.run(None, {"x": x})[0]).max())
            mine, theirs = alternate_latencies(
                [lambda: fn(x), lambda: session.run(None, {"x": x})], args.repeat)
            u, o = float(np.median(mine)), float(np.median(theirs))
            print(f"{kind}-{args.hidden:<7d} {seq:4d} {batch:5d} {compile_s:8.1f} {u:9.3f} "
                  f"{o:8.3f} {u / o:5.2f}x  {diff:.1e}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
