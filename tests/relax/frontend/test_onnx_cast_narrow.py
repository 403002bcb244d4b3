"""Casts to and from ONNX's narrow types (float8, float4, e8m0, int4, int2) on run-time
data, narrow graph inputs, and `CastLike` to a value computed as a narrow type: against
the ONNX reference implementation (which casts with ml_dtypes)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import unity
from unity import relax
from unity.relax.frontend.onnx import from_onnx
from unity.runtime.narrow import widened_dtype

RNG = np.random.default_rng(5)
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")  # the reference's
NARROW = {  # ONNX element type: ml_dtypes type
    TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
    TensorProto.FLOAT4E2M1: ml_dtypes.float4_e2m1fn, TensorProto.INT4: ml_dtypes.int4,
    TensorProto.UINT4: ml_dtypes.uint4, TensorProto.INT2: ml_dtypes.int2, TensorProto.UINT2: ml_dtypes.uint2,
}  # fmt: skip


def _model(nodes, inputs, outputs, opset=25):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _io(name: str, elem: int, shape=("n",)):
    return helper.make_tensor_value_info(name, elem, list(shape))


def _run(model, *inputs):
    vm = relax.VirtualMachine(unity.compile(from_onnx(model)), unity.cpu())
    out = vm["main"](*inputs)
    return [o.numpy() for o in out] if isinstance(out, tuple) else [out.numpy()]


def _reference(model, *inputs):
    names = [i.name for i in model.graph.input]
    return ReferenceEvaluator(model).run(None, dict(zip(names, inputs, strict=True)))


def _assert_same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values (NaN where NaN), compared in the dtype unity returns them in."""
    np.testing.assert_array_equal(got, want.astype(got.dtype))


def _floats() -> np.ndarray:
    """Values that exercise rounding: random magnitudes from 2**-30 to 2**20, ties of the
    coarse formats, the largest values and past them, infinities, NaN, zeros."""
    mags = np.exp2(RNG.uniform(-30, 20, 400)) * RNG.choice([-1, 1], 400)
    ties = np.array([0.25, 0.75, 1.25, 2.5, 3.5, 5.0, 7.0, 0.0625, 0.1875, 448 + 16, 240 + 8, 57344 + 4096, 6.5])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 448, -240, 57344, 6, 1e30, -1e-30])
    return np.concatenate([mags, ties, -ties, special]).astype(np.float32)


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("to", sorted(NARROW))
def test_cast_float_to_a_narrow_type_matches_the_reference(to: int, saturate: int):
    x = _floats()
    if NARROW[to] in (ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2):
        x = np.concatenate([np.arange(-20, 21, 0.5), [np.nan, np.inf, 1e9]]).astype(np.float32)
    node = helper.make_node("Cast", ["x"], ["y"], to=to, saturate=saturate)
    model = _model([node], [_io("x", TensorProto.FLOAT)], [_io("y", to)])
    (want,) = _reference(model, x)
    (got,) = _run(model, x)
    _assert_same(got, want)
    if want.dtype.kind == "V" or "float" in want.dtype.name:  # -0 stays -0 where the type has it
        numbers = ~np.isnan(want.astype(np.float32))
        assert np.array_equal(np.signbit(got[numbers]), np.signbit(want.astype(np.float32)[numbers]))


@pytest.mark.parametrize(("source", "to"), [(TensorProto.INT32, TensorProto.INT4), (TensorProto.INT64, TensorProto.UINT4),
                                            (TensorProto.INT8, TensorProto.INT2), (TensorProto.UINT8, TensorProto.UINT2)])  # fmt: skip
def test_cast_an_integer_to_a_narrow_integer_keeps_its_low_bits(source: int, to: int):
    dtype = helper.tensor_dtype_to_np_dtype(source)
    info = np.iinfo(dtype)
    x = np.array([info.min, -100, -9, -8, -3, -2, -1, 0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 100, info.max]).astype(dtype)
    node = helper.make_node("Cast", ["x"], ["y"], to=to)
    model = _model([node], [_io("x", source)], [_io("y", to)])
    (got,) = _run(model, x)
    _assert_same(got, x.astype(NARROW[to]))


@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [1, 0])
def test_cast_to_e8m0_rounds_the_exponent_as_the_reference(round_mode: str, saturate: int):
    x = np.concatenate([_floats(), np.float32([3.0, 1.5, 1.25, 1.75, 2**127 * 1.5, -4.0, 1e-40, 2**-127])]).astype(np.float32)
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E8M0, saturate=saturate, round_mode=round_mode)
    model = _model([node], [_io("x", TensorProto.FLOAT)], [_io("y", TensorProto.FLOAT8E8M0)])
    (want,) = _reference(model, x)
    (got,) = _run(model, x)
    _assert_same(got, want)


def _every_value(kind) -> np.ndarray:
    """Every value of a narrow type (the finite and special ones of an 8-bit float)."""
    name = np.dtype(kind).name
    if name.startswith("float8"):
        return np.arange(256, dtype=np.uint8).view(kind)
    if name.startswith("float4"):
        return np.float32([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6]).astype(kind)
    info = ml_dtypes.iinfo(kind)
    return np.arange(int(info.min), int(info.max) + 1).astype(kind)


@pytest.mark.parametrize("elem", sorted(NARROW))
def test_a_narrow_graph_input_takes_its_ml_dtypes_array_or_the_holding_dtype(elem: int):
    """An ml_dtypes array is widened exactly; values given in the holding dtype are first
    cast to the input's type (rounded to the float8 grid, an int4's low bits)."""
    kind = NARROW[elem]
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)
    model = _model([node], [_io("x", elem)], [_io("y", TensorProto.FLOAT)])
    exact = _every_value(kind)
    (got,) = _run(model, exact)
    _assert_same(got, exact.astype(np.float32))
    wide = widened_dtype(np.dtype(kind).name)
    if wide == "float32":
        held = np.float32([0.3, -1.7, 2.9, 1000.0, 5e-3, 7.0, -0.0])
    else:
        held = np.arange(-128, 128).astype(wide) if wide == "int8" else np.arange(256).astype(wide)
    (got,) = _run(model, held)
    with np.errstate(over="ignore", invalid="ignore"):
        _assert_same(got, held.astype(kind).astype(np.float32))


def test_castlike_takes_the_narrow_type_of_a_value_computed_in_the_graph():
    """`like` is float8 made by a Cast and reshaped: CastLike rounds to float8, not float32;
    an int4 made the same way makes CastLike keep the low 4 bits."""
    nodes = [helper.make_node("Cast", ["a"], ["a8"], to=TensorProto.FLOAT8E5M2),
             helper.make_node("Reshape", ["a8", "shape"], ["like"]),
             helper.make_node("CastLike", ["x", "like"], ["y"]),
             helper.make_node("Cast", ["k"], ["k4"], to=TensorProto.INT4),
             helper.make_node("Transpose", ["k4"], ["like4"]),
             helper.make_node("CastLike", ["i", "like4"], ["z"])]  # fmt: skip
    inputs = [_io("a", TensorProto.FLOAT, [2, 2]), _io("x", TensorProto.FLOAT), _io("k", TensorProto.INT32, [2]),
              _io("i", TensorProto.INT32)]  # fmt: skip
    graph = helper.make_graph(nodes, "g", inputs, [_io("y", TensorProto.FLOAT8E5M2), _io("z", TensorProto.INT4)],
                              [helper.make_tensor("shape", TensorProto.INT64, [1], [4])])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    a = np.ones((2, 2), np.float32)
    x = np.float32([0.3, 1.7, 100.1, -3.3, 70000.0])
    k = np.int32([1, 2])
    i = np.int32([-9, 8, 7, 23, -100])
    want_y, want_z = _reference(model, a, x, k, i)
    got_y, got_z = _run(model, a, x, k, i)
    _assert_same(got_y, want_y)
    _assert_same(got_z, want_z)
    assert got_y.dtype == np.float32 and got_z.dtype == np.int8  # held widened


def test_a_narrow_type_quantizes_to_a_run_time_zero_point_of_its_type():
    """The zero point is a graph input of type int2: QuantizeLinear saturates to [-2, 1]."""
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])
    inputs = [_io("x", TensorProto.FLOAT), _io("s", TensorProto.FLOAT, []), _io("z", TensorProto.INT2, [])]
    model = _model([node], inputs, [_io("q", TensorProto.INT2)])
    x = np.float32([-5, -2.6, -1, 0, 0.4, 0.6, 1, 3])
    s, z = np.float32(1.0), np.array(0, ml_dtypes.int2)
    (want,) = _reference(model, x, s, z)
    (got,) = _run(model, x, s, z)
    _assert_same(got, want)
