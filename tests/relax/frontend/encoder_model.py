"""A transformer encoder as exporters write it, built with `onnx.helper` (dynamic batch/seq).

Each layer: Q/K/V projections, heads split by ``Reshape`` to a shape made from
``Shape``/``Gather``/``Concat`` of the input, scaled dot-product attention with
``Softmax``, the output projection, residual + ``LayerNormalization``, an Erf-GELU feed
forward, residual + ``LayerNormalization``.  The tests use a tiny one; the bench uses
BERT-base sizes (``d=768, heads=12, hidden=3072``).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["encoder_model"]


def encoder_model(
    d: int = 16, heads: int = 2, hidden: int = 32, layers: int = 1, seed: int = 0
) -> onnx.ModelProto:
    """`layers` encoder layers on ``x: [batch, seq, d]`` with seeded random weights."""
    rng = np.random.default_rng(seed)
    dh = d // heads
    inits: dict[str, np.ndarray] = {
        "i0": np.array(0, "int64"), "i1": np.array(1, "int64"), "ax0": np.array([0], "int64"),
        "split_heads": np.array([heads, dh], "int64"), "model_dim": np.array([d], "int64"),
        "scale": np.array(1 / np.sqrt(dh), "float32"), "half": np.array(0.5, "float32"),
        "one": np.array(1.0, "float32"), "rsqrt2": np.array(1 / np.sqrt(2), "float32"),
    }  # fmt: skip
    n = helper.make_node
    nodes = [
        n("Shape", ["x"], ["s"]), n("Gather", ["s", "i0"], ["b"]), n("Gather", ["s", "i1"], ["q_len"]),
        n("Unsqueeze", ["b", "ax0"], ["bu"]), n("Unsqueeze", ["q_len", "ax0"], ["su"]),
        n("Concat", ["bu", "su", "split_heads"], ["head_shape"], axis=0),
        n("Concat", ["bu", "su", "model_dim"], ["merge_shape"], axis=0),
    ]  # fmt: skip
    src = "x"
    for layer in range(layers):
        p = f"l{layer}_"
        scale = 0.3 if d <= 64 else 1 / np.sqrt(d)
        shapes = {"wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d), "w1": (d, hidden),
                  "w2": (hidden, d), "bq": (d,), "bo": (d,), "b1": (hidden,), "g": (d,),
                  "beta": (d,)}  # fmt: skip
        inits.update(
            {p + k: (rng.standard_normal(s) * scale).astype("float32") for k, s in shapes.items()}
        )
        nodes += _layer(p, src)
        src = p + "y"
    graph_in = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", d])]
    graph_out = [helper.make_tensor_value_info(src, TensorProto.FLOAT, ["batch", "seq", d])]
    initializers = [numpy_helper.from_array(v, k) for k, v in inits.items()]
    graph = helper.make_graph(nodes, "encoder", graph_in, graph_out, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _layer(p: str, x: str) -> list[onnx.NodeProto]:
    """The nodes of one layer reading `x`, writing ``{p}y`` (weights named ``{p}w..``)."""
    n = helper.make_node
    nodes = []
    for name, bias in (("q", "bq"), ("k", None), ("v", None)):
        nodes.append(n("MatMul", [x, f"{p}w{name}"], [f"{p}{name}0"]))
        src = f"{p}{name}0"
        if bias:
            nodes.append(n("Add", [src, p + bias], [f"{p}{name}1"]))
            src = f"{p}{name}1"
        nodes.append(n("Reshape", [src, "head_shape"], [f"{p}{name}r"]))
        perm = [0, 2, 3, 1] if name == "k" else [0, 2, 1, 3]
        nodes.append(n("Transpose", [f"{p}{name}r"], [f"{p}{name}t"], perm=perm))
    return nodes + [
        n("MatMul", [f"{p}qt", f"{p}kt"], [f"{p}scores0"]),
        n("Mul", [f"{p}scores0", "scale"], [f"{p}scores"]),
        n("Softmax", [f"{p}scores"], [f"{p}probs"], axis=-1),
        n("MatMul", [f"{p}probs", f"{p}vt"], [f"{p}ctx0"]),
        n("Transpose", [f"{p}ctx0"], [f"{p}ctx1"], perm=[0, 2, 1, 3]),
        n("Reshape", [f"{p}ctx1", "merge_shape"], [f"{p}ctx"]),
        n("MatMul", [f"{p}ctx", f"{p}wo"], [f"{p}attn0"]), n("Add", [f"{p}attn0", f"{p}bo"], [f"{p}attn"]),
        n("Add", [x, f"{p}attn"], [f"{p}res1"]),
        n("LayerNormalization", [f"{p}res1", f"{p}g", f"{p}beta"], [f"{p}h"], axis=-1, epsilon=1e-5),
        n("MatMul", [f"{p}h", f"{p}w1"], [f"{p}f0"]), n("Add", [f"{p}f0", f"{p}b1"], [f"{p}f1"]),
        n("Mul", [f"{p}f1", "rsqrt2"], [f"{p}f2"]), n("Erf", [f"{p}f2"], [f"{p}f3"]),
        n("Add", [f"{p}f3", "one"], [f"{p}f4"]), n("Mul", [f"{p}f1", f"{p}f4"], [f"{p}f5"]),
        n("Mul", [f"{p}f5", "half"], [f"{p}gelu"]),
        n("MatMul", [f"{p}gelu", f"{p}w2"], [f"{p}f6"]), n("Add", [f"{p}h", f"{p}f6"], [f"{p}res2"]),
        n("LayerNormalization", [f"{p}res2", f"{p}g", f"{p}beta"], [f"{p}y"], axis=-1, epsilon=1e-5),
    ]  # fmt: skip
