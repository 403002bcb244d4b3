"""Conv2dWinograd: which convs become the three Winograd stages, and what they compute."""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import relax
from unity.relax import op
from unity.relax.pipeline import get_pipeline
from unity.relax.transform import Conv2dWinograd
from unity.relax.transform.conv2d_winograd import winograd_gain
from unity.tir.function import PrimFunc
from unity.topi.nn.winograd import winograd_weight_transform
from unity.topi.testing.conv2d_nchw_python import conv2d_nchw_python

RNG = np.random.default_rng(11)

SMALL = {"min_channels": 16, "transform_macs": 0.0}
"""Lets convs of 16 channels (two blocks of 8) through, transforms free: the rewrite's
mechanics at small sizes."""


def _blocked_convs(convs: list[dict], c: int = 16, size: int = 16, b: int = 8) -> unity.IRModule:
    """x (NCHW{b}c) -> (conv(**kwargs) -> relu)*, each conv 3x3 `c` -> `c` unless told."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, c // b, size, size, b), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = x
            for kwargs in convs:
                kwargs = dict(kwargs)
                k = kwargs.pop("k", 3)
                w = RNG.standard_normal((c, c, k, k)).astype("float32")
                weight = kwargs.pop("weight", relax.Constant(w))
                kwargs.setdefault("padding", k // 2)
                y = bb.emit(op.nn.conv2d(y, weight, data_layout=f"NCHW{b}c", **kwargs))
                y = bb.emit(op.nn.relu(y))
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    return bb.get()


def _callees(mod: unity.IRModule) -> list[str]:
    """What each binding of `main` calls: a PrimFunc's name or an op's."""
    names = []
    for block in mod["main"].body.blocks:
        for binding in block.bindings:
            value = binding.value
            if not isinstance(value, relax.Call):
                continue  # the output alias
            if value.op.name == "relax.call_tir":
                names.append(value.args[0].name_hint)
            else:
                names.append(value.op.name.removeprefix("relax."))
    return names


def test_a_3x3_conv_becomes_data_matmul_output() -> None:
    after = Conv2dWinograd(8, **SMALL)(_blocked_convs([{}], size=20))
    assert _callees(after) == ["winograd_data", "winograd_matmul", "winograd_output", "nn.relu"]
    sinfos = [b.var.struct_info.shape for b in after["main"].body.blocks[0].bindings]
    assert [tuple(int(d) for d in s) for s in sinfos[:3]] == [
        (36, 1, 28, 16), (36, 1, 1, 28, 16), (1, 2, 20, 20, 8)  # 5 x 5 tiles of 4 x 4 (rows: 28)
    ]  # fmt: skip
    names = ("winograd_data", "winograd_matmul", "winograd_output")
    data, matmul, output = (after[n] for n in names)
    assert data.attrs["op_pattern"] == 8 and output.attrs["op_pattern"] == 4
    assert "op_pattern" not in matmul.attrs  # read from its blocks later
    u = after["main"].body.blocks[0].bindings[1].value.args[1].fields[1]
    assert u.data.shape == (36, 1, 1, 16, 16)


def _conv16(c: int, o: int, size: int) -> unity.IRModule:
    """One 3x3 conv of `c` -> `o` channels over a `size` x `size` image in "NCHW16c"."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, c // 16, size, size, 16), "float32"))
    w = relax.Constant(RNG.standard_normal((o, c, 3, 3)).astype("float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(op.nn.conv2d(x, w, padding=1, data_layout="NCHW16c"))
        bb.emit_func_output(out)
    return bb.get()


def _points(mod: unity.IRModule) -> int | None:
    """The Winograd points of the first conv in `mod` (36: F(4x4), 16: F(2x2)), None if direct."""
    first = mod["main"].body.blocks[0].bindings[0]
    if _callees(mod)[0] != "winograd_data":
        return None
    return int(first.var.struct_info.shape[0])


def test_the_tile_is_the_largest_that_gains_and_small_images_stay_direct() -> None:
    """`winograd_gain`: F(4x4) down to 16 x 16 outputs; at 14 x 14 its 16 tiles compute
    31% past the image and its weight (36 points) costs more than it saves: F(2x2), 49
    tiles; at 8 x 8 and below neither pays for its weight."""
    winograd = Conv2dWinograd(8, **SMALL)
    sizes = (20, 16, 14, 12, 8, 7, 4)
    points = {size: _points(winograd(_blocked_convs([{}], size=size))) for size in sizes}
    assert points == {20: 36, 16: 36, 14: 16, 12: 16, 8: None, 7: None, 4: None}
    free = Conv2dWinograd(8, flops_per_byte=0.0, **SMALL)  # weight bytes free: F(4x4) at 14
    assert _points(free(_blocked_convs([{}], size=14))) == 36


def test_a_symbolic_size_is_evaluated_at_a_typical_image_size() -> None:
    """A conv over a symbolic height and width takes the tile it would take at
    `typical_size` (224 by default: F(4x4)); evaluated at 12, F(2x2); at 7, direct."""
    from unity.relax.struct_info import sym

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 2, sym("h"), sym("w"), 8), "float32"))
    w = relax.Constant(RNG.standard_normal((16, 16, 3, 3)).astype("float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(op.nn.conv2d(x, w, padding=1, data_layout="NCHW8c"))
        bb.emit_func_output(out)
    mod = bb.get()
    points = {
        size: _points(Conv2dWinograd(8, typical_size=size, **SMALL)(mod)) for size in (224, 12, 7)
    }
    assert points == {224: 36, 12: 16, 7: None}


def test_winograd_gain_counts_the_multiplies_saved_less_the_weight_bytes() -> None:
    # 14 x 14, F(2x2): 196 * 9 multiply-adds direct, 49 tiles * 16 points, 7 more points
    assert winograd_gain(14, 14, 3, 2, 25.0) == 196 * 9 - 49 * 16 - 2 * 7 * 25.0
    # two images share the weight: twice the saving, the same price
    assert winograd_gain(7, 7, 3, 2, 25.0, n=2) == 2 * (49 * 9 - 16 * 16) - 2 * 7 * 25.0 > 0
    assert winograd_gain(7, 7, 3, 2, 25.0) < 0


@pytest.mark.parametrize(
    "conv",
    [{"strides": 2}, {"k": 1}, {"k": 7}, {"dilation": 2, "padding": 2}, {"out_dtype": "float64"}],
)
def test_other_convs_stay(conv: dict) -> None:
    before = _blocked_convs([conv])
    assert Conv2dWinograd(8, **SMALL)(before) is before


def test_convs_of_fewer_than_64_channels_in_or_out_stay_direct() -> None:
    """Their products are too small for the transforms around them (SqueezeNet's 32 ->
    128 and DenseNet's 128 -> 32 ran faster direct in the model)."""
    for c, o, want in [(64, 64, 36), (32, 128, None), (128, 32, None), (48, 64, None)]:
        assert _points(Conv2dWinograd(16)(_conv16(c, o, 28))) == want, (c, o)


def test_a_weight_that_is_not_constant_stays() -> None:
    w = relax.Var("w", relax.TensorStructInfo((16, 16, 3, 3), "float32"))
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 2, 16, 16, 8), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            out = bb.emit_output(op.nn.conv2d(x, w, padding=1, data_layout="NCHW8c"))
        bb.emit_func_output(out)
    before = bb.get()
    assert Conv2dWinograd(8, **SMALL)(before) is before


def test_a_weight_too_large_to_transform_takes_smaller_tiles_or_stays() -> None:
    before = _blocked_convs([{}], size=20)  # transformed: 36 or 16 points x 16 x 16 x 4 bytes
    points = {
        limit: _points(Conv2dWinograd(8, max_weight_bytes=limit << 10, **SMALL)(before))
        for limit in (40, 30)
    }
    assert points == {40: 36, 30: 16}
    assert Conv2dWinograd(8, max_weight_bytes=10 << 10, **SMALL)(before) is before


def test_a_5x5_conv_takes_2x2_tiles_of_6x6_points() -> None:
    after = Conv2dWinograd(8, **SMALL)(_blocked_convs([{"k": 5}]))  # 8 x 8 tiles of 2 x 2
    assert _callees(after)[:3] == ["winograd_data", "winograd_matmul", "winograd_output"]
    shape = after["main"].body.blocks[0].bindings[0].var.struct_info.shape
    assert tuple(int(d) for d in shape) == (36, 1, 64, 16)


def test_identical_convs_share_their_prim_funcs() -> None:
    after = Conv2dWinograd(8, **SMALL)(_blocked_convs([{}, {}]))
    assert _callees(after) == ["winograd_data", "winograd_matmul", "winograd_output", "nn.relu"] * 2
    assert sum(isinstance(f, PrimFunc) for f in after.functions.values()) == 3


def test_weights_transform_in_panels_of_two_vectors() -> None:
    after = Conv2dWinograd(8, **SMALL)(_blocked_convs([{}], c=32, size=20))
    u = after["main"].body.blocks[0].bindings[1].value.args[1].fields[1]
    assert u.data.shape == (36, 1, 2, 32, 16)


@pytest.mark.parametrize(("k", "n"), [(3, 1), (5, 1), (3, 2)])
def test_compiled_model_matches_numpy(k: int, n: int) -> None:
    """An NCHW conv chain through the default pipeline: blocked, then Winograd (128
    channels at 20 x 20: F(4x4) for 3 x 3; with 64 the transforms would cost more)."""
    c = 128
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((n, c, 20, 20), "float32"))
    ws = [RNG.standard_normal((c, c, k, k)).astype("float32") / (k * c**0.5) for _ in range(2)]
    bias = RNG.standard_normal((1, c, 1, 1)).astype("float32")
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(op.nn.conv2d(x, relax.Constant(ws[0]), padding=k // 2))
            y = bb.emit(op.nn.relu(op.add(y, relax.Constant(bias))))
            y = bb.emit(op.nn.conv2d(y, relax.Constant(ws[1]), padding=k // 2))
            out = bb.emit_output(op.add(y, x))
        bb.emit_func_output(out)
    mod = bb.get()
    lowered = get_pipeline("default", 2, "llvm")(mod)
    assert any(gv.name_hint.startswith("fused_winograd_output") for gv in lowered.functions)
    data = RNG.standard_normal((n, c, 20, 20)).astype("float32")
    got = relax.VirtualMachine(unity.compile(mod, target="llvm"), unity.cpu())["main"](data).numpy()

    def conv(a: np.ndarray, w: np.ndarray) -> np.ndarray:
        pad = k // 2
        return conv2d_nchw_python(np.pad(a, ((0, 0), (0, 0), (pad, pad), (pad, pad))), w, 1, 0)

    ref = conv(np.maximum(conv(data, ws[0]) + bias, 0), ws[1]) + data
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_a_symbolic_batch_keeps_whole_register_tiles_per_image() -> None:
    """Over a symbolic batch each image's tiles take `matmul_rows` rows (49 at 14 x 14):
    the matmul's ``n * 49`` rows are whole 7-row register tiles (the rows were a multiple
    of 4 of all the images' tiles, the last 8-row tile guarded; GoogLeNet compiled for
    224 x 224 over a symbolic batch: its 14 x 14 and 28 x 28 matmuls 0.015-0.024 ms faster
    each).  The compiled conv matches the reference at batches 1 to 3."""
    from unity.relax.struct_info import sym

    c, n = 256, sym("n")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((n, c // 16, 14, 14, 16), "float32"))
    weight = RNG.standard_normal((c, c, 3, 3)).astype("float32") / 48
    with bb.function("main", [x]):
        with bb.dataflow():
            conv = op.nn.conv2d(x, relax.Constant(weight), padding=1, data_layout="NCHW16c")
            out = bb.emit_output(conv)
        bb.emit_func_output(out)
    mod = bb.get()
    after = Conv2dWinograd(16)(mod)
    assert _points(after) == 16
    assert str(after["main"].body.blocks[0].bindings[0].var.struct_info.shape[2]) == "49*n"
    lowered = get_pipeline("default", 2, "llvm")(mod)
    matmul = next(f for gv, f in lowered.functions.items() if gv.name_hint == "winograd_matmul")
    assert "T.unroll(T.int64(7))" in matmul.script()
    vm = relax.VirtualMachine(unity.compile(mod, target="llvm"), unity.cpu())
    for batch in (1, 2, 3):
        data = RNG.standard_normal((batch, c, 14, 14)).astype("float32")
        blocked = data.reshape(batch, c // 16, 16, 14, 14).transpose(0, 1, 3, 4, 2)
        got = vm["main"](np.ascontiguousarray(blocked)).numpy()
        got = got.transpose(0, 1, 4, 2, 3).reshape(batch, c, 14, 14)
        want = conv2d_nchw_python(np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1))), weight, 1, 0)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("k", [3, 5])
def test_a_symbolic_image_size_takes_winograd_with_symbolic_tiles(k: int) -> None:
    """Height and width known only at run time: the tiles are computed from them (the
    image taken to make enough of them), and the model matches numpy at several sizes,
    sizes that leave partial tiles included."""
    from unity.relax.struct_info import sym

    c, h, w = 64, sym("h"), sym("w")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, c, h, w), "float32"))
    weight = RNG.standard_normal((c, c, k, k)).astype("float32") / (4 * k)
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(op.nn.conv2d(x, relax.Constant(weight), padding=k // 2))
            out = bb.emit_output(op.nn.relu(y))
        bb.emit_func_output(out)
    mod = bb.get()
    lowered = get_pipeline("default", 2, "llvm")(mod)
    assert any(gv.name_hint.startswith("winograd_data") for gv in lowered.functions)
    vm = relax.VirtualMachine(unity.compile(mod, target="llvm"), unity.cpu())
    for size in ((7, 9), (16, 16), (3, 22)):
        data = RNG.standard_normal((1, c, *size)).astype("float32")
        pad = k // 2
        want = np.maximum(conv2d_nchw_python(np.pad(data, ((0, 0), (0, 0), (pad, pad), (pad, pad))), weight, 1, 0), 0)
        np.testing.assert_allclose(vm["main"](data).numpy(), want, rtol=1e-4, atol=1e-4)


def test_weight_transform_matches_the_pass_constant() -> None:
    w = RNG.standard_normal((16, 16, 3, 3)).astype("float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 2, 20, 20, 8), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            conv = op.nn.conv2d(x, relax.Constant(w), padding=1, data_layout="NCHW8c")
            out = bb.emit_output(conv)
        bb.emit_func_output(out)
    after = Conv2dWinograd(8, **SMALL)(bb.get())
    u = after["main"].body.blocks[0].bindings[1].value.args[1].fields[1]
    np.testing.assert_array_equal(u.data, winograd_weight_transform(w, 4, 16))


def _grouped_conv(groups: int, per_group: int) -> unity.IRModule:
    """A 3x3 conv over 32 channels (4 blocks of 8) in `groups` of `per_group` input channels."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 4, 20, 20, 8), "float32"))
    w = RNG.standard_normal((32, per_group, 3, 3)).astype("float32")
    with bb.function("main", [x]):
        with bb.dataflow():
            conv = op.nn.conv2d(x, relax.Constant(w), padding=1, groups=groups, data_layout="NCHW8c")
            out = bb.emit_output(conv)
        bb.emit_func_output(out)
    return bb.get()


def test_grouped_convs_take_a_matmul_per_group() -> None:
    """Two groups of 16 channels (AlexNet's convs are in two groups)."""
    after = Conv2dWinograd(8, **SMALL)(_grouped_conv(2, 16))
    bindings = after["main"].body.blocks[0].bindings
    assert tuple(int(d) for d in bindings[0].var.struct_info.shape) == (36, 2, 28, 16)
    assert bindings[1].value.args[1].fields[1].data.shape == (36, 2, 1, 16, 16)


def test_small_groups_stay_direct() -> None:
    """RegNet's 3x3 convs in groups of 8 channels: each point's product is 8 x 8, cheaper
    than the transforms around it, so the conv stays direct; so do groups of 16 by
    default (fewer than `min_channels`)."""
    before = _grouped_conv(4, 8)
    assert Conv2dWinograd(8, **SMALL)(before) is before
    before = _grouped_conv(2, 16)
    assert Conv2dWinograd(8)(before) is before


def test_the_pass_can_be_disabled_by_name() -> None:
    """``PassContext(disabled_pass=["Conv2dWinograd"])`` keeps the direct conv."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 64, 28, 28), "float32"))
    w = RNG.standard_normal((64, 64, 3, 3)).astype("float32")
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(op.nn.conv2d(x, relax.Constant(w), padding=1))
        bb.emit_func_output(out)
    mod = bb.get()
    names = [gv.name_hint for gv in get_pipeline("default", 2, "llvm")(mod).functions]
    assert [n for n in names if "winograd" in n]  # taken when not disabled
    with unity.transform.PassContext(opt_level=3, disabled_pass=["Conv2dWinograd"]):
        lowered = get_pipeline("default", 2, "llvm")(mod)
    names = [gv.name_hint for gv in lowered.functions]
    assert not [n for n in names if "winograd" in n] and [n for n in names if "conv2d" in n]


@pytest.mark.parametrize(("c", "o", "size", "want", "free"), [
    (64, 256, 13, None, 16), (96, 208, 14, None, 16), (112, 224, 14, 16, 16),
    (128, 256, 14, 16, 16), (64, 64, 56, 36, 36), (64, 64, 20, None, 36),
])  # fmt: skip
def test_the_transforms_price_leaves_few_channels_at_small_sizes_direct(c, o, size, want, free):
    """Each transformed value costs `transform_macs` (56) multiply-adds, the data
    transform's shared by the output channels, the output's by the input channels:
    SqueezeNet's 64 -> 256 at 13 x 13 and GoogLeNet's 96 -> 208 at 14 x 14 ran faster
    direct (0.133 / 0.174 and 0.211 / 0.235 ms), from 112 -> 224 Winograd F(2x2) won;
    ResNet's 64 -> 64 at 56 x 56 keeps F(4x4).  `free`: the tile with the transforms free."""
    mod = _conv16(c, o, size)
    assert _points(Conv2dWinograd(16)(mod)) == want
    assert _points(Conv2dWinograd(16, transform_macs=0.0)(mod)) == free


@pytest.mark.parametrize(("size", "m", "rows"), [(14, 2, 49), (28, 4, 49), (56, 4, 200), (20, 4, 32)])
def test_the_matmul_rows_are_whole_register_tiles(size: int, m: int, rows: int) -> None:
    """With 16 lanes the matmul's rows are the tiles where 7-row register tiles take them
    (49), else a multiple of 8 (196 -> 200, 25 -> 32): no tile is guarded (GoogLeNet's 64
    -> 192 at 56 x 56, batch 1: its matmul 0.90 -> 0.60 ms)."""
    after = Conv2dWinograd(16)(_conv16(256, 256, size))
    shape = after["main"].body.blocks[0].bindings[0].var.struct_info.shape
    assert _points(after) == (m + 2) ** 2
    assert int(shape[2]) == rows
