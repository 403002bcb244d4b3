"""Models shared by the relax-on-CUDA tests: an MLP (symbolic batch), a float16 MLP, a small
CNN, ResNet-50 (and in float16)."""

from __future__ import annotations

import os

import numpy as np
import onnx

from unity import relax
from unity.relax import op

RNG = np.random.default_rng(0)
LIGHT_RESNET50 = os.path.join(
    os.path.dirname(onnx.__file__), "backend", "test", "data", "light", "light_resnet50.onnx"
)


def _two_dense(x_shape, w1, b1, w2):
    """x -> dense(w1) + b1 -> relu -> dense(w2), in the weights' dtype."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(x_shape, str(w1.dtype)))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(op.matmul(x, op.permute_dims(relax.const(w1))))
            h = bb.emit(op.nn.relu(op.add(h, relax.const(b1))))
            out = bb.emit_output(op.matmul(h, op.permute_dims(relax.const(w2))))
        bb.emit_func_output(out)
    return bb.get()


def mlp():
    """x (n, 16) -> dense 32 + bias + relu -> dense 10: the batch `n` is symbolic."""
    w1 = RNG.standard_normal((32, 16)).astype("float32")
    b1 = RNG.standard_normal(32).astype("float32")
    w2 = RNG.standard_normal((10, 32)).astype("float32")
    return _two_dense(("n", 16), w1, b1, w2)


def mlp_fp16():
    """x (64, 128) float16 -> dense 128 + bias + relu -> dense 64, all in float16 (the
    GEMMs go to the tensor cores); returns the module and its weights."""
    w1 = (RNG.standard_normal((128, 128)) / 8).astype("float16")
    b1 = RNG.standard_normal(128).astype("float16")
    w2 = (RNG.standard_normal((64, 128)) / 8).astype("float16")
    return _two_dense((64, 128), w1, b1, w2), (w1, b1, w2)


def cnn():
    """conv2d 3x3 + relu + max-pool + flatten + softmax on a (1, 3, 8, 8) image."""
    w = RNG.standard_normal((4, 3, 3, 3)).astype("float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 3, 8, 8), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(op.nn.conv2d(x, relax.const(w), padding=1))
            h = bb.emit(op.nn.relu(h))
            h = bb.emit(op.nn.max_pool2d(h, pool_size=2, strides=2))
            out = bb.emit_output(op.nn.softmax(op.reshape(h, (1, 64)), axis=-1))
        bb.emit_func_output(out)
    return bb.get()


def resnet50():
    """The light ResNet-50 shipped with onnx, imported with `from_onnx`."""
    from unity.relax.frontend.onnx import from_onnx

    return from_onnx(onnx.load(LIGHT_RESNET50))


def resnet50_fp16():
    """The light ResNet-50 in float16: its weights, input and output cast (for the
    tensor-core GEMMs)."""
    from onnx import TensorProto, numpy_helper

    from unity.relax.frontend.onnx import from_onnx

    model = onnx.load(LIGHT_RESNET50)
    graph = model.graph
    for k, init in enumerate(list(graph.initializer)):
        if init.data_type == TensorProto.FLOAT:
            half = numpy_helper.to_array(init).astype("float16")
            graph.initializer[k].CopyFrom(numpy_helper.from_array(half, init.name))
    for value in [*graph.input, *graph.output]:
        if value.type.tensor_type.elem_type == TensorProto.FLOAT:
            value.type.tensor_type.elem_type = TensorProto.FLOAT16
    for node in graph.node:  # its weights come from ConstantOfShape nodes
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type == TensorProto.FLOAT:
                attr.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(attr.t).astype("float16")))
    del graph.value_info[:]
    return from_onnx(model)


def resnet50_input() -> np.ndarray:
    """The input onnx's backend runner uses for the light models: ``arange(n) / n``."""
    n = 1 * 3 * 224 * 224
    return (np.arange(n).reshape(1, 3, 224, 224) / n).astype("float32")
