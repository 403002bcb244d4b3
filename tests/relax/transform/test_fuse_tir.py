"""FuseTIR: each Primitive relax function becomes one PrimFunc called with one call_tir."""
# ruff: noqa: F821 - script bodies use `cls` and shape vars that the parser binds

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import tir
from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import IRModule
from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, Call, Function, Var, op
from unity.relax import TensorStructInfo as TS
from unity.relax.analysis import well_formed
from unity.relax.struct_info import sym
from unity.relax.transform import AnnotateTIROpPattern, FuseOps, FuseTIR, LegalizeOps
from unity.runtime.vm import VirtualMachine
from unity.script import ir as I
from unity.script import relax as R
from unity.script import tir as T

from .reference import evaluate

RNG = np.random.default_rng(17)


def _rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


@I.ir_module
class AddRelu:
    @T.prim_func
    def add(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
            b: T.Buffer((T.int64(4),), "float32"),
            T_add: T.Buffer((T.int64("n"), T.int64(4)), "float32")):  # fmt: skip
        T.func_attr({"op_pattern": 1})
        for i0, i1 in T.grid(n, T.int64(4)):
            with T.block("T_add"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T_add[v_i0, v_i1] = x[v_i0, v_i1] + b[v_i1]

    @T.prim_func
    def relu(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
             T_relu: T.Buffer((T.int64("n"), T.int64(4)), "float32")):  # fmt: skip
        T.func_attr({"op_pattern": 0})
        for i0, i1 in T.grid(n, T.int64(4)):
            with T.block("T_relu"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T_relu[v_i0, v_i1] = T.max(x[v_i0, v_i1], T.float32(0.0))

    @R.function(private=True)
    def fused_add_relu(x: R.Tensor(("n", 4), "float32"),
                       b: R.Tensor((4,), "float32")) -> R.Tensor(("n", 4), "float32"):  # fmt: skip
        R.func_attr({"Primitive": True})
        n = T.int64()
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, b), out_sinfo=R.Tensor((n, 4), "float32"))
            gv = R.call_tir(cls.relu, (lv,), out_sinfo=R.Tensor((n, 4), "float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), b: R.Tensor((4,), "float32")):
        with R.dataflow():
            gv = cls.fused_add_relu(x, b)
            R.output(gv)
        return gv


def test_docstring_example_add_relu_becomes_one_prim_func():
    @I.ir_module
    class Expected:
        @T.prim_func
        def fused_add_relu(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
                           b: T.Buffer((T.int64(4),), "float32"),
                           T_relu: T.Buffer((T.int64("n"), T.int64(4)), "float32")):  # fmt: skip
            T.func_attr({"tir.noalias": True})
            T_add = T.alloc_buffer((n, T.int64(4)), "float32")
            for i0, i1 in T.grid(n, T.int64(4)):
                with T.block("T_add"):
                    v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                    T_add[v_i0, v_i1] = x[v_i0, v_i1] + b[v_i1]
            for i0, i1 in T.grid(n, T.int64(4)):
                with T.block("T_relu"):
                    v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                    T_relu[v_i0, v_i1] = T.max(T_add[v_i0, v_i1], T.float32(0.0))

        @R.function
        def main(x: R.Tensor(("n", 4), "float32"), b: R.Tensor((4,), "float32")):
            n = T.int64()
            with R.dataflow():
                gv = R.call_tir(cls.fused_add_relu, (x, b), out_sinfo=R.Tensor((n, 4), "float32"))
                R.output(gv)
            return gv

    after = FuseTIR()(AddRelu)
    assert_structural_equal(after, Expected)
    assert well_formed(after)
    x, b = _rand(5, 4), _rand(4)
    reference = np.maximum(x + b, 0)
    for mod in (AddRelu, after):
        np.testing.assert_allclose(evaluate(mod, x, b), reference, rtol=1e-6)


def test_fused_prim_func_equals_its_parts_in_the_interpreter():
    prim = FuseTIR()(AddRelu)["fused_add_relu"]
    x, b = _rand(7, 4), _rand(4)
    out = np.zeros((7, 4), "float32")
    tir.interpret(prim, x, b, out)
    tmp, parts = np.zeros_like(out), np.zeros_like(out)
    tir.interpret(AddRelu["add"], x, b, tmp)
    tir.interpret(AddRelu["relu"], tmp, parts)
    np.testing.assert_array_equal(out, parts)


def _pipeline(build, *params):
    bb = BlockBuilder()
    with bb.function("main", list(params)):
        with bb.dataflow():
            out = bb.emit_output(build(bb, *params))
        bb.emit_func_output(out)
    before = AnnotateTIROpPattern()(LegalizeOps()(bb.get()))
    return before, FuseTIR()(FuseOps()(before))


def _kernels(mod: IRModule) -> int:
    return sum(isinstance(f, tir.PrimFunc) for f in mod.functions.values())


def _launches(mod: IRModule) -> int:
    """The number of call_tir bindings in main: kernels launched per run."""
    values = [b.value for block in mod["main"].body.blocks for b in block.bindings]
    return sum(isinstance(v, Call) and v.op is op.call_tir for v in values)


def test_same_prim_func_twice_gets_fresh_variables_and_unique_block_names():
    x = Var("x", TS(("n", 3), "float32"))

    def build(bb, x):
        y = bb.emit(op.add(x, x))
        return op.add(y, x)  # the same legalized PrimFunc again

    _, after = _pipeline(build, x)
    (name,) = [gv.name_hint for gv, f in after.items() if isinstance(f, tir.PrimFunc)]
    prim = after[name]
    blocks: list[str] = []
    loop_vars: list[tir.Var] = []

    def visit(node):
        if isinstance(node, tir.Block) and node.iter_vars:
            blocks.append(node.name_hint)
        if isinstance(node, tir.For):
            loop_vars.append(node.loop_var)

    tir.post_order_visit(prim.body, visit)
    assert sorted(blocks) == ["T_add", "T_add_1"]
    assert len(set(loop_vars)) == len(loop_vars) == 4
    x_np = _rand(4, 3)
    np.testing.assert_allclose(evaluate(after, x_np), 3 * x_np, rtol=1e-6)


def test_symbolic_shapes_are_kept_and_unused_prim_funcs_removed():
    x = Var("x", TS(("n", "m"), "float32"))

    def build(bb, x):
        y = bb.emit(op.exp(x))
        return op.multiply(y, x)

    before, after = _pipeline(build, x)
    assert _kernels(before) == 2 and _kernels(after) == 1
    prim = next(f for f in after.functions.values() if isinstance(f, tir.PrimFunc))
    assert [str(d) for d in prim.params[0].shape] == ["n", "m"]
    assert prim.params[0].shape[0] is prim.params[1].shape[0]  # one var, shared
    for shape in ((2, 3), (5, 1)):
        x_np = _rand(*shape)
        np.testing.assert_allclose(evaluate(after, x_np), np.exp(x_np) * x_np, rtol=1e-6)


def test_symbols_only_inside_compound_dims_are_passed_to_the_fused_kernel():
    # (b * s, 4) rows: no parameter has b or s as a whole dim, so each legalized kernel
    # takes them as scalars (tir_vars); the two still fuse (a GPT-2 step's kernels over
    # past + seq positions and batch * seq rows did not), and the fused kernel takes them
    # as trailing scalars that main passes
    x = Var("x", TS((sym("b") * sym("s"), 4), "float32"))
    shape = Var("shape", TS(("b", "s"), "float32"))

    def build(bb, x, shape):
        return op.multiply(bb.emit(op.exp(x)), x)

    before, after = _pipeline(build, x, shape)
    assert _launches(before) == 2 and _launches(after) == 1
    prim = next(f for f in after.functions.values() if isinstance(f, tir.PrimFunc))
    assert [p.name for p in prim.params[-2:]] == ["b", "s"]
    call = after["main"].body.blocks[0].bindings[-1].value
    assert call.args[2].values == (sym("b"), sym("s"))
    vm = VirtualMachine(unity.compile(after, target="llvm"), unity.cpu())
    x_np = _rand(6, 4)
    got = vm["main"](x_np, np.zeros((2, 3), "float32")).numpy()
    np.testing.assert_allclose(got, np.exp(x_np) * x_np, rtol=1e-6)


def test_function_returning_a_tuple_writes_two_outputs():
    @I.ir_module
    class Before:
        @T.prim_func
        def exp(x: T.Buffer((T.int64(4),), "float32"), y: T.Buffer((T.int64(4),), "float32")):
            T.func_attr({"op_pattern": 0})
            for i in T.serial(T.int64(4)):
                with T.block("exp"):
                    vi = T.axis.spatial(T.int64(4), i)
                    y[vi] = T.exp(x[vi])

        @R.function(private=True)
        def fused_exp_exp(x: R.Tensor((4,), "float32")):
            R.func_attr({"Primitive": True})
            with R.dataflow():
                lv = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
                lv1 = R.call_tir(cls.exp, (lv,), out_sinfo=R.Tensor((4,), "float32"))
                gv = (lv, lv1)
                R.output(gv)
            return gv

        @R.function
        def main(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                gv = cls.fused_exp_exp(x)
                R.output(gv)
            return gv

    after = FuseTIR()(Before)
    prim = after["fused_exp_exp"]
    assert isinstance(prim, tir.PrimFunc) and len(prim.params) == 3
    assert "exp" not in after
    x = _rand(4)
    first, second = evaluate(after, x)
    np.testing.assert_allclose(first, np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(second, np.exp(np.exp(x)), rtol=1e-6)


def test_nothing_to_do_returns_the_same_module():
    mod = IRModule({"exp": AddRelu["relu"]})
    assert FuseTIR()(mod) is mod


def test_primitive_function_calling_a_relax_op_is_rejected():
    @I.ir_module
    class Bad:
        @R.function(private=True)
        def fused(x: R.Tensor((4,), "float32")):
            R.func_attr({"Primitive": True})
            with R.dataflow():
                gv = R.exp(x)
                R.output(gv)
            return gv

        @R.function
        def main(x: R.Tensor((4,), "float32")):
            gv = cls.fused(x)
            return gv

    with pytest.raises(DiagnosticError, match="a fused function may only call call_tir"):
        FuseTIR()(Bad)


def _conv_bn_relu_add():
    """Two convolutions, each followed by a folded batch-norm; a residual add; relu."""
    def f32(*shape):
        return TS(shape, "float32")

    x, w1, w2 = Var("x", f32("n", 4, 6, 6)), Var("w1", f32(4, 4, 3, 3)), Var("w2", f32(4, 4, 3, 3))
    s1, b1, s2, b2 = (Var(name, f32(1, 4, 1, 1)) for name in ("s1", "b1", "s2", "b2"))
    bb = BlockBuilder()
    with bb.function("main", [x, w1, s1, b1, w2, s2, b2]):
        with bb.dataflow():
            y = bb.emit(op.nn.conv2d(x, w1, padding=1))
            y = bb.emit(op.nn.relu(bb.emit(op.add(bb.emit(op.multiply(y, s1)), b1))))
            y = bb.emit(op.nn.conv2d(y, w2, padding=1))
            y = bb.emit(op.add(bb.emit(op.multiply(y, s2)), b2))
            out = bb.emit_output(op.nn.relu(bb.emit(op.add(y, x))))
        bb.emit_func_output(out)
    return AnnotateTIROpPattern()(LegalizeOps()(bb.get()))


def test_conv_bn_relu_add_network_runs_in_two_kernels_with_the_same_results():
    before = _conv_bn_relu_add()
    after = FuseTIR()(FuseOps()(before))
    assert _launches(before) == 9  # conv, multiply, add, relu, conv, multiply, add, add, relu
    assert _launches(after) == 2
    assert _kernels(after) == 2
    assert not any(isinstance(f, Function) and f.attrs.get("Primitive")
                   for f in after.functions.values())  # fmt: skip
    assert well_formed(after)
    inputs = [_rand(3, 4, 6, 6), _rand(4, 4, 3, 3), _rand(1, 4, 1, 1), _rand(1, 4, 1, 1),
              _rand(4, 4, 3, 3), _rand(1, 4, 1, 1), _rand(1, 4, 1, 1)]  # fmt: skip
    results = []
    for mod in (before, after):
        vm = VirtualMachine(unity.compile(mod), unity.cpu())
        results.append(np.asarray(vm["main"](*inputs).numpy()))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(evaluate(after, *inputs), results[0], rtol=1e-5, atol=1e-5)
