"""AnnotateTIROpPattern: each PrimFunc gets the `op_pattern` its blocks imply."""
# ruff: noqa: F821 - script bodies use shape vars that the parser binds

from __future__ import annotations

import pytest

from unity import te, tir, topi
from unity.ir.module import IRModule
from unity.ir.structural import assert_structural_equal
from unity.relax.analysis.op_pattern import OpPatternKind, analyze_op_pattern
from unity.relax.transform import AnnotateTIROpPattern
from unity.script import ir as I
from unity.script import tir as T


def test_docstring_example_relu_is_elementwise():
    @I.ir_module
    class Before:
        @T.prim_func
        def relu(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
                 T_relu: T.Buffer((T.int64("n"), T.int64(4)), "float32")):  # fmt: skip
            T.func_attr({"tir.noalias": True})
            for i0, i1 in T.grid(n, T.int64(4)):
                with T.block("T_relu"):
                    v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                    T_relu[v_i0, v_i1] = T.max(x[v_i0, v_i1], T.float32(0.0))

    @I.ir_module
    class Expected:
        @T.prim_func
        def relu(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
                 T_relu: T.Buffer((T.int64("n"), T.int64(4)), "float32")):  # fmt: skip
            T.func_attr({"op_pattern": 0, "tir.noalias": True})
            for i0, i1 in T.grid(n, T.int64(4)):
                with T.block("T_relu"):
                    v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                    T_relu[v_i0, v_i1] = T.max(x[v_i0, v_i1], T.float32(0.0))

    after = AnnotateTIROpPattern()(Before)
    assert_structural_equal(after, Expected)
    assert after["relu"].attrs["op_pattern"] == OpPatternKind.ELEMWISE


def _prim(build):
    """The PrimFunc of `build(placeholders...)` over fixed-shape float32 inputs."""
    n = tir.Var("n", "int64")
    a = te.placeholder((n, 4, 6, 6), name="a")
    b = te.placeholder((1, 4, 1, 1), name="b")
    c = te.placeholder((n, 4), name="c")
    w = te.placeholder((4, 4), name="w")
    k = te.placeholder((8, 4, 3, 3), name="k")
    v = te.placeholder((4,), name="v")
    inputs, out = build(a, b, c, w, k, v)
    outs = out if isinstance(out, list) else [out]
    return te.create_prim_func([*inputs, *outs])


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (lambda a, b, c, w, k, v: ([a], topi.exp(a)), OpPatternKind.ELEMWISE),
        (lambda a, b, c, w, k, v: ([a, a], topi.add(a, a)), OpPatternKind.ELEMWISE),
        (lambda a, b, c, w, k, v: ([a, b], topi.multiply(a, b)), OpPatternKind.BROADCAST),
        (lambda a, b, c, w, k, v: ([c, v], topi.add(c, v)), OpPatternKind.BROADCAST),
        (lambda a, b, c, w, k, v: ([c], topi.transpose(c)), OpPatternKind.INJECTIVE),
        (lambda a, b, c, w, k, v: ([a], topi.flatten(a)),
         OpPatternKind.INJECTIVE),
        (lambda a, b, c, w, k, v: ([c], topi.sum(c, axis=1)), OpPatternKind.COMM_REDUCE),
        (lambda a, b, c, w, k, v: ([c], topi.max(c, axis=0)), OpPatternKind.COMM_REDUCE),
        (lambda a, b, c, w, k, v: ([c], topi.nn.softmax(c)), OpPatternKind.COMM_REDUCE),
        (lambda a, b, c, w, k, v: ([c, w], topi.matmul(c, w)), OpPatternKind.OUT_ELEMWISE_FUSABLE),
        (lambda a, b, c, w, k, v: ([a, k], topi.nn.conv2d(a, k, 1, 1)),
         OpPatternKind.OUT_ELEMWISE_FUSABLE),
    ],
    ids=["exp", "add_same", "mul_bias", "add_vector", "transpose", "flatten", "sum", "max",
         "softmax", "matmul", "conv2d_with_pad"],
)  # fmt: skip
def test_pattern_read_from_blocks(build, expected):
    assert analyze_op_pattern(_prim(build)) == expected


def test_plain_loops_without_blocks_are_opaque():
    a = tir.decl_buffer((4,), "float32", "a")
    b = tir.decl_buffer((4,), "float32", "b")
    i = tir.Var("i")
    body = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL,
                   tir.BufferStore(b, a[i] * 2.0, (i,)))  # fmt: skip
    assert analyze_op_pattern(tir.PrimFunc((a, b), body)) == OpPatternKind.OPAQUE


def test_block_storing_into_two_buffers_is_opaque():
    @T.prim_func
    def two_outputs(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32"),
                    c: T.Buffer((4,), "float32")):  # fmt: skip
        for i in T.serial(4):
            with T.block("both"):
                vi = T.axis.spatial(4, i)
                b[vi] = a[vi]
                c[vi] = a[vi]

    assert analyze_op_pattern(two_outputs) == OpPatternKind.OPAQUE


def test_reduction_that_is_not_multiply_accumulate_is_comm_reduce():
    n = tir.Var("n", "int64")
    a = te.placeholder((n, 4), name="a")
    kk = te.reduce_axis((0, 4), name="kk")
    out = te.compute((n,), lambda i: te.sum(a[i, kk] * a[i, kk], axis=kk), name="sq")
    # both operands use every output var: no reuse, so not a matmul-like pattern
    assert analyze_op_pattern(te.create_prim_func([a, out])) == OpPatternKind.COMM_REDUCE


def test_existing_attribute_is_kept_and_nothing_to_do_returns_same_module():
    f = _prim(lambda a, b, c, w, k, v: ([a], topi.exp(a))).with_attr("op_pattern", 8)
    mod = IRModule({"exp": f})
    assert AnnotateTIROpPattern()(mod) is mod
    assert mod["exp"].attrs["op_pattern"] == 8


def test_every_prim_func_of_a_module_is_annotated():
    mod = IRModule({
        "exp": _prim(lambda a, b, c, w, k, v: ([a], topi.exp(a))),
        "mm": _prim(lambda a, b, c, w, k, v: ([c, w], topi.matmul(c, w))),
    })  # fmt: skip
    after = AnnotateTIROpPattern()(mod)
    assert after is not mod
    assert [after[name].attrs["op_pattern"] for name in ("exp", "mm")] == [0, 4]
    assert "op_pattern" not in mod["exp"].attrs  # the input module is left alone


@pytest.mark.parametrize("groups", [4, 2])
def test_depthwise_and_grouped_conv_take_an_epilogue(groups):
    # each output reads one group's input channels, yet the weights are reused across the
    # pixels: the conv keeps its bias and relu, like a dense conv
    a = te.placeholder((1, 4, 6, 6), name="a")
    k = te.placeholder((4, 4 // groups, 3, 3), name="k")
    out = topi.nn.conv2d(a, k, 1, 1, groups=groups)
    assert analyze_op_pattern(te.create_prim_func([a, k, out])) == OpPatternKind.OUT_ELEMWISE_FUSABLE


def test_staged_params_are_the_inputs_only_a_copy_reads():
    from unity.relax.analysis.op_pattern import staged_params

    x, w = te.placeholder((1, 4, 8, 8), name="x"), te.placeholder((4, 4, 3, 3), name="w")
    padded = te.create_prim_func([x, w, topi.nn.conv2d(x, w, 1, 1)])
    assert staged_params(padded) == frozenset({0})  # the padding copies x; w feeds the MACs
    assert staged_params(te.create_prim_func([x, w, topi.nn.conv2d(x, w, 1, 0)])) == frozenset()
    a, b = te.placeholder((4, 4), name="a"), te.placeholder((4, 4), name="b")
    assert staged_params(te.create_prim_func([a, b, topi.matmul(a, b)])) == frozenset()
