"""AlterConvLayout: a function's convs move to NCHW16c data only when all of them fit."""

from __future__ import annotations

import numpy as np

import unity
from unity import relax
from unity.ir.structural import assert_structural_equal
from unity.relax import op
from unity.relax.expr_functor import ExprVisitor
from unity.relax.transform import AlterConvLayout, ConvertLayout

RNG = np.random.default_rng(7)


def _module(convs: list[tuple[int, int, int]], c_in: int = 16, size: int = 8) -> relax.Function:
    """x -> (conv(o, groups) -> relu)* -> max_pool: `convs` lists (out channels, groups, k)."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, c_in, size, size), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y, c = x, c_in
            for o, groups, k in convs:
                w = RNG.standard_normal((o, c // groups, k, k)).astype("float32")
                w *= (c // groups * k * k) ** -0.5  # values keep their size through the chain
                y = bb.emit(op.nn.conv2d(y, relax.Constant(w), padding=k // 2, groups=groups))
                y, c = bb.emit(op.nn.relu(y)), o
            out = bb.emit_output(op.nn.max_pool2d(y, pool_size=2, strides=2))
        bb.emit_func_output(out)
    return bb.get()


def _layouts(mod) -> list[str]:
    """The data layout of each conv2d and pool in `main`, in order ("NCHW->NCHW16c" for a conv
    writing another layout than it reads)."""
    found: list[str] = []

    class _Visit(ExprVisitor):
        def visit_call_(self, expr):
            attrs = expr.attrs
            if expr.op is op.nn.conv2d:
                out = attrs.out_layout
                same = out in (None, attrs.data_layout)
                found.append(attrs.data_layout if same else f"{attrs.data_layout}->{out}")
            elif expr.op is op.nn.max_pool2d:
                found.append(attrs.layout)
            super().visit_call_(expr)

    _Visit().visit_expr(mod["main"])
    return found


def _copies(mod) -> list[str]:
    """The names bound to a reshape or permute_dims in `main` (the layout copies), in order."""
    bindings = [b for block in mod["main"].body.blocks for b in block.bindings]
    copies = (op.reshape, op.permute_dims)
    return [b.var.name_hint for b in bindings if getattr(b.value, "op", None) in copies]


def _run(mod, x: np.ndarray) -> np.ndarray:
    with unity.transform.PassContext(opt_level=1):  # no second layout change
        ex = unity.compile(mod, target="llvm")
    return relax.VirtualMachine(ex, unity.cpu())["main"](x).numpy()


def test_a_chain_of_fitting_convs_runs_blocked() -> None:
    before = _module([(32, 1, 3), (32, 1, 1)])
    after = AlterConvLayout(16)(before)
    assert_structural_equal(after, ConvertLayout({"relax.nn.conv2d": ["NCHW16c", "OIHW"]})(before))
    assert _layouts(after) == ["NCHW16c", "NCHW16c", "NCHW16c"]
    x = RNG.standard_normal((1, 16, 8, 8)).astype("float32")
    np.testing.assert_allclose(_run(after, x), _run(before, x), rtol=1e-4, atol=1e-4)


def test_an_image_conv_reads_nchw_and_writes_blocked_for_the_rest() -> None:
    before = _module([(16, 1, 3), (32, 1, 3)], c_in=3)
    after = AlterConvLayout(16)(before)
    assert _layouts(after) == ["NCHW->NCHW16c", "NCHW16c", "NCHW16c"]
    assert _copies(after) == ["gv_merge", "gv"]  # none in: the image conv writes blocked
    x = RNG.standard_normal((1, 3, 8, 8)).astype("float32")
    np.testing.assert_allclose(_run(after, x), _run(before, x), rtol=1e-4, atol=1e-4)


def test_a_conv_reading_24_channels_writes_blocked_and_is_no_misfit() -> None:
    before = _module([(32, 1, 3), (32, 1, 3)], c_in=24)
    after = AlterConvLayout(16)(before)
    assert _layouts(after) == ["NCHW->NCHW16c", "NCHW16c", "NCHW16c"]
    assert _copies(after) == ["gv_merge", "gv"]
    x = RNG.standard_normal((1, 24, 8, 8)).astype("float32")
    np.testing.assert_allclose(_run(after, x), _run(before, x), rtol=1e-4, atol=1e-4)


def test_an_image_conv_that_cannot_write_blocked_stays_nchw_up_to_max_image_channels() -> None:
    # 3 -> 8 channels: not whole output blocks (nor worth padding); the 8 -> 32 conv after
    # it writes blocked
    before = _module([(8, 1, 3), (32, 1, 3), (32, 1, 3)], c_in=3)
    after = AlterConvLayout(16)(before)
    assert _layouts(after) == ["NCHW", "NCHW->NCHW16c", "NCHW16c", "NCHW16c"]
    assert AlterConvLayout(16, max_image_channels=2)(before) is before  # 1 misfit in 3
    x = RNG.standard_normal((1, 3, 8, 8)).astype("float32")
    np.testing.assert_allclose(_run(after, x), _run(before, x), rtol=1e-4, atol=1e-4)


def test_many_convs_that_do_not_fit_keep_the_function_nchw() -> None:
    # groups of 8 channels do not align with 16-lane blocks (ShuffleNet's groups of 34)
    before = _module([(32, 1, 3), (32, 4, 1)])
    assert AlterConvLayout(16)(before) is before
    assert AlterConvLayout(8)(before) is not before  # the same groups fit 8-lane blocks


def test_a_few_convs_that_do_not_fit_stay_nchw_among_blocked_ones() -> None:
    # an 8-channel result among 16 convs: the conv writing it stays NCHW (the one misfit),
    # the conv reading it reads NCHW and writes blocked
    before = _module([(16, 1, 3)] * 7 + [(8, 1, 1), (16, 1, 3)] + [(16, 1, 3)] * 7)
    after = AlterConvLayout(16)(before)
    expected = ["NCHW16c"] * 7 + ["NCHW", "NCHW->NCHW16c"] + ["NCHW16c"] * 8  # + pool
    assert _layouts(after) == expected
    assert AlterConvLayout(16, max_misfit_share=0.1)(before) is not before  # 1 of 16
    assert AlterConvLayout(16, max_misfit_share=0.05)(before) is before
    x = RNG.standard_normal((1, 16, 8, 8)).astype("float32")
    np.testing.assert_allclose(_run(after, x), _run(before, x), rtol=1e-4, atol=1e-4)


def test_nothing_to_do_without_convs() -> None:
    before = _module([])
    assert AlterConvLayout(16)(before) is before


def _squeeze_excite(channels: int = 32, squeezed: int = 4) -> relax.Function:
    """conv -> global mean -> conv to `squeezed` -> relu -> conv back -> sigmoid -> scale:
    EfficientNet's squeeze-and-excitation block, twice."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 16, 8, 8), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y, c = x, 16
            for _ in range(2):
                w = RNG.standard_normal((channels, c, 3, 3)).astype("float32") * 0.1
                y, c = bb.emit(op.nn.conv2d(y, relax.Constant(w), padding=1)), channels
                s = bb.emit(op.mean(y, axis=[2, 3], keepdims=True))
                w1 = RNG.standard_normal((squeezed, c, 1, 1)).astype("float32") * 0.3
                w2 = RNG.standard_normal((c, squeezed, 1, 1)).astype("float32") * 0.3
                s = bb.emit(op.nn.relu(op.nn.conv2d(s, relax.Constant(w1))))
                s = bb.emit(op.sigmoid(op.nn.conv2d(s, relax.Constant(w2))))
                y = bb.emit(op.multiply(y, s))
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    return bb.get()


def test_squeeze_and_excitation_convs_over_one_pixel_are_no_misfits() -> None:
    """Their 4 channels fit no block, but their layout copies are a few values: the
    function still goes blocked (EfficientNet-B0 stayed NCHW, 1.66x onnxruntime)."""
    before = _squeeze_excite()
    after = AlterConvLayout(8)(before)
    assert _layouts(after) == ["NCHW8c", "NCHW", "NCHW->NCHW8c"] * 2  # the squeeze stays NCHW
    x = RNG.standard_normal((1, 16, 8, 8)).astype("float32")
    np.testing.assert_allclose(_run(after, x), _run(before, x), rtol=1e-4, atol=1e-5)


def _inverted_residual(expanded: int = 72, out: int = 24, squeezed: int = 40) -> relax.Function:
    """MobileNet's block over channel counts no multiple of 16: 1x1 16 -> `expanded`, relu,
    depthwise 3x3, relu, 1x1 -> `out` + bias, hardswish, global mean, 1x1 -> `squeezed`."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 16, 9, 9), "float32"))

    def const(*shape: int, scale: float = 0.3) -> relax.Constant:
        return relax.Constant((RNG.standard_normal(shape) * scale).astype("float32"))

    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(op.nn.relu(op.nn.conv2d(x, const(expanded, 16, 1, 1))))
            y = bb.emit(op.nn.conv2d(y, const(expanded, 1, 3, 3), padding=1, groups=expanded))
            y = bb.emit(op.nn.relu(y))
            y = bb.emit(op.nn.conv2d(y, const(out, expanded, 1, 1, scale=0.1)))
            y = bb.emit(op.add(y, const(out, 1, 1)))
            gate = bb.emit(op.add(op.divide(y, relax.const(6.0)), relax.const(0.5)))
            gate = bb.emit(op.clip(gate, 0.0, 1.0))
            y = bb.emit(op.multiply(y, gate))
            s = bb.emit(op.mean(y, axis=[2, 3], keepdims=True))
            gv = bb.emit_output(op.nn.conv2d(s, const(squeezed, out, 1, 1)))
        bb.emit_func_output(gv)
    return bb.get()


def _strided_slices(mod) -> int:
    found = []

    class _Visit(ExprVisitor):
        def visit_call_(self, expr):
            found.append(expr.op is op.strided_slice)
            super().visit_call_(expr)

    _Visit().visit_expr(mod["main"])
    return sum(found)


def test_channels_no_multiple_of_the_block_run_blocked_with_the_last_block_padded() -> None:
    """72, 24 and 40 channels: held in 5, 2 and 3 blocks (the kernels zero-padded), with
    no layout change between the convs; only the result leaves its padded block (MobileNet
    v3-small had stayed NCHW: 1.41x onnxruntime, 1.08x blocked)."""
    before = _inverted_residual()
    after = AlterConvLayout(16)(before)
    assert _layouts(after) == ["NCHW16c"] * 4
    assert _strided_slices(after) == 1  # the 40 channels of the result
    x = RNG.standard_normal((1, 16, 9, 9)).astype("float32")
    np.testing.assert_allclose(_run(after, x), _run(before, x), rtol=1e-4, atol=1e-5)


def test_padded_lanes_never_meet_an_op_that_could_make_them_infinite() -> None:
    """1 / (y * y + ones per channel): the padded lanes hold 0 (the per-channel operand is
    padded with zeros), 1 / 0 would be infinite, and the next conv would multiply it by its
    zero weights (NaN in every channel); the divide takes its operand unblocked (sliced to
    24 channels) instead."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 16, 6, 6), "float32"))
    w1 = relax.Constant((RNG.standard_normal((24, 16, 3, 3)) * 0.2).astype("float32"))
    w2 = relax.Constant((RNG.standard_normal((32, 24, 1, 1)) * 0.2).astype("float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(op.nn.conv2d(x, w1, padding=1))
            ones = relax.Constant(np.ones((24, 1, 1), "float32"))
            y = bb.emit(op.add(op.multiply(y, y), ones))
            y = bb.emit(op.divide(relax.const(1.0), y))
            gv = bb.emit_output(op.nn.conv2d(y, w2))
        bb.emit_func_output(gv)
    before = bb.get()
    after = AlterConvLayout(16)(before)
    assert _layouts(after) == ["NCHW16c", "NCHW->NCHW16c"]
    assert _strided_slices(after) == 1
    x_value = RNG.standard_normal((1, 16, 6, 6)).astype("float32")
    got = _run(after, x_value)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, _run(before, x_value), rtol=1e-4, atol=1e-5)
