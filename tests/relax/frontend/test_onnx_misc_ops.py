"""The ONNX ops of `frontend.onnx.ops.misc` (with Pad's wrap mode and MaxPool's Indices):
clear errors for bad nodes, and CUDA builds.

Their numbers are checked by the ONNX backend node tests (`test_onnx_node.py`); here each
op also compiles for `cuda` (nvcc accepts the C) and a malformed node names itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest
from onnx import TensorProto, helper

import unity
from unity.codegen.cuda_build import compile_ptx, nvcc_path
from unity.ir.transform import PassContext
from unity.relax.frontend.onnx import OnnxImportError, from_onnx

from .onnx_helpers import FLOAT, INT64, model, run_unity, tensor

needs_nvcc = pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not installed")


def _bitcast_model(src: int, dst: int, opset: int = 26) -> object:
    node = helper.make_node("BitCast", ["x"], ["y"], to=dst, name="bc")
    return model([node], [tensor("x", src, [2, 3])], [tensor("y", dst, [2, 3])], opset=opset)


def test_bitcast_float_to_int_on_the_cpu():
    x = np.array([[1.0, -2.0, 0.5], [np.inf, 0.0, -0.0]], "float32")
    (y,) = run_unity(from_onnx(_bitcast_model(FLOAT, TensorProto.INT32)), x)
    np.testing.assert_array_equal(y, x.view("int32"))


def test_bitcast_of_another_width_names_the_node():
    proto = _bitcast_model(FLOAT, TensorProto.INT64)
    want = (
        'BitCast node "bc": cannot reinterpret float32 as int64: float32 has 32 bits but int64 has'
    )
    with pytest.raises(OnnxImportError, match=re.escape(want)):
        from_onnx(proto)


def _col2im_model(
    cols: Sequence[int], image: Sequence[int], block: Sequence[int], **attrs: object
) -> object:
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], name="c2i", **attrs)
    consts = {"image": np.array(image, "int64"), "block": np.array(block, "int64")}
    out = [cols[0], cols[1] // int(np.prod(block)), *image]
    return model([node], [tensor("x", FLOAT, cols)], [tensor("y", FLOAT, out)], consts, opset=18)


def test_col2im_with_a_wrong_window_count_names_the_node():
    proto = _col2im_model([1, 4, 8], [4, 4], [2, 2])
    want = (
        'Col2Im node "c2i": DiagnosticError: col2im expects input dim 2 = 9 windows [3, 3], got 8'
    )
    with pytest.raises(OnnxImportError, match=re.escape(want)):
        from_onnx(proto)


def test_col2im_with_pads_of_the_wrong_length_names_the_node():
    proto = _col2im_model([1, 4, 9], [4, 4], [2, 2], pads=[1, 1])
    with pytest.raises(
        OnnxImportError, match=re.escape('Col2Im node "c2i": expects 4 pads, got 2: [1, 1]')
    ):
        from_onnx(proto)


def _reverse_sequence_model(**attrs: object) -> object:
    node = helper.make_node("ReverseSequence", ["x", "lens"], ["y"], name="rs", **attrs)
    inputs = [tensor("x", FLOAT, [4, 3]), tensor("lens", INT64, [3])]
    return model([node], inputs, [tensor("y", FLOAT, [4, 3])], opset=10)


def _tensor_scatter_model(update: Sequence[int] = (2, 3, 2, 4), **attrs: object) -> object:
    node = helper.make_node("TensorScatter", ["past", "new", "pos"], ["y"], name="ts", **attrs)
    inputs = [
        tensor("past", FLOAT, [2, 3, 5, 4]),
        tensor("new", FLOAT, update),
        tensor("pos", INT64, [2]),
    ]
    return model([node], inputs, [tensor("y", FLOAT, [2, 3, 5, 4])], opset=24)


def test_reverse_sequence_on_the_cpu():
    x, lens = np.arange(12, dtype="float32").reshape(4, 3), np.array([4, 3, 1], "int64")
    (y,) = run_unity(from_onnx(_reverse_sequence_model()), x, lens)
    want = x.copy()
    for b, n in enumerate(lens):
        want[:n, b] = x[:n, b][::-1]
    np.testing.assert_array_equal(y, want)


def test_reverse_sequence_on_equal_axes_names_the_node():
    proto = _reverse_sequence_model(batch_axis=0, time_axis=0)
    want = 'ReverseSequence node "rs": expects batch_axis and time_axis to be 0 and 1, got 0 and 0'
    with pytest.raises(OnnxImportError, match=re.escape(want)):
        from_onnx(proto)


def test_tensor_scatter_with_a_longer_update_names_the_node():
    proto = _tensor_scatter_model(update=(2, 3, 6, 4))
    want = 'TensorScatter node "ts": DiagnosticError: tensor_scatter cannot write an update into'
    with pytest.raises(OnnxImportError, match=re.escape(want)):
        from_onnx(proto)


def test_tensor_scatter_with_an_unknown_mode_names_the_node():
    proto = _tensor_scatter_model(mode="ring")
    with pytest.raises(
        OnnxImportError, match=re.escape("TensorScatter node \"ts\": has no mode 'ring'")
    ):
        from_onnx(proto)


def _max_unpool_model(output_shape: Sequence[int] | None = None, **attrs: object) -> object:
    names = ["x", "i"] + (["shape"] if output_shape is not None else [])
    node = helper.make_node(
        "MaxUnpool", names, ["y"], name="mu", kernel_shape=[2, 2], strides=[2, 2], **attrs
    )
    inputs = [tensor("x", FLOAT, [1, 2, 3, 3]), tensor("i", INT64, [1, 2, 3, 3])]
    consts = {} if output_shape is None else {"shape": np.array(output_shape, "int64")}
    out = list(output_shape or [1, 2, 6, 6])
    return model([node], inputs, [tensor("y", FLOAT, out)], consts, opset=22)


def test_max_unpool_with_a_small_output_shape_names_the_node():
    proto = _max_unpool_model([1, 2, 5, 6])
    want = 'MaxUnpool node "mu": DiagnosticError: max_unpool has an output spatial shape [5, 6]'
    with pytest.raises(OnnxImportError, match=re.escape(want)):
        from_onnx(proto)


def test_max_unpool_with_another_channel_count_names_the_node():
    proto = _max_unpool_model([1, 3, 6, 6])
    want = 'MaxUnpool node "mu": has output_shape [1, 3, 6, 6], but the input starts (1, 2)'
    with pytest.raises(OnnxImportError, match=re.escape(want)):
        from_onnx(proto)


@pytest.mark.parametrize(("pads", "numpy_pads"), [
    ([0, 1, 5, 2, 0, 3], [(0, 2), (1, 0), (5, 3)]),  # wider than the axis: wraps again
    ([1, -1, 0, 2, 0, 1], [(1, 2), (0, 0), (0, 1)]),  # a negative width crops
])  # fmt: skip
def test_pad_wrap_matches_numpy(pads, numpy_pads):
    node = helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap")
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    want = np.pad(x, [(max(b, 0), max(a, 0)) for b, a in numpy_pads], mode="wrap")
    if pads[1] < 0:
        want = want[:, -pads[1] :]
    proto = model([node], [tensor("x", FLOAT, [2, 3, 4])], [tensor("y", FLOAT, want.shape)],
                  {"pads": np.array(pads, "int64")}, opset=19)  # fmt: skip
    (y,) = run_unity(from_onnx(proto), x)
    np.testing.assert_array_equal(y, want)


def _pool_unpool_model() -> object:
    pool = helper.make_node(
        "MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]
    )
    unpool = helper.make_node("MaxUnpool", ["y", "i"], ["z"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1])  # fmt: skip
    outputs = [
        tensor("y", FLOAT, [2, 3, 3, 3]),
        tensor("i", INT64, [2, 3, 3, 3]),
        tensor("z", FLOAT, [2, 3, 5, 5]),
    ]
    return model([pool, unpool], [tensor("x", FLOAT, [2, 3, 5, 5])], outputs, opset=22)


def test_max_unpool_puts_max_pool_values_back_at_their_indices():
    x = np.random.default_rng(1).permutation(150).astype("float32").reshape(2, 3, 5, 5)  # no ties
    y, i, z = run_unity(from_onnx(_pool_unpool_model()), x)
    want_y = np.zeros((2, 3, 3, 3), "float32")
    for a, b in np.ndindex(3, 3):
        rows, cols = slice(max(2 * a - 1, 0), 2 * a + 2), slice(max(2 * b - 1, 0), 2 * b + 2)
        want_y[:, :, a, b] = x[:, :, rows, cols].max(axis=(2, 3))
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(x.reshape(-1)[i], y)  # flat over the whole input
    want_z = np.where(np.isin(x, y), x, 0)
    np.testing.assert_array_equal(z, want_z)


CUDA_CASES = {
    "bitcast": lambda: _bitcast_model(FLOAT, TensorProto.UINT32),
    "reverse_sequence": _reverse_sequence_model,
    "tensor_scatter": lambda: _tensor_scatter_model(mode="circular"),
    "max_unpool": lambda: _max_unpool_model([1, 2, 7, 6]),
    "max_pool_indices": _pool_unpool_model,
    "col2im": lambda: _col2im_model([2, 12, 12], [5, 4], [2, 2], strides=[2, 1], pads=[1, 0, 0, 1]),
}
"""Each op's model, compiled for CUDA below."""


@needs_nvcc
@pytest.mark.parametrize("name", sorted(CUDA_CASES))
def test_op_compiles_for_cuda_with_nvcc(name):
    with PassContext(opt_level=0):
        ex = unity.compile(from_onnx(CUDA_CASES[name]()), target="cuda")
    kernels = ex.kernels
    ptx = compile_ptx(kernels.source, kernels.arch)
    entries = re.findall(r"\.entry\s+(\w+)\s*\(", ptx)
    assert any(e.startswith(f"{name}_kernel") for e in entries), entries


def test_scatter_of_expanded_row_indices_scatters_rows():
    """torchvision's RoI pooler: ``result.scatter_(0, idx.view(-1, 1, 1).expand(...), part)``.
    The scatter takes the unexpanded indices (a row's last update found once per row)."""
    from .onnx_helpers import run_ort

    nodes = [helper.make_node("Reshape", ["idx", "col"], ["idx3"]),
             helper.make_node("Shape", ["part"], ["pshape"]),
             helper.make_node("Expand", ["idx3", "pshape"], ["big"]),
             helper.make_node("ScatterElements", ["x", "big", "part"], ["y"], axis=0)]
    proto = model(nodes, [tensor("x", FLOAT, [6, 4, 3]), tensor("idx", INT64, ["k"]), tensor("part", FLOAT, ["k", 4, 3])],
                  [tensor("y", FLOAT, [6, 4, 3])], {"col": np.array([-1, 1, 1], np.int64)})
    mod = from_onnx(proto)
    (scatter,) = [b.value for blk in mod["main"].body.blocks for b in blk.bindings
                  if getattr(getattr(b.value, "op", None), "name", "") == "relax.scatter_elements"]
    assert [str(d) for d in scatter.args[1].struct_info.shape] == ["k", "1", "1"]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 4, 3)).astype(np.float32)
    for idx in ([4, 0, 2], [5, -2, 1, 3], [1], []):  # none: a pyramid level without boxes
        idx = np.array(idx, np.int64)
        part = rng.standard_normal((len(idx), 4, 3)).astype(np.float32)
        got = run_unity(mod, x, idx, part)[0]
        np.testing.assert_array_equal(got, run_ort(proto, {"x": x, "idx": idx, "part": part})[0])
