"""FuseOps: call_tirs grouped into Primitive relax functions with TVM's dominator rules."""
# ruff: noqa: F821 - script bodies use `cls` and shape vars that the parser binds

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

import unity
from unity import relax, topi
from unity.ir.module import IRModule
from unity.ir.structural import assert_structural_equal
from unity.ir.transform import PassContext
from unity.relax import BlockBuilder, Call, Function, Var, op
from unity.relax import TensorStructInfo as TS
from unity.relax.analysis import well_formed
from unity.relax.struct_info import sym
from unity.relax.transform import AnnotateTIROpPattern, FuseOps, FuseTIR, LegalizeOps
from unity.script import ir as I
from unity.script import relax as R
from unity.script import tir as T

from .reference import evaluate

RNG = np.random.default_rng(13)


def _rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


def test_docstring_example_matmul_bias_relu_become_one_function():
    @I.ir_module
    class Before:
        @T.prim_func
        def matmul(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
                   w: T.Buffer((T.int64(4), T.int64(4)), "float32"),
                   y: T.Buffer((T.int64("n"), T.int64(4)), "float32")):  # fmt: skip
            T.func_attr({"op_pattern": 4})
            for i, j, k in T.grid(n, T.int64(4), T.int64(4)):
                with T.block("matmul"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        y[vi, vj] = T.float32(0.0)
                    y[vi, vj] = y[vi, vj] + x[vi, vk] * w[vk, vj]

        @T.prim_func
        def add(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
                b: T.Buffer((T.int64(4),), "float32"),
                y: T.Buffer((T.int64("n"), T.int64(4)), "float32")):  # fmt: skip
            T.func_attr({"op_pattern": 1})
            for i, j in T.grid(n, T.int64(4)):
                with T.block("add"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    y[vi, vj] = x[vi, vj] + b[vj]

        @T.prim_func
        def relu(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
                 y: T.Buffer((T.int64("n"), T.int64(4)), "float32")):  # fmt: skip
            T.func_attr({"op_pattern": 0})
            for i, j in T.grid(n, T.int64(4)):
                with T.block("relu"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    y[vi, vj] = T.max(x[vi, vj], T.float32(0.0))

        @R.function
        def main(x: R.Tensor(("n", 4), "float32"), w: R.Tensor((4, 4), "float32"),
                 b: R.Tensor((4,), "float32")):  # fmt: skip
            n = T.int64()
            with R.dataflow():
                lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((n, 4), "float32"))
                lv1 = R.call_tir(cls.add, (lv, b), out_sinfo=R.Tensor((n, 4), "float32"))
                gv = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((n, 4), "float32"))
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @T.prim_func
        def matmul(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
                   w: T.Buffer((T.int64(4), T.int64(4)), "float32"),
                   y: T.Buffer((T.int64("n"), T.int64(4)), "float32")):  # fmt: skip
            T.func_attr({"op_pattern": 4})
            for i, j, k in T.grid(n, T.int64(4), T.int64(4)):
                with T.block("matmul"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        y[vi, vj] = T.float32(0.0)
                    y[vi, vj] = y[vi, vj] + x[vi, vk] * w[vk, vj]

        @T.prim_func
        def add(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
                b: T.Buffer((T.int64(4),), "float32"),
                y: T.Buffer((T.int64("n"), T.int64(4)), "float32")):  # fmt: skip
            T.func_attr({"op_pattern": 1})
            for i, j in T.grid(n, T.int64(4)):
                with T.block("add"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    y[vi, vj] = x[vi, vj] + b[vj]

        @T.prim_func
        def relu(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
                 y: T.Buffer((T.int64("n"), T.int64(4)), "float32")):  # fmt: skip
            T.func_attr({"op_pattern": 0})
            for i, j in T.grid(n, T.int64(4)):
                with T.block("relu"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    y[vi, vj] = T.max(x[vi, vj], T.float32(0.0))

        @R.function(private=True)
        def fused_matmul_add_relu(x: R.Tensor(("n", 4), "float32"), w: R.Tensor((4, 4), "float32"),
                                  b: R.Tensor((4,), "float32")) -> R.Tensor(("n", 4), "float32"):  # fmt: skip
            R.func_attr({"Primitive": True})
            n = T.int64()
            with R.dataflow():
                lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((n, 4), "float32"))
                lv1 = R.call_tir(cls.add, (lv, b), out_sinfo=R.Tensor((n, 4), "float32"))
                gv = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((n, 4), "float32"))
                R.output(gv)
            return gv

        @R.function
        def main(x: R.Tensor(("n", 4), "float32"), w: R.Tensor((4, 4), "float32"),
                 b: R.Tensor((4,), "float32")):  # fmt: skip
            with R.dataflow():
                gv = cls.fused_matmul_add_relu(x, w, b)
                R.output(gv)
            return gv

    after = FuseOps()(Before)
    assert_structural_equal(after, Expected)
    assert well_formed(after)
    x, w, b = _rand(3, 4), _rand(4, 4), _rand(4)
    reference = np.maximum(x @ w + b, 0)
    for mod in (Before, after):
        np.testing.assert_allclose(evaluate(mod, x, w, b), reference, rtol=1e-5, atol=1e-6)


# -- networks built with BlockBuilder + LegalizeOps ------------------------------------------


def _fused(body, *params) -> IRModule:
    """Legalize, annotate and fuse `body(bb, *params)` built inside a dataflow block."""
    bb = BlockBuilder()
    with bb.function("main", list(params)):
        with bb.dataflow():
            out = bb.emit_output(body(bb, *params))
        bb.emit_func_output(out)
    mod = AnnotateTIROpPattern()(LegalizeOps()(bb.get()))
    return mod, FuseOps()(mod)


def _main_calls(mod: IRModule) -> list[str]:
    """What each binding of main calls: a fused function's name or a PrimFunc's."""
    names = []
    for block in mod["main"].body.blocks:
        for b in block.bindings:
            v = b.value
            if isinstance(v, Call) and v.op is op.call_tir:
                names.append(v.args[0].name_hint)
            elif isinstance(v, Call):
                names.append(v.op.name_hint)
    return names


def _primitive_names(mod: IRModule) -> list[str]:
    return sorted(gv.name_hint for gv, f in mod.items()
                  if isinstance(f, Function) and f.attrs.get("Primitive"))  # fmt: skip


def _check_same_results(before: IRModule, after: IRModule, *inputs: np.ndarray) -> None:
    np.testing.assert_allclose(evaluate(after, *inputs), evaluate(before, *inputs),
                               rtol=1e-5, atol=1e-5)  # fmt: skip


def test_conv2d_bias_relu_residual_add_is_one_group():
    x = Var("x", TS(("n", 4, 6, 6), "float32"))
    w = Var("w", TS((4, 4, 3, 3), "float32"))
    s = Var("s", TS((1, 4, 1, 1), "float32"))

    def body(bb, x, w, s):
        y = bb.emit(op.nn.conv2d(x, w, padding=1))
        y = bb.emit(op.add(y, s))
        y = bb.emit(op.nn.relu(y))
        return op.add(y, x)

    before, after = _fused(body, x, w, s)
    assert _main_calls(after) == ["fused_conv2d_add_relu_add1"]
    assert well_formed(after)
    _check_same_results(before, after, _rand(2, 4, 6, 6), _rand(4, 4, 3, 3), _rand(1, 4, 1, 1))


def test_injective_chain_fuses():
    x = Var("x", TS(("n", 6), "float32"))

    def body(bb, x):
        y = bb.emit(op.permute_dims(x))
        y = bb.emit(op.exp(y))
        return op.permute_dims(y)

    before, after = _fused(body, x)
    assert len(_main_calls(after)) == 1 and _main_calls(after)[0].startswith("fused_")
    _check_same_results(before, after, _rand(3, 6))


def test_kernels_over_compound_or_unread_symbols_fuse_with_a_shape_parameter():
    """``ones((n,))`` reads no tensor and ``exp`` over ``n + m`` rows takes `n` and `m` as
    scalars (tir_vars): both still fuse (a GPT-2 step's position and mask kernels did
    not).  Each fused function takes the symbols no input has as a whole dim in an
    ``R.Shape`` parameter, so it is well formed and runs on its own; FuseTIR passes them
    to the kernel as scalars."""
    x = Var("x", TS(("n", 4), "float32"))
    y = Var("y", TS(("m", 4), "float32"))

    def body(bb, x, y):
        rows = bb.emit(op.concat([x, y], axis=0))  # (n + m, 4): defines neither
        ones = bb.emit(op.ones(relax.ShapeExpr((sym("n"),)), "float32"))
        e = bb.emit(op.exp(rows))
        return bb.emit(op.add(bb.emit(op.exp(ones)), bb.emit(op.sum(e, axis=[0, 1]))))

    before, after = _fused(body, x, y)
    fused = [f for f in after.functions.values() if isinstance(f, Function) and f.attrs.get("Primitive")]
    shape_params = [p for f in fused for p in f.params if isinstance(p.struct_info, relax.ShapeStructInfo)]
    assert sorted([str(v) for v in p.struct_info.values] for p in shape_params) == [["m", "n"], ["n"]]
    assert well_formed(after)
    a, b = _rand(3, 4), _rand(2, 4)
    expected = np.exp(np.ones(3)) + np.exp(np.concatenate([a, b])).sum()
    lowered = FuseTIR()(after)
    assert well_formed(lowered)
    for mod in (before, after, lowered):
        np.testing.assert_allclose(evaluate(mod, a, b), expected, rtol=1e-5)


def _shuffle_then_conv(bb, x, w, padding):
    """ShuffleNet's channel shuffle (reshape, permute, reshape) before a depthwise conv."""
    y = bb.emit(op.reshape(x, (1, 2, 3, 5, 5)))
    y = bb.emit(op.permute_dims(y, [0, 2, 1, 3, 4]))
    y = bb.emit(op.reshape(y, (1, 6, 5, 5)))
    return op.nn.conv2d(y, w, padding=padding, groups=6)


@pytest.mark.parametrize("padding", [1, 0])
def test_injective_producer_joins_a_conv_that_copies_its_input_first(padding):
    # with padding the conv reads its input through the pad copy: the shuffle is computed
    # there, once per element; without, the reduction would recompute its index per tap
    x, w = Var("x", TS((1, 6, 5, 5), "float32")), Var("w", TS((6, 1, 3, 3), "float32"))
    before, after = _fused(lambda bb, x, w: _shuffle_then_conv(bb, x, w, padding), x, w)
    expected = (
        ["fused_reshape_permute_dims_reshape1_conv2d"] if padding
        else ["fused_reshape_permute_dims_reshape1", "conv2d"]
    )  # fmt: skip
    assert _main_calls(after) == expected
    assert well_formed(after)
    _check_same_results(before, after, _rand(1, 6, 5, 5), _rand(6, 1, 3, 3))


def test_pad_added_to_a_conv_joins_its_epilogue_unless_it_reads_the_conv():
    """A zero pad of a small tensor added to a conv's output (SplitConvByLiveTaps' corner
    pieces) is computed where the epilogue reads it; a pad of the conv's own output
    stays a group of its own (the epilogue would read the conv at other points)."""
    x, w = Var("x", TS((1, 4, 6, 6), "float32")), Var("w", TS((4, 4, 1, 1), "float32"))
    corner = Var("c", TS((1, 4, 2, 2), "float32"))

    def separate(bb, x, w, c):
        y = bb.emit(op.nn.conv2d(x, w))
        return op.nn.relu(bb.emit(op.add(y, bb.emit(op.nn.pad(c, [0, 0, 0, 0, 4, 0, 0, 4])))))

    before, after = _fused(separate, x, w, corner)
    assert _main_calls(after) == ["fused_conv2d_pad_add_relu"]
    assert well_formed(after)
    a, b, c = _rand(1, 4, 6, 6), _rand(4, 4, 1, 1), _rand(1, 4, 2, 2)
    _check_same_results(before, after, a, b, c)
    got = relax.VirtualMachine(unity.compile(before), unity.cpu())["main"](a, b, c).numpy()
    want = np.einsum("oi,nihw->nohw", b[:, :, 0, 0], a) + np.pad(c, ((0, 0), (0, 0), (4, 0), (0, 4)))
    np.testing.assert_allclose(got, np.maximum(want, 0), rtol=1e-5, atol=1e-5)

    def own(bb, x, w):
        y = bb.emit(op.nn.conv2d(x, w))
        part = bb.emit(op.strided_slice(y, [2, 3], [0, 0], [2, 2]))
        return op.add(y, bb.emit(op.nn.pad(part, [0, 0, 0, 0, 4, 0, 0, 4])))

    before, after = _fused(own, x, w)
    assert _main_calls(after) == ["conv2d", "fused_strided_slice_pad_add"]
    _check_same_results(before, after, _rand(1, 4, 6, 6), _rand(4, 4, 1, 1))


def test_reduction_absorbs_elementwise_producer_but_not_its_consumer():
    x = Var("x", TS(("n", 6), "float32"))

    def body(bb, x):
        y = bb.emit(op.exp(x))
        y = bb.emit(op.sum(y, axis=[1]))
        return op.sqrt(y)

    before, after = _fused(body, x)
    assert _main_calls(after) == ["fused_exp_sum", "sqrt"]
    _check_same_results(before, after, _rand(3, 6))


def test_two_matmuls_stay_apart():
    x = Var("x", TS((2, 4), "float32"))
    w = Var("w", TS((4, 4), "float32"))

    def body(bb, x, w):
        y = bb.emit(op.matmul(x, w))
        y = bb.emit(op.nn.relu(y))
        return op.matmul(y, w)

    before, after = _fused(body, x, w)
    assert _main_calls(after) == ["fused_matmul_relu", "matmul"]
    _check_same_results(before, after, _rand(2, 4), _rand(4, 4))


def test_diamond_of_elementwise_ops_is_one_group():
    x = Var("x", TS((3, 5), "float32"))

    def body(bb, x):
        e = bb.emit(op.exp(x))
        a = bb.emit(op.add(e, x))
        m = bb.emit(op.multiply(e, e))
        return op.subtract(a, m)

    before, after = _fused(body, x)
    assert _main_calls(after) == ["fused_exp_add_multiply_subtract"]
    fused = after["fused_exp_add_multiply_subtract"]
    assert [p.name_hint for p in fused.params] == ["x"]
    _check_same_results(before, after, _rand(3, 5))


def test_value_also_read_by_a_reduction_is_not_fused_past_it():
    x = Var("x", TS((3, 5), "float32"))

    def body(bb, x):
        e = bb.emit(op.exp(x))
        t = bb.emit(op.sum(e, axis=[1]))  # a reduction consumes e...
        r = bb.emit(op.nn.relu(e))  # ...and so does relu: e has no single elementwise consumer
        return op.add(r, op.expand_dims(t, 1))

    before, after = _fused(body, x)
    # exp's post-dominator is the final add, reached through the sum: exp stays alone;
    # the reduction does not absorb its consumers; relu and expand_dims fuse into the add
    assert _main_calls(after) == ["exp", "sum", "fused_relu_expand_dims_add"]
    assert well_formed(after)
    _check_same_results(before, after, _rand(3, 5))


def test_tuple_item_of_a_tuple_made_outside_the_group_stays_outside():
    x = Var("x", TS((4, 6), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            parts = bb.emit(op.split(x, 2, axis=1))
            a = bb.emit(relax.TupleGetItem(parts, 0))
            b = bb.emit(relax.TupleGetItem(parts, 1))
            e = bb.emit_output(op.nn.relu(bb.emit(op.exp(a))))
            s = bb.emit_output(op.sum(b, axis=[1]))
        bb.emit_func_output(relax.Tuple((e, s)))
    before = AnnotateTIROpPattern()(LegalizeOps()(bb.get()))
    after = FuseOps()(before)
    assert _primitive_names(after) == ["fused_exp_relu"]
    assert all(isinstance(p.struct_info, TS) for p in after["fused_exp_relu"].params)
    x_np = _rand(4, 6)
    fused_tir = FuseTIR()(after)  # every parameter is a tensor, so FuseTIR accepts it
    for got, want in zip(evaluate(fused_tir, x_np), evaluate(before, x_np), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_constants_become_parameters_of_the_fused_function():
    x = Var("x", TS((4,), "float32"))

    def body(bb, x):
        y = bb.emit(op.add(x, relax.const(np.arange(4, dtype="float32"))))
        return op.nn.relu(y)

    before, after = _fused(body, x)
    (name,) = _primitive_names(after)
    assert len(after[name].params) == 2
    assert isinstance(after["main"].body.blocks[0].bindings[0].value.args[1], relax.Constant)
    _check_same_results(before, after, _rand(4))


def test_max_depth_config_limits_group_size():
    x = Var("x", TS((4,), "float32"))

    def body(bb, x):
        y = x
        for _ in range(5):
            y = bb.emit(op.exp(y))
        return op.nn.relu(y)

    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(body(bb, x))
        bb.emit_func_output(out)
    mod = AnnotateTIROpPattern()(LegalizeOps()(bb.get()))
    assert len(_main_calls(FuseOps()(mod))) == 1
    with PassContext(config={"relax.FuseOps.max_depth": 2}):
        limited = FuseOps()(mod)
    assert len(_main_calls(limited)) == 3
    for name in _primitive_names(limited):
        assert len(limited[name].body.blocks[0].bindings) <= 2
    _check_same_results(mod, limited, _rand(4))


def test_nothing_to_fuse_and_level_zero_return_the_same_module():
    x = Var("x", TS((2, 4), "float32"))
    w = Var("w", TS((4, 4), "float32"))
    before, after = _fused(lambda bb, x, w: op.matmul(x, w), x, w)
    assert after is before
    _, chain = _fused(lambda bb, x, w: op.nn.relu(bb.emit(op.exp(x))), x, w)
    assert FuseOps(fuse_opt_level=0)(chain) is chain


def test_prim_funcs_without_op_pattern_are_opaque():
    x = Var("x", TS((4,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit_te(topi.exp, x)
            out = bb.emit_output(bb.call_te(topi.nn.relu, y))
        bb.emit_func_output(out)
    mod = bb.get()
    assert FuseOps()(mod) is mod
    assert len(_main_calls(FuseOps()(AnnotateTIROpPattern()(mod)))) == 1


@pytest.mark.parametrize("name", [
    "unity.relax.analysis.op_pattern", "unity.relax.analysis.dominator",
    "unity.relax.analysis.graph_partitioner", "unity.relax.analysis.fusion_graph",
    "unity.relax.transform.annotate_tir_op_pattern", "unity.relax.transform.fuse_ops",
    "unity.relax.transform.fuse_tir", "unity.relax.transform.fuse_tir_inline",
])  # fmt: skip
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
