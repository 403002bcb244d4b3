"""DecomposeConvTranspose: a transposed conv becomes one conv over its output phases."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import unity
from unity import relax
from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, Constant, TensorStructInfo, Var, op
from unity.relax.pipeline import default_pipeline
from unity.relax.transform import DecomposeConvTranspose
from unity.topi.testing import conv2d_transpose_python

from .reference import evaluate

RNG = np.random.default_rng(11)


def _module(xshape, w, **attrs):
    x = Var("x", TensorStructInfo(xshape, "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(op.nn.conv2d_transpose(x, w, **attrs))
        bb.emit_func_output(gv)
    return bb.get()


def _ops(mod) -> set[str]:
    script = mod.script()
    return {name for name in ("conv2d_transpose", "conv2d(", "strided_slice", "take") if f"R.nn.{name}" in script
            or f"R.{name}" in script}  # fmt: skip


GRID = [  # kernel, stride, padding (top, left, bottom, right), output padding, dilation, groups
    (k, s, p, opad, d, g)
    for k, s, p, opad, d, g in itertools.product(
        (1, 2, 3, 4), (1, 2, 3), ((0, 0, 0, 0), (1, 1, 1, 1), (2, 0, 1, 3)), ((0, 0), (1, 0)),
        ((1, 1), (2, 1)), (1, 2),
    )
    if opad[0] < max(s, d[0])  # output padding must be below the stride or the dilation
]  # fmt: skip


@pytest.mark.parametrize(("k", "s", "pads", "opad", "dil", "groups"), GRID)
def test_every_window_matches_the_transposed_conv(k, s, pads, opad, dil, groups):
    w = RNG.standard_normal((4, 3, k, k + 1)).astype("float32")  # C=4 -> O=3 per group
    x = RNG.standard_normal((2, 4, 5, 6)).astype("float32")
    want = conv2d_transpose_python(x, w, (s, s), pads, opad, dil, groups)
    attrs = {"strides": s, "padding": pads, "output_padding": opad, "dilation": dil, "groups": groups}
    before = _module(("n", 4, 5, 6), Constant(w), **attrs)
    after = DecomposeConvTranspose()(before)
    assert "conv2d_transpose" not in after.script()
    assert after["main"].ret_struct_info == before["main"].ret_struct_info
    got = evaluate(after, x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_2x_upsampling_becomes_the_expected_phase_conv():
    """k=2, s=2, no pads: four phase kernels of one tap each, no reversal and no crop."""
    w = Constant(RNG.standard_normal((4, 3, 2, 2)).astype("float32"))
    after = DecomposeConvTranspose()(_module(("n", 4, 5, 6), w, strides=2))
    x = Var("x", TensorStructInfo(("n", 4, 5, 6), "float32"))
    n = x.struct_info.shape[0]
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(op.reshape(w, (1, 4, 3, 1, 2, 1, 2)))
            lv1 = bb.emit(op.permute_dims(lv, [0, 2, 4, 6, 1, 3, 5]))
            lv2 = bb.emit(op.reshape(lv1, (12, 4, 1, 1)))
            lv3 = bb.emit(op.nn.conv2d(x, lv2))
            lv4 = bb.emit(op.reshape(lv3, (n, 3, 2, 2, 5, 6)))
            lv5 = bb.emit(op.permute_dims(lv4, [0, 1, 4, 2, 5, 3]))
            gv = bb.emit_output(op.reshape(lv5, (n, 3, 10, 12)))
        bb.emit_func_output(gv)
    assert_structural_equal(after, bb.get())


@pytest.mark.parametrize(("k", "pads", "opad"), [(4, 1, 0), (3, 1, 1), (2, 0, 0), (5, 2, 0)])
def test_symbolic_sizes_compile_and_run_at_any_size(k, pads, opad):
    w = RNG.standard_normal((4, 3, k, k)).astype("float32")
    attrs = {"strides": 2, "padding": pads, "output_padding": opad}
    before = _module(("n", 4, "h", "w"), Constant(w), **attrs)
    after = DecomposeConvTranspose()(before)
    assert "conv2d_transpose" not in after.script()
    assert after["main"].ret_struct_info == before["main"].ret_struct_info  # e.g. (n, 3, 2*h, 2*w)
    vm = relax.VirtualMachine(unity.compile(after), unity.cpu())
    for shape in ((1, 4, 3, 5), (2, 4, 7, 4)):
        x = RNG.standard_normal(shape).astype("float32")
        want = conv2d_transpose_python(x, w, (2, 2), (pads,) * 4, (opad, opad))
        np.testing.assert_allclose(vm["main"](x).numpy(), want, rtol=1e-4, atol=1e-4)


def test_a_weight_computed_at_run_time_is_transformed_by_relax_ops():
    x = Var("x", TensorStructInfo((1, 4, 5, 5), "float32"))
    wv = Var("w", TensorStructInfo((4, 2, 3, 3), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x, wv]):
        with bb.dataflow():
            gv = bb.emit_output(op.nn.conv2d_transpose(x, wv, strides=2, padding=1))
        bb.emit_func_output(gv)
    after = DecomposeConvTranspose()(bb.get())
    assert _ops(after) == {"conv2d(", "strided_slice", "take"}
    xs = RNG.standard_normal((1, 4, 5, 5)).astype("float32")
    ws = RNG.standard_normal((4, 2, 3, 3)).astype("float32")
    want = conv2d_transpose_python(xs, ws, (2, 2), (1, 1, 1, 1))
    np.testing.assert_allclose(evaluate(after, xs, ws), want, rtol=1e-4, atol=1e-4)


def test_what_the_pass_cannot_prove_or_lay_out_stays_direct():
    w = Constant(RNG.standard_normal((4, 3, 5, 5)).astype("float32"))
    # the crop of 4 + 4 could exceed a symbolic size's output (2h - 5 < 0 at h = 1)
    unproven = _module(("n", 4, "h", "w"), w, strides=2, padding=4)
    assert DecomposeConvTranspose()(unproven) is unproven
    nhwc = _module((1, 5, 5, 4), Constant(np.zeros((5, 5, 4, 3), "float32")), data_layout="NHWC",
                   kernel_layout="HWIO")  # fmt: skip
    assert DecomposeConvTranspose()(nhwc) is nhwc


def test_the_default_pipeline_runs_it_and_disabled_pass_keeps_the_direct_form():
    names = [type(p).__name__ for p in default_pipeline(2).passes]
    assert names.index("DecomposeConvTranspose") < names.index("FoldConstant")
    w = RNG.standard_normal((4, 3, 4, 4)).astype("float32")
    mod = _module((1, 4, 6, 6), Constant(w), strides=2, padding=1)
    x = RNG.standard_normal((1, 4, 6, 6)).astype("float32")
    want = conv2d_transpose_python(x, w, (2, 2), (1, 1, 1, 1))
    for disabled, kernel in (([], '"conv2d_prepacked"'), (["DecomposeConvTranspose"], '"conv2d_transpose"')):
        with unity.transform.PassContext(opt_level=2, disabled_pass=disabled):
            ex = unity.compile(mod)
        assert f"kernel {kernel}" in ex.as_text()
        got = relax.VirtualMachine(ex, unity.cpu())["main"](x).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_stride_one_transposed_conv_is_a_conv_with_less_padding():
    """k=3, s=1, p=1 (a decoder's last layer): the reversed kernel with padding 1, no crop."""
    w = RNG.standard_normal((8, 4, 3, 3)).astype("float32")
    after = DecomposeConvTranspose()(_module(("n", 8, "h", "w"), Constant(w), strides=1, padding=1))
    convs = [line for line in after.script().splitlines() if "R.nn.conv2d(" in line]
    assert len(convs) == 1 and "padding=(1, 1, 1, 1)" in convs[0]
    assert "R.strided_slice" not in after.script() and "gv: R.Tensor((n, 4, h, w)" in after.script()
    x = RNG.standard_normal((2, 8, 5, 6)).astype("float32")
    want = conv2d_transpose_python(x, w, padding=(1, 1, 1, 1))
    vm = relax.VirtualMachine(unity.compile(after), unity.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), want, rtol=1e-4, atol=1e-4)
