"""ConvertLayout: conv2d and the layout-sensitive ops around it move to NHWC with few permutes."""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import relax
from unity.ir.module import IRModule
from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, Call, Constant, TensorStructInfo, TupleGetItem, Var, op
from unity.relax.transform import CanonicalizeBindings, ConvertLayout, FoldConstant
from unity.script import ir as I
from unity.script import relax as R
from unity.topi.testing.conv2d_python import conv2d_python
from unity.topi.testing.pool2d_python import adaptive_avg_pool2d_python, pool2d_python

from . import reference
from .reference import evaluate

RNG = np.random.default_rng(23)
NHWC = {"relax.nn.conv2d": ["NHWC", "OHWI"]}


def _to(layout: str, src: str, a: np.ndarray) -> np.ndarray:
    return a.transpose([src.index(c) for c in layout])


def _conv2d(call: Call, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    a = call.attrs
    x, w = _to("NCHW", a.data_layout, x), _to("OIHW", a.kernel_layout, w)
    y = conv2d_python(x, w, a.strides, a.padding, a.dilation, a.groups)
    return _to(a.data_layout, "NCHW", y).astype(x.dtype)


def _pool(kind: str):
    def run(call: Call, x: np.ndarray) -> np.ndarray:
        a = call.attrs
        x = _to("NCHW", a.layout, x)
        if kind == "adaptive":
            y = adaptive_avg_pool2d_python(x, a.output_size)
        else:
            y = pool2d_python(x, a.pool_size, a.strides, kind, a.padding, a.dilation,
                              a.ceil_mode, a.count_include_pad)  # fmt: skip
        return _to(a.layout, "NCHW", y).astype(x.dtype)

    return run


def _layer_norm(call: Call, x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    axes = sorted(a % x.ndim for a in call.attrs.axes)
    shape = [d if i in axes else 1 for i, d in enumerate(x.shape)]
    mean, var = x.mean(axis=tuple(axes), keepdims=True), x.var(axis=tuple(axes), keepdims=True)
    y = (x - mean) / np.sqrt(var + call.attrs.epsilon) * g.reshape(shape) + b.reshape(shape)
    return y.astype(x.dtype)


def _pad(call: Call, x: np.ndarray) -> np.ndarray:
    w = call.attrs.pad_width
    return np.pad(x, [(w[2 * i], w[2 * i + 1]) for i in range(x.ndim)], constant_values=call.attrs.pad_value)


@pytest.fixture(autouse=True)
def _layout_aware_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference evaluator runs conv2d and pooling in any layout."""
    rules = {op.nn.conv2d: _conv2d, op.nn.max_pool2d: _pool("max"), op.nn.avg_pool2d: _pool("avg"),
             op.nn.adaptive_avg_pool2d: _pool("adaptive"), op.nn.layer_norm: _layer_norm,
             op.nn.pad: _pad}  # fmt: skip
    for key, rule in rules.items():
        monkeypatch.setitem(reference.EXTRA, key, rule)


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype("float32")


def _permute_count(mod: IRModule) -> int:
    return sum(
        1
        for block in mod["main"].body.blocks
        for b in block.bindings
        if isinstance(b.value, Call) and b.value.op is op.permute_dims
    )


def test_docstring_example_converts_once_in_and_once_out():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor(("n", 3, 8, 8), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
            with R.dataflow():
                c = R.nn.conv2d(x, w, padding=1)
                r = R.nn.relu(c)
                gv = R.add(r, R.const(1.0, "float32"))
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor(("n", 3, 8, 8), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
            with R.dataflow():
                x_0231 = R.permute_dims(x, axes=[0, 2, 3, 1])
                w_0231 = R.permute_dims(w, axes=[0, 2, 3, 1])
                c = R.nn.conv2d(x_0231, w_0231, padding=1, data_layout="NHWC", kernel_layout="OHWI")
                r = R.nn.relu(c)
                gv_inner = R.add(r, R.const(1.0, "float32"))
                gv = R.permute_dims(gv_inner, axes=[0, 3, 1, 2])
                R.output(gv)
            return gv

    After = ConvertLayout(NHWC)(Before)
    assert_structural_equal(After, Expected)
    x, w = _rand(2, 3, 8, 8), _rand(4, 3, 3, 3)
    np.testing.assert_allclose(evaluate(After, x, w), evaluate(Before, x, w), rtol=1e-5, atol=1e-5)


def test_nothing_to_do_returns_the_module():
    @I.ir_module
    class NoConv:
        @R.function
        def main(x: R.Tensor(("n", 4), "float32")):
            with R.dataflow():
                gv = R.nn.relu(x)
                R.output(gv)
            return gv

    @I.ir_module
    class AlreadyNHWC:
        @R.function
        def main(x: R.Tensor(("n", 8, 8, 3), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
            with R.dataflow():
                gv = R.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="OHWI")
                R.output(gv)
            return gv

    for mod in (NoConv, AlreadyNHWC):
        assert ConvertLayout(NHWC)(mod) is mod


def _conv_chain(n_convs: int, weights: list[np.ndarray]) -> IRModule:
    x = Var("x", TensorStructInfo(("n", 4, 8, 8), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y: object = x
            for i in range(n_convs):
                y = bb.emit(op.nn.relu(op.nn.conv2d(y, Constant(weights[i]), padding=1)))
            gv = bb.emit_output(y)
        bb.emit_func_output(gv)
    return bb.get()


def test_chain_of_three_convs_permutes_once_in_and_once_out():
    weights = [_rand(4, 4, 3, 3) for _ in range(3)]
    before = _conv_chain(3, weights)
    after = ConvertLayout(NHWC)(before)
    assert _permute_count(after) == 2 + 3  # activations in and out, plus 3 constant weights
    folded = CanonicalizeBindings()(FoldConstant()(after))
    assert _permute_count(folded) == 2  # the weight permutes fold into constants
    bound = {b.var: b.value for b in folded["main"].body.blocks[0].bindings}
    convs = [v for v in bound.values() if isinstance(v, Call) and v.op is op.nn.conv2d]
    assert [c.attrs.data_layout for c in convs] == ["NHWC"] * 3
    kernels = [bound.get(c.args[1], c.args[1]) for c in convs]
    for kernel, w in zip(kernels, weights, strict=True):
        assert isinstance(kernel, Constant)
        np.testing.assert_array_equal(kernel.data, w.transpose(0, 2, 3, 1))
    x = _rand(2, 4, 8, 8)
    np.testing.assert_allclose(evaluate(folded, x), evaluate(before, x), rtol=1e-4, atol=1e-4)


def _block(bb: BlockBuilder, x: Var, c: int, params: dict[str, np.ndarray]) -> Var:
    """conv-bn-relu, a residual add with a broadcast bias, max pooling."""
    w = Constant(params["w"])
    conv = bb.emit(op.nn.conv2d(x, w, padding=1))
    bn = bb.emit(op.nn.batch_norm(conv, *(Constant(params[k]) for k in ("g", "b", "m", "v"))))
    relu = bb.emit(op.nn.relu(bb.emit(TupleGetItem(bn, 0))))
    biased = bb.emit(op.add(relu, Constant(params["bias"].reshape(c, 1, 1))))
    res = bb.emit(op.add(biased, conv))  # two converted tensors
    return bb.emit(op.nn.max_pool2d(res, 2))


def _network(params: dict[str, np.ndarray]) -> IRModule:
    x = Var("x", TensorStructInfo(("n", 3, 8, 8), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            pooled = _block(bb, x, 8, params)
            mean = bb.emit(op.mean(pooled, axis=[2, 3]))  # reduction: (n, 8) back in order
            gv = bb.emit_output(op.add(mean, Constant(params["head"])))
        bb.emit_func_output(gv)
    return bb.get()


def _params() -> dict[str, np.ndarray]:
    p = {"w": _rand(8, 3, 3, 3), "bias": _rand(8), "head": _rand(8)}
    p.update(g=_rand(8), b=_rand(8), m=_rand(8), v=RNG.random(8).astype("float32") + 0.5)
    return p


def test_conv_bn_relu_pool_add_network_keeps_results_when_compiled():
    params = _params()
    before = _network(params)
    after = ConvertLayout(NHWC)(before)
    main = after["main"]
    assert _permute_count(after) == 3  # x, the weight, the bias; nothing before the reduction
    assert _permute_count(CanonicalizeBindings()(FoldConstant()(after))) == 1  # x
    ops = {b.value.op for b in main.body.blocks[0].bindings if isinstance(b.value, Call)}
    assert op.expand_dims not in ops  # the (8, 1, 1) bias constant was reshaped in place
    bn = next(b.value for b in main.body.blocks[0].bindings if getattr(b.value, "op", None) is op.nn.batch_norm)
    assert bn.attrs.axis == 3
    assert main.params[0].struct_info.shape[0].is_Symbol  # the batch stays symbolic
    vms = [relax.VirtualMachine(unity.compile(m, target="llvm"), unity.cpu()) for m in (before, after)]
    for n in (1, 3):
        x = _rand(n, 3, 8, 8)
        expected = evaluate(before, x)
        for vm in vms:
            np.testing.assert_allclose(vm["main"](x).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_op_without_rule_gets_its_input_back_in_the_original_layout():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3, 4, 4), "float32"), w: R.Tensor((6, 3, 1, 1), "float32")):
            with R.dataflow():
                c = R.nn.conv2d(x, w)
                p = R.nn.adaptive_avg_pool2d(c, output_size=1)
                gv = R.reshape(p, (2, 6))
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3, 4, 4), "float32"), w: R.Tensor((6, 3, 1, 1), "float32")):
            with R.dataflow():
                x_0231 = R.permute_dims(x, axes=[0, 2, 3, 1])
                w_0231 = R.permute_dims(w, axes=[0, 2, 3, 1])
                c = R.nn.conv2d(x_0231, w_0231, data_layout="NHWC", kernel_layout="OHWI")
                p = R.nn.adaptive_avg_pool2d(c, output_size=1, layout="NHWC")
                p_0123 = R.permute_dims(p, axes=[0, 3, 1, 2])
                gv = R.reshape(p_0123, (2, 6))
                R.output(gv)
            return gv

    After = ConvertLayout(NHWC)(Before)
    assert_structural_equal(After, Expected)
    x, w = _rand(2, 3, 4, 4), _rand(6, 3, 1, 1)
    np.testing.assert_allclose(evaluate(After, x, w), evaluate(Before, x, w), rtol=1e-5, atol=1e-5)


def test_concat_softmax_and_keepdims_reduction_follow_the_layout():
    x = Var("x", TensorStructInfo((1, 2, 5, 5), "float32"))
    w1, w2 = _rand(3, 2, 3, 3), _rand(4, 2, 1, 1)
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(op.nn.conv2d(x, Constant(w1), padding=1))
            b = bb.emit(op.nn.conv2d(x, Constant(w2)))
            cat = bb.emit(op.concat([a, b], axis=1))
            sm = bb.emit(op.nn.softmax(cat, axis=1))
            mx = bb.emit(op.max(sm, axis=[1], keepdims=True))
            gv = bb.emit_output(op.subtract(sm, mx))
        bb.emit_func_output(gv)
    before = bb.get()
    after = ConvertLayout(NHWC)(before)
    values = {b.value.op: b.value for b in after["main"].body.blocks[0].bindings if isinstance(b.value, Call)}
    assert values[op.concat].attrs.axis == 3 and values[op.nn.softmax].attrs.axis == 3
    assert values[op.max].attrs.axis == (3,)
    assert _permute_count(after) == 4  # x once (shared by both convs), 2 weights, 1 out
    xv = _rand(1, 2, 5, 5)
    np.testing.assert_allclose(evaluate(after, xv), evaluate(before, xv), rtol=1e-5, atol=1e-5)


def test_pooling_anchor_and_layer_norm_follow():
    x = Var("x", TensorStructInfo(("n", 4, 6, 6), "float32"))
    g, b = _rand(4), _rand(4)
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            p = bb.emit(op.nn.avg_pool2d(x, 2))
            ln = bb.emit(op.nn.layer_norm(p, Constant(g), Constant(b), axes=[1]))
            gv = bb.emit_output(op.sum(ln, axis=[1]))  # (n, 3, 3): reduced over the channels
        bb.emit_func_output(gv)
    before = bb.get()
    after = ConvertLayout({"relax.nn.avg_pool2d": ["NHWC"]})(before)
    values = {b.value.op: b.value for b in after["main"].body.blocks[0].bindings if isinstance(b.value, Call)}
    assert values[op.nn.avg_pool2d].attrs.layout == "NHWC"
    assert values[op.nn.layer_norm].attrs.axes == (3,) and values[op.sum].attrs.axis == (3,)
    assert _permute_count(after) == 1  # the sum's result (n, 3, 3) needs no permute back
    xv = _rand(2, 4, 6, 6)
    np.testing.assert_allclose(evaluate(after, xv), evaluate(before, xv), rtol=1e-5, atol=1e-5)


def test_bad_desired_layouts_are_refused_with_the_op_named():
    with pytest.raises(ValueError, match="unknown op 'relax.nn.conv9d'"):
        ConvertLayout({"relax.nn.conv9d": ["NHWC"]})
    with pytest.raises(ValueError, match="relax.nn.relu takes no desired layout"):
        ConvertLayout({"relax.nn.relu": ["NHWC"]})
    with pytest.raises(ValueError, match="'NHWD' is not a permutation of 'NCHW'"):
        ConvertLayout({"relax.nn.conv2d": ["NHWD", "OHWI"]})


def test_conv_writing_a_blocked_result_is_left_alone_and_an_explicit_out_layout_follows():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 3, 8, 8), "float32"), w: R.Tensor((16, 3, 3, 3), "float32")):
            with R.dataflow():
                b = R.nn.conv2d(x, w, padding=1, out_layout="NCHW16c")
                gv = R.nn.conv2d(x, w, padding=1, out_layout="NCHW")
                R.output(b, gv)
            return (b, gv)

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 3, 8, 8), "float32"), w: R.Tensor((16, 3, 3, 3), "float32")):
            with R.dataflow():
                b = R.nn.conv2d(x, w, padding=1, out_layout="NCHW16c")
                x_0231 = R.permute_dims(x, axes=[0, 2, 3, 1])
                w_0231 = R.permute_dims(w, axes=[0, 2, 3, 1])
                gv_inner = R.nn.conv2d(x_0231, w_0231, padding=1, data_layout="NHWC",
                                       kernel_layout="OHWI", out_layout="NHWC")  # fmt: skip
                gv = R.permute_dims(gv_inner, axes=[0, 3, 1, 2])
                R.output(b, gv)
            return (b, gv)

    After = ConvertLayout(NHWC)(Before)
    assert_structural_equal(After, Expected)
    args = (_rand(1, 3, 8, 8), _rand(16, 3, 3, 3))
    wants = relax.VirtualMachine(unity.compile(Before, target="llvm"), unity.cpu())["main"](*args)
    gots = relax.VirtualMachine(unity.compile(After, target="llvm"), unity.cpu())["main"](*args)
    for got, want in zip(gots, wants, strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_tuples_outside_dataflow_are_unpacked_and_permuted_back_on_return():
    x = Var("x", TensorStructInfo(("n", 2, 4, 4), "float32"))
    w, g = Constant(_rand(3, 2, 3, 3)), Constant(RNG.random(3).astype("float32") + 0.5)
    bb = BlockBuilder()
    with bb.function("main", [x]):  # no dataflow block: every var may escape
        c = bb.emit(op.nn.conv2d(x, w, padding=1))
        bn = bb.emit(op.nn.batch_norm(c, g, g, g, g))
        r = bb.emit(op.nn.relu(TupleGetItem(bn, 0)))
        bb.emit_func_output(bb.emit(relax.Tuple((r, bn))))
    before = bb.get()
    after = ConvertLayout(NHWC)(before)
    bn_call = next(b.value for b in after["main"].body.blocks[0].bindings if getattr(b.value, "op", None) is op.nn.batch_norm)
    assert bn_call.attrs.axis == 3
    xv = _rand(2, 2, 4, 4)
    got, want = evaluate(after, xv), evaluate(before, xv)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    for a, b in zip(got[1], want[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_pad_split_and_strided_slice_follow_the_layout():
    x = Var("x", TensorStructInfo((1, 2, 6, 6), "float32"))
    w = Constant(_rand(4, 2, 3, 3))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            c = bb.emit(op.nn.conv2d(x, w))  # (1, 4, 4, 4)
            padded = bb.emit(op.nn.pad(c, [0, 0, 1, 0, 0, 2, 1, 1]))  # (1, 5, 6, 6)
            parts = bb.emit(op.split(padded, 2, axis=3))  # 2 x (1, 5, 6, 3)
            part = bb.emit(TupleGetItem(parts, 1))
            sliced = bb.emit(op.strided_slice(part, axes=[1, 2], begin=[1, 0], end=[5, 6], strides=[2, 3]))
            gv = bb.emit_output(op.nn.relu(sliced))
        bb.emit_func_output(gv)
    before = bb.get()
    after = ConvertLayout(NHWC)(before)
    values = {b.value.op: b.value for b in after["main"].body.blocks[0].bindings if isinstance(b.value, Call)}
    assert values[op.nn.pad].attrs.pad_width == (0, 0, 0, 2, 1, 1, 1, 0)
    assert values[op.split].attrs.axis == 2 and values[op.strided_slice].attrs.axes == (3, 1)
    assert _permute_count(after) == 3  # x, the weight, the result
    xv = _rand(1, 2, 6, 6)
    np.testing.assert_allclose(evaluate(after, xv), evaluate(before, xv), rtol=1e-5, atol=1e-5)
