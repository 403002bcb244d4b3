"""Print -> parse round trips of relax script: functions, modules with TIR, every op with attrs."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
import sympy

from unity import relax, topi
from unity.ir import IRModule
from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, Var, op
from unity.relax import TensorStructInfo as TS
from unity.script import from_source
from unity.script import ir as I
from unity.script import relax as R
from unity.script import tir as T


def roundtrip(obj):
    """Print `obj`, parse it back, check structural equality and a stable text; return the copy."""
    text = obj.script()
    parsed = from_source(text)
    assert_structural_equal(parsed, obj)
    assert parsed.script() == text
    if isinstance(parsed, IRModule) or parsed.struct_info.params is not None:
        mod = parsed if isinstance(parsed, IRModule) else IRModule({"main": parsed})
        relax.analysis.check_well_formed(mod)
    return parsed


def f32(*shape):
    return TS(shape, "float32")


def test_style_guide_example_module_parses_and_round_trips():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            c = R.add(R.const([1.0, 2.0]), R.const([3.0, 4.0]))
            return R.multiply(x, c)

    main = Before["main"]
    binding = main.body.blocks[0].bindings[0]
    assert binding.value.op is op.add and binding.var.struct_info.shape == (2,)
    assert main.body.body.op is op.multiply and main.ret_struct_info.dtype == "float32"
    assert main.attrs == {"global_symbol": "main"}
    roundtrip(Before)


def test_script_equals_block_builder_with_symbolic_shapes():
    x = Var("x", f32("n", 4))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(op.exp(x))
            gv = bb.emit_output(op.sum(lv, axis=1))
        bb.emit_func_output(gv)

    @R.function
    def main(x: R.Tensor(("n", 4), "float32")):
        with R.dataflow():
            lv = R.exp(x)
            gv = R.sum(lv, axis=1)
            R.output(gv)
        return gv

    assert_structural_equal(main, bb.get()["main"])
    n = main.params[0].struct_info.shape[0]
    assert n == sympy.Symbol("n", integer=True, positive=True)
    assert main.ret_struct_info.shape == (n,)
    assert isinstance(main.body.blocks[0].bindings[0].var, relax.DataflowVar)
    assert not isinstance(main.body.blocks[0].bindings[1].var, relax.DataflowVar)
    roundtrip(main)


def test_symbols_are_shared_within_a_function_and_declared_names_work():
    @R.function
    def f(x: R.Tensor(("n", "m"), "float32"), y: R.Tensor(("m",), "float32")):
        n = T.int64()
        z: R.Tensor((n, m), "float32") = R.add(x, y)  # noqa: F821 - `m` from the signature
        s = R.shape([n * m, 2 * n + 1])  # noqa: F821
        return (z, s)

    x, y = f.params
    assert x.struct_info.shape[1] == y.struct_info.shape[0]  # one symbol `m`
    assert f.ret_struct_info.fields[1].values[1] == 2 * x.struct_info.shape[0] + 1
    roundtrip(f)


def test_bare_names_in_annotations_are_shape_symbols_and_spans_point_here():
    @R.function
    def f(x: R.Tensor((n, 4), "float32")) -> R.Tensor((n * 4,), "float32"):  # noqa: F821
        y = R.reshape(x, R.shape([n * 4]))  # noqa: F821 - `n` from the signature
        return y

    call = f.body.blocks[0].bindings[0].value
    assert str(call.struct_info.shape[0]) == "4*n"
    with open(__file__) as source:
        lines = source.read().splitlines()
    assert call.span.source_name == __file__
    assert lines[call.span.line - 1][call.span.column :].startswith("R.reshape(x")
    roundtrip(f)


MODULE_TEXT = """
@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32"),
            C: T.Buffer(("n",), "float32")):
        n = T.int64()
        for i in T.serial(n):
            with T.block("C"):
                vi = T.axis.spatial(n, i)
                C[vi] = A[vi] + B[vi]

    @R.function
    def main(x: R.Tensor(("n",), "float32"), y: R.Tensor(("n",), "float32")):
        n = T.int64()
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((n,), "float32"))
            lv2 = R.call_tir(add, (lv, y), out_sinfo=R.Tensor((n,), "float32"))
            lv3 = R.call_tir("add", (lv2, y), out_sinfo=R.Tensor((n,), "float32"))
            lv4 = R.call_tir(I.GlobalVar("add"), (lv3, y), out_sinfo=R.Tensor((n,), "float32"))
            gv = helper(lv4)
            R.output(gv)
        return gv

    @R.function(private=True)
    def helper(x: R.Tensor(("m",), "float32")) -> R.Tensor(("m",), "float32"):
        y = R.multiply(x, x)
        return y
"""


def test_module_with_prim_func_call_tir_and_forward_function_call():
    mod = from_source(MODULE_TEXT)
    add_gv, main_gv, helper_gv = (mod.get_global_var(n) for n in ("add", "main", "helper"))
    bindings = mod["main"].body.blocks[0].bindings
    assert bindings[0].value.op is op.call_tir and bindings[0].value.args[0] is add_gv
    assert all(b.value.args[0] is add_gv for b in bindings[1:4])  # by name, too
    assert bindings[4].value.op is helper_gv and main_gv is not helper_gv
    assert str(bindings[4].var.struct_info.shape[0]) == "n"  # `m` bound to the caller's `n`
    assert "global_symbol" not in mod["helper"].attrs
    roundtrip(mod)


def test_call_te_module_from_block_builder_round_trips():
    x, y = Var("x", f32("n", 4)), Var("y", f32(4))
    bb = BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            lv = bb.emit_te(topi.add, x, y)
            gv = bb.emit_output(op.nn.relu(lv))
        bb.emit_func_output(gv)
    roundtrip(bb.get())


def test_lowering_pipeline_output_round_trips_at_every_step():
    from unity.relax import transform

    x, w = Var("x", f32("n", 3, 16, 16)), Var("w", f32(8, 3, 3, 3))
    w2 = Var("w2", f32(512, 10))
    bb = BlockBuilder()
    with bb.function("main", [x, w, w2]):
        with bb.dataflow():
            a = bb.emit(op.nn.relu(op.nn.conv2d(x, w, padding=1)))
            b = bb.emit(op.reshape(op.nn.max_pool2d(a, 2, strides=2), ("n", 512)))
            out = bb.emit_output(op.nn.softmax(op.matmul(b, w2)))
        bb.emit_func_output(out)
    mod = bb.get()
    steps = [
        transform.LegalizeOps(), transform.AnnotateTIROpPattern(), transform.FuseOps(),
        transform.FuseTIR(), transform.ToNonDataflow(), transform.CallTIRRewrite(),
    ]  # fmt: skip
    roundtrip(mod)
    for step in steps:
        mod = step(mod)
        roundtrip(mod)


def test_match_cast_defines_new_symbols():
    @R.function
    def f(x: R.Tensor(ndim=2, dtype="float32")):
        y = R.match_cast(x, R.Tensor(("a", "b"), "float32"))
        z = R.reshape(y, R.shape([a * b]))  # noqa: F821 - `a`, `b` come from the match_cast
        return z

    cast = f.body.blocks[0].bindings[0]
    assert isinstance(cast, relax.MatchCast) and cast.var.struct_info.ndim == 2
    assert str(f.ret_struct_info.shape[0]) == "a*b"
    roundtrip(f)


def test_leaf_values_tuples_packed_calls_and_attrs():
    @R.function(pure=False)
    def f(s: R.Shape(ndim=2), t: R.Tuple(R.Tensor((2,), "int32"), R.Object), p: R.Prim("int64")):
        R.func_attr({"num_input": 1})
        pv = R.prim_value(3)
        fv = R.prim_value(1.5, dtype="float32")
        st = R.str("hello")
        dtype = R.dtype("float16")
        tup = (pv, (st, dtype))
        t0 = t[0]
        t1 = tup[1][0]
        ext = R.call_pure_packed("my_func", t0, sinfo_args=R.Tensor((2,), "int32"))
        dps = R.call_dps_packed(
            "my_dps", (t0,), out_sinfo=[R.Tensor((3,), "float32"), R.Tensor((4,), "int8")]
        )
        return (tup, t1, ext, dps, fv, s, p)

    assert not f.is_pure and f.attrs == {"num_input": 1, "global_symbol": "f"}
    assert f.ret_struct_info.fields[4].dtype == "float32"
    roundtrip(f)


def test_if_else_binding():
    @R.function
    def f(c: R.Tensor((), "bool"), x: R.Tensor((3,), "float32")):
        if c:
            y1 = R.add(x, x)
            y = R.multiply(y1, x)
        else:
            y = x
        return y

    binding = f.body.blocks[0].bindings[0]
    assert isinstance(binding.value, relax.If) and binding.var.struct_info.shape == (3,)
    assert len(binding.value.true_branch.blocks[0].bindings) == 1
    roundtrip(f)


def test_constants_inline_and_base64():
    big = np.arange(100, dtype="float32").reshape(10, 10) / 7
    special = np.array([1.0, np.nan, -np.inf], dtype="float32")

    @R.function
    def f(x: R.Tensor((10, 10), "float32")):
        a = R.add(x, R.const(big))
        b = R.const([[1, 2], [3, 4]], "int64")
        c = R.const(special)
        d = R.const(True)
        return (a, b, c, d)

    text = f.script()
    assert 'R.const([[1, 2], [3, 4]], "int64")' in text and "R.const_b64((10, 10)" in text
    parsed = roundtrip(f)
    np.testing.assert_array_equal(parsed.body.blocks[0].bindings[0].value.args[1].data, big)


def test_functions_calling_functions_in_either_order():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor(("n",), "float32")):
            y = cls.square(x)  # noqa: F821 - `cls` is the module
            return cls.twice(y)  # noqa: F821

        @R.function
        def square(x: R.Tensor(("k",), "float32")) -> R.Tensor(("k",), "float32"):
            return R.multiply(x, x)

        @R.function
        def twice(x: R.Tensor(("k",), "float32")) -> R.Tensor(("k",), "float32"):
            return R.add(x, x)

    assert str(Module["main"].ret_struct_info.shape[0]) == "n"
    roundtrip(Module)


def _op_calls():
    x, x4, m = Var("x", f32("n", 4)), Var("x4", f32(2, 3, 8, 8)), Var("m", f32(4, 4))
    w, wt, g, c3 = (
        Var("w", f32(4, 3, 3, 3)),
        Var("wt", f32(3, 4, 3, 3)),
        Var("g", f32(4)),
        Var("c3", f32(3)),
    )
    i, i44 = Var("i", TS((2,), "int64")), Var("i44", TS((4, 4), "int64"))
    return [
        op.add(x, x), op.exp(x), op.clip(x, -1.0, 1.0), op.astype(x, "int8"),
        op.less(x, x), op.where(Var("b", TS(("n", 4), "bool")), x, x),
        op.matmul(x, m, out_dtype="float32"), op.nn.linear(x, m, g),
        op.nn.conv2d(x4, w, strides=2, padding=1, groups=1),
        op.nn.conv2d(x4, Var("w16", f32(16, 3, 3, 3)), padding=1, out_layout="NCHW16c"),
        op.nn.conv2d_transpose(x4, wt, strides=2, output_padding=1),
        op.nn.max_pool2d(x4, 2),
        op.nn.avg_pool2d(x4, 3, strides=1, padding=1, count_include_pad=True),
        op.nn.adaptive_avg_pool2d(x4, 1), op.nn.relu(x), op.nn.gelu(x), op.nn.silu(x),
        op.nn.softmax(x, axis=1), op.nn.log_softmax(x),
        op.nn.batch_norm(x4, c3, c3, c3, c3, epsilon=1e-3), op.nn.layer_norm(x, g, g, axes=-1),
        op.nn.group_norm(x4, c3, c3, num_groups=3), op.nn.dropout(x, 0.1),
        op.nn.pad(x, (0, 0, 1, 1), 2.0),
        op.reshape(x, (-1,)), op.permute_dims(x, [1, 0]), op.concat([x, x], axis=0),
        op.split(x, 2, axis=1), op.split(x, [1, 3], axis=1), op.squeeze(Var("s", f32(1, 4)), 0),
        op.expand_dims(x, 0), op.flatten(x), op.broadcast_to(g, (3, 4)),
        op.strided_slice(x, [1], [0], [2]), op.take(x, i, axis=1),
        op.gather_elements(m, i44, axis=1), op.scatter_elements(m, i44, m, axis=0),
        op.sum(x, axis=1), op.mean(x, keepdims=True), op.max(x, axis=[0, 1]), op.min(x),
        op.prod(x), op.variance(x, axis=0), op.argmax(x, axis=1), op.argmin(x),
        op.cumsum(x, axis=1), op.zeros((2, 3), "float32"), op.ones((2, 3), "int32"),
        op.full((2,), relax.const(1.5, "float32"), "float32"), op.arange(0, 10, 2),
        op.tril(m, 1), op.triu(m),
    ]  # fmt: skip


def _free_vars(expr, out):
    if isinstance(expr, Var):
        if all(expr is not v for v in out):
            out.append(expr)
    elif isinstance(expr, relax.Call):
        for a in expr.args:
            _free_vars(a, out)
    elif isinstance(expr, relax.Tuple):
        for f in expr.fields:
            _free_vars(f, out)
    return out


@pytest.mark.parametrize("call", _op_calls(), ids=lambda c: c.op.name)
def test_every_op_with_its_attrs_round_trips(call):
    bb = BlockBuilder()
    with bb.function("main", _free_vars(call, [])):
        bb.emit_func_output(bb.emit(call))
    func = bb.get()["main"]
    parsed = roundtrip(func)
    value = parsed.body.blocks[0].bindings[-1].value  # nested calls are bound first
    assert value.op is call.op and type(value.attrs) is type(call.attrs)


def test_symbolic_dims_with_floor_ceiling_max_and_rationals():
    x, x4 = Var("x", f32("n", 4)), Var("x4", f32("n", 3, "h", "w"))
    calls = [
        op.split(x, 2, axis=0), op.split(x, [1, 3], axis=0),
        op.nn.max_pool2d(x4, 3, strides=2, ceil_mode=True), op.nn.avg_pool2d(x4, 2, strides=2),
    ]  # fmt: skip
    bb = BlockBuilder()
    with bb.function("main", [x, x4]):
        bb.emit_func_output([bb.emit(c) for c in calls])
    text = roundtrip(bb.get()["main"]).script()
    assert "ceiling(n/2)" in text and "Max(0, n - Min(3, n))" in text and "ceiling(h/2 - 3/2)" in text


def test_printed_attrs_form_and_builder_keywords_build_the_same_call():
    @R.function
    def f(x: R.Tensor((1, 3, 8, 8), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
        a = R.nn.conv2d(x, w, strides=2, padding=1)
        b = R.nn.conv2d(x, w, strides=(2, 2), padding=(1, 1, 1, 1), dilation=(1, 1), groups=1,
                        data_layout="NCHW", kernel_layout="OIHW", out_layout=None,
                        out_dtype=None, output_padding=(0, 0))  # fmt: skip
        c = R.squeeze(x, axis=0)
        d = R.squeeze(x, axes=[0])
        return (a, b, c, d)

    a, b, c, d = (bind.value for bind in f.body.blocks[0].bindings)
    assert a.attrs == b.attrs and c.attrs == d.attrs
    assert a.struct_info.shape == (1, 4, 4, 4)


def test_blocked_layout_attrs_round_trip():
    @R.function
    def f(x: R.Tensor(("n", 2, 8, 8, 16), "float32"), w: R.Tensor((32, 32, 3, 3), "float32")):
        c = R.nn.conv2d(x, w, padding=1, data_layout="NCHW16c", kernel_layout="OIHW")
        m = R.nn.max_pool2d(c, 2, layout="NCHW16c")
        a = R.nn.avg_pool2d(m, 3, strides=1, padding=1, layout="NCHW16c")
        return R.nn.adaptive_avg_pool2d(a, output_size=1, layout="NCHW16c")

    parsed = roundtrip(f)
    layouts = [b.value.attrs for b in parsed.body.blocks[0].bindings]
    assert layouts[0].data_layout == "NCHW16c" and {a.layout for a in layouts[1:]} == {"NCHW16c"}
    assert parsed.ret_struct_info.shape[1:] == (2, 1, 1, 16)


def test_conv2d_out_layout_round_trips():
    @R.function
    def f(x: R.Tensor(("n", 3, 8, 8), "float32"), w: R.Tensor((32, 3, 3, 3), "float32"),
          v: R.Tensor((32, 32, 1, 1), "float32")):  # fmt: skip
        c = R.nn.conv2d(x, w, strides=2, padding=1, out_layout="NCHW16c")
        d = R.nn.conv2d(c, v, data_layout="NCHW16c", kernel_layout="OIHW", out_layout="NCHW16c")
        e = R.nn.conv2d(x, w, out_layout="NCHW")
        return (d, e)

    parsed = roundtrip(f)
    c, d, e = (b.value for b in parsed.body.blocks[0].bindings)
    assert (c.attrs.data_layout, c.attrs.out_layout) == ("NCHW", "NCHW16c")
    assert c.struct_info.shape[1:] == (2, 4, 4, 16) and d.attrs.out_layout == "NCHW16c"
    assert e.attrs.out_layout == "NCHW" and e.struct_info.shape[1:] == (32, 6, 6)
    assert 'data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW16c"' in f.script()


MODULES = [
    "unity.script.relax", "unity.script.parser.relax_specs", "unity.script.parser.relax_expr",
    "unity.script.parser.relax_function", "unity.script.parser.relax_check", "unity.relax.printer",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_imported_onnx_model_with_weights_round_trips():
    onnx = pytest.importorskip("onnx")
    import os

    from unity.relax.frontend.onnx import from_onnx

    path = os.path.join(
        os.path.dirname(onnx.__file__), "backend/test/data/light/light_squeezenet.onnx"
    )
    if not os.path.exists(path):
        pytest.skip("onnx ships no light squeezenet model here")
    mod = from_onnx(onnx.load(path))
    parsed = roundtrip(mod)
    assert len(parsed["main"].params) == len(mod["main"].params)
