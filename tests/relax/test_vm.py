"""End to end: `unity.compile` + `relax.VirtualMachine`, export/load, input checks."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import unity
from unity import relax, tir, topi
from unity.relax import op
from unity.relax.expr import If, SeqExpr
from unity.runtime.vm_executable import Executable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
rng = np.random.default_rng(0)


def tensor(shape, dtype="float32"):
    return relax.Var("x", relax.TensorStructInfo(shape, dtype))


def softmax_sum_module():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("batch", "seq", 256), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(op.nn.softmax(x, axis=-1))
            out = bb.emit_output(op.sum(y, axis=[1]))
        bb.emit_func_output(out)
    return bb.get()


def softmax_sum_ref(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).sum(1)


@pytest.fixture(scope="module")
def journey3():
    return unity.compile(softmax_sum_module(), target="llvm")


def test_journey3_any_size(journey3):
    vm = relax.VirtualMachine(journey3, unity.cpu())
    for batch, seq in [(1, 7), (8, 128), (3, 1)]:
        a = rng.random((batch, seq, 256), dtype=np.float32)
        out = vm["main"](a)
        assert isinstance(out, unity.runtime.Tensor) and out.shape == (batch, 256)
        np.testing.assert_allclose(out.numpy(), softmax_sum_ref(a), rtol=1e-5, atol=1e-5)
    out = vm["main"](unity.runtime.tensor(a))  # a Tensor works as well
    np.testing.assert_allclose(out.numpy(), softmax_sum_ref(a), rtol=1e-5, atol=1e-5)


def test_a_function_taken_from_a_vm_keeps_its_kernels_alive():
    """``relax.VirtualMachine(unity.compile(mod), dev)["main"]`` with nothing else kept: the
    executable and the VM are collected, the function still runs (it crashed the process
    once: its kernels' code was freed with the executable)."""
    code = """
import gc, numpy as np, unity
from unity import relax
from unity.relax import op
bb = relax.BlockBuilder()
x = relax.Var("x", relax.TensorStructInfo(("n", 256), "float32"))
with bb.function("main", [x]):
    with bb.dataflow():
        out = bb.emit_output(op.exp(x))
    bb.emit_func_output(out)
main = relax.VirtualMachine(unity.compile(bb.get(), target="llvm"), unity.cpu())["main"]
gc.collect()
a = np.linspace(-1, 1, 512, dtype=np.float32).reshape(2, 256)
np.testing.assert_allclose(main(a).numpy(), np.exp(a), rtol=1e-5)
print("ran")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)  # a crash stays there
    assert done.returncode == 0 and "ran" in done.stdout, done.stderr[-2000:]


def test_a_numpy_scalar_is_a_0d_input():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(op.multiply(x, x))
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(unity.compile(bb.get(), target="llvm"), unity.cpu())
    assert vm["main"](np.float32(3.0)).numpy().item() == 9.0


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (np.zeros((2, 256), "float32"), "parameter 0 'x': expected rank 3"),
        (np.zeros((2, 3, 255), "float32"), "parameter 0 'x': expected a float32 tensor of shape (batch, seq, 256), got (2, 3, 255): dim 2 must be 256"),
        (np.zeros((2, 3, 256), "float64"), "parameter 0 'x': expected dtype float32, got float64"),
        ([1.0, 2.0], "parameter 0 'x': expected a float32 tensor"),
    ],
)  # fmt: skip
def test_bad_inputs_name_the_parameter(journey3, bad, message):
    vm = relax.VirtualMachine(journey3, unity.cpu())
    with pytest.raises(ValueError) as err:
        vm["main"](bad)
    assert message in str(err.value)
    with pytest.raises(ValueError, match="expected 1 inputs"):
        vm["main"]()


def test_symbol_disagreement_is_caught_before_any_kernel():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 4), "float32"))
    y = relax.Var("y", relax.TensorStructInfo(("n", 4), "float32"))
    with bb.function("main", [x, y]):
        bb.emit_func_output(bb.emit(op.add(x, y)))
    vm = relax.VirtualMachine(unity.compile(bb.get()), unity.cpu())
    a, b = rng.random((3, 4), dtype=np.float32), rng.random((3, 4), dtype=np.float32)
    np.testing.assert_allclose(vm["main"](a, b).numpy(), a + b)
    strided = rng.random((4, 3), dtype=np.float32).T  # not C-contiguous: copied on entry
    np.testing.assert_allclose(vm["main"](strided, b).numpy(), strided + b)
    with pytest.raises(
        ValueError,
        match=r"parameter 1 'y'.*dim 0 must be n = 3 \(n = 3 from parameter 0 'x' dim 0\)",
    ):
        vm["main"](a, np.zeros((5, 4), "float32"))


def test_expression_dims_are_checked():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n",), "float32"))
    y = relax.Var("y", relax.TensorStructInfo((relax.sym("n") * 2,), "float32"))
    with bb.function("main", [x, y]):
        bb.emit_func_output(bb.emit(op.concat([x, x])))
    vm = relax.VirtualMachine(unity.compile(bb.get()), unity.cpu())
    a = np.arange(3, dtype="float32")
    np.testing.assert_array_equal(vm["main"](a, np.zeros(6, "float32")).numpy(), np.r_[a, a])
    with pytest.raises(ValueError, match=r"parameter 1 'y'.*dim 0 must be 2\*n = 6"):
        vm["main"](a, np.zeros(5, "float32"))


def mlp_module(w1, b1, w2, b2):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("batch", w1.shape[1]), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(op.nn.linear(x, relax.const(w1), relax.const(b1)))
            h = bb.emit(op.nn.relu(h))
            out = bb.emit_output(op.nn.linear(h, relax.const(w2), relax.const(b2)))
        bb.emit_func_output(out)
    return bb.get()


def test_mlp_symbolic_batch():
    w1, b1 = (
        rng.standard_normal((32, 16), dtype=np.float32),
        rng.standard_normal(32, dtype=np.float32),
    )
    w2, b2 = (
        rng.standard_normal((10, 32), dtype=np.float32),
        rng.standard_normal(10, dtype=np.float32),
    )
    ex = unity.compile(mlp_module(w1, b1, w2, b2), target="llvm")
    assert len(ex.constants) == 4
    vm = relax.VirtualMachine(ex, unity.cpu())
    for batch in (1, 7, 64):
        a = rng.standard_normal((batch, 16), dtype=np.float32)
        ref = np.maximum(a @ w1.T + b1, 0) @ w2.T + b2
        np.testing.assert_allclose(vm["main"](a).numpy(), ref, rtol=1e-4, atol=1e-4)


def test_cnn_symbolic_batch():
    w = rng.standard_normal((4, 3, 3, 3), dtype=np.float32)
    fc = rng.standard_normal((5, 64), dtype=np.float32)
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 3, 8, 8), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            c = bb.emit(op.nn.conv2d(x, relax.const(w), padding=1))
            r = bb.emit(op.nn.relu(c))
            p = bb.emit(op.nn.max_pool2d(r, pool_size=2))
            f = bb.emit(op.reshape(p, (relax.sym("n"), 64)))
            out = bb.emit_output(op.nn.linear(f, relax.const(fc)))
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(unity.compile(bb.get()), unity.cpu())
    for batch in (1, 7, 64):
        a = rng.standard_normal((batch, 3, 8, 8), dtype=np.float32)
        conv = topi.testing.conv2d_nchw_python(a, w, 1, 1)
        pooled = np.maximum(conv, 0).reshape(batch, 4, 4, 2, 4, 2).max(axis=(3, 5))
        ref = pooled.reshape(batch, 64) @ fc.T
        np.testing.assert_allclose(vm["main"](a).numpy(), ref, rtol=1e-4, atol=1e-4)


def test_shape_expressions_are_computed_once_per_call():
    """Over a symbolic size, each compound shape expression (an allocation's size, a
    view's end, a kernel's argument) is one local of the generated code, computed where
    first needed and reused: two convs of stride 2 then 1 over ``(n, 3, h, w)`` divide
    ``h - 1`` and ``w - 1`` by 2 once each.  Results match the reference at two sizes."""
    import re

    w1 = rng.standard_normal((8, 3, 3, 3), dtype=np.float32)
    w2 = rng.standard_normal((8, 8, 3, 3), dtype=np.float32)
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 3, "h", "w"), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            c1 = bb.emit(op.nn.relu(op.nn.conv2d(x, relax.const(w1), strides=2, padding=1)))
            c2 = bb.emit(op.nn.relu(op.nn.conv2d(c1, relax.const(w2), padding=1)))
            out = bb.emit_output(op.nn.conv2d(c2, relax.const(w2), padding=1))
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(unity.compile(bb.get()), unity.cpu())
    source = vm._namespace["__source__"]
    assert len(re.findall(r"// 2\b", source)) == 2, source
    for n, h, w in ((1, 9, 10), (2, 16, 7)):
        a = rng.standard_normal((n, 3, h, w), dtype=np.float32)
        ref = np.maximum(topi.testing.conv2d_nchw_python(a, w1, 2, 1), 0)
        ref = np.maximum(topi.testing.conv2d_nchw_python(ref, w2, 1, 1), 0)
        ref = topi.testing.conv2d_nchw_python(ref, w2, 1, 1)
        np.testing.assert_allclose(vm["main"](a).numpy(), ref, rtol=1e-4, atol=1e-4)


def test_kernel_shape_var_inside_an_expression():
    # flatten's kernel sees (n * 4,): the VM recovers n for the kernel from the dim
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 4), "float32"))
    with bb.function("main", [x]):
        f = bb.emit(op.flatten(x))
        bb.emit_func_output(bb.emit(op.exp(f)))
    vm = relax.VirtualMachine(unity.compile(bb.get()), unity.cpu())
    a = rng.random((3, 4), dtype=np.float32)
    np.testing.assert_allclose(vm["main"](a).numpy(), np.exp(a).ravel(), rtol=1e-6)


def test_intermediates_come_from_a_reused_pool(journey3):
    main = journey3.program["functions"]["main"]
    allocs = [ins for ins in main["code"] if ins[0] in ("alloc", "storage")]
    # the softmax result (planned into a storage) is pooled, the output is not
    assert [(a[0], a[-1]) for a in allocs] == [("storage", 1), ("alloc", 0)]
    assert ["free", allocs[0][1]] in main["code"]
    vm = relax.VirtualMachine(journey3, unity.cpu())
    a = rng.random((2, 5, 256), dtype=np.float32)
    first = vm["main"](a).numpy()
    ((size, entries),) = vm.pool.free.items()
    assert size == 2 * 5 * 256 * 4 and len(entries) == 1
    ptr = entries[0][1]
    second = vm["main"](a)
    assert vm.pool.free[size][0][1] == ptr  # the same storage served the second call
    np.testing.assert_array_equal(first, second.numpy())


def test_tuples_match_cast_if_and_calls():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n",), "float32"))
    with bb.function("double", [x]):
        bb.emit_func_output(bb.emit(op.add(x, x)))
    double = bb.get().get_global_var("double")
    x = relax.Var("x", relax.TensorStructInfo(None, "float32", ndim=1))
    c = relax.Var("c", relax.TensorStructInfo((), "bool"))
    with bb.function("main", [x, c]):
        y = bb.match_cast(x, relax.TensorStructInfo(("m",), "float32"))
        d = bb.emit(relax.Call(double, (y,)))
        e = bb.emit(op.exp(y))
        pick = bb.emit(If(c, SeqExpr((), d), SeqExpr((), e)))
        pair = bb.emit(relax.Tuple((d, e)))
        first = bb.emit(relax.TupleGetItem(pair, 0))
        bb.emit_func_output(relax.Tuple((pick, first, relax.ShapeExpr((relax.sym("m") * 2,)))))
    vm = relax.VirtualMachine(unity.compile(bb.get()), unity.cpu())
    a = np.arange(3, dtype="float32")
    picked, first, shape = vm["main"](a, np.array(True))
    np.testing.assert_array_equal(picked.numpy(), a * 2)
    np.testing.assert_array_equal(first.numpy(), a * 2)
    assert shape == (6,)
    picked, _, _ = vm["main"](a, np.array(False))
    np.testing.assert_allclose(picked.numpy(), np.exp(a), rtol=1e-6)
    with pytest.raises(ValueError, match="parameter 0 'x': expected rank 1"):
        vm["main"](np.zeros((2, 2), "float32"), np.array(True))


def test_match_cast_checks_at_run_time():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n",), "float32"))
    with bb.function("main", [x]):
        y = bb.match_cast(x, relax.TensorStructInfo((4,), "float32"))
        bb.emit_func_output(bb.emit(op.exp(y)))
    vm = relax.VirtualMachine(unity.compile(bb.get()), unity.cpu())
    assert vm["main"](np.zeros(4, "float32")).numpy().tolist() == [1.0] * 4
    with pytest.raises(ValueError, match="match_cast of .*dim 0 must be 4"):
        vm["main"](np.zeros(3, "float32"))


def test_unlowered_op_is_a_clear_error():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n",), "float32"))
    with bb.function("main", [x]):
        bb.emit_func_output(bb.emit(op.exp(x)))
    with pytest.raises(Exception, match="operator relax.exp has no VM lowering"):
        unity.compile(bb.get(), pipeline=None)


def test_export_and_load_in_a_fresh_process(journey3, tmp_path):
    path = str(tmp_path / "model.so")
    journey3.export_library(path)
    script = f"""
import sys, numpy as np, unity
ex = unity.runtime.load_module({path!r})
from unity.runtime.vm import VirtualMachine
vm = VirtualMachine(ex, unity.cpu())
loaded = sorted(m for m in sys.modules if m.startswith(("unity.relax", "unity.tir", "unity.codegen", "sympy", "llvmlite")))
assert not loaded, loaded
outs = []
for batch, seq in [(1, 7), (8, 128)]:
    a = np.random.default_rng(batch).random((batch, seq, 256), dtype=np.float32)
    outs.append(vm["main"](a).numpy())
try:
    vm["main"](np.zeros((2, 3), "float32"))
except ValueError as err:
    print("ERR", err)
# journey 3 as the user types it
from unity import relax
vm = relax.VirtualMachine(unity.runtime.load_module("model.so"), unity.cpu())  # relative to the cwd
outs.append(vm["main"](np.ones((2, 3, 256), "float32")).numpy())
np.save({str(tmp_path / "outs.npy")!r}, np.concatenate([o.ravel() for o in outs]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": ROOT}, cwd=tmp_path, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "ERR main: parameter 0 'x': expected rank 3" in done.stdout
    got = np.load(tmp_path / "outs.npy")
    refs = [
        softmax_sum_ref(np.random.default_rng(b).random((b, s, 256), dtype=np.float32))
        for b, s in [(1, 7), (8, 128)]
    ]
    refs.append(np.full((2, 256), 3.0, "float32") / 256 * 1)
    np.testing.assert_allclose(got, np.concatenate([r.ravel() for r in refs]), rtol=1e-5, atol=1e-6)


def test_load_module_of_kernels_only_is_a_module(tmp_path):
    lib = unity.build(topi_exp_func())
    lib.export_library(str(tmp_path / "k.so"))
    loaded = unity.runtime.load_module(str(tmp_path / "k.so"))
    assert not isinstance(loaded, Executable) and "main" in loaded


def topi_exp_func():
    from unity import te

    a = te.placeholder((4,), "float32", name="A")
    return te.create_prim_func([a, topi.exp(a)])


def test_bytecode_has_no_ir_objects(journey3):
    import json

    json.dumps(journey3.program)  # plain JSON: ints, strings, lists
    text = journey3.as_text()
    assert 'kernel "softmax"' in text and "free" in text


def test_tuple_output_kernel_with_tir_vars():
    from unity import te

    def two(a, m):  # m reaches the kernel as a scalar parameter (call_tir's tir_vars)
        return [
            topi.exp(a),
            te.compute(
                (m,), lambda i: a[0] + te.const(1.0, "float32") * i.astype("float32"), name="fill"
            ),
        ]

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n",), "float32"))
    y = relax.Var("y", relax.TensorStructInfo(("m",), "int8"))
    with bb.function("main", [x, y]):
        pair = bb.emit(bb.call_te(two, x, relax.sym("m")))
        bb.emit_func_output(bb.emit(relax.TupleGetItem(pair, 1)))
    vm = relax.VirtualMachine(unity.compile(bb.get()), unity.cpu())
    a = np.array([2.0, 3.0], "float32")
    out = vm["main"](a, np.zeros(5, "int8"))
    np.testing.assert_allclose(out.numpy(), 2.0 + np.arange(5, dtype="float32"))


def _pair_then_matmul():
    """A kernel of two outputs (a tuple of views of two storages), then a transpose and a
    matmul of its parts over a symbolic ``n``."""
    from unity import te

    def two(a):
        return [topi.exp(a), te.compute(a.shape, lambda i, j: a[i, j] * 2.0, name="twice")]

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 8), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            pair = bb.emit(bb.call_te(two, x))
            a = bb.emit(relax.TupleGetItem(pair, 0))
            b = bb.emit(relax.TupleGetItem(pair, 1))
            out = bb.emit_output(op.matmul(a, op.permute_dims(b)))
        bb.emit_func_output(out)
    return bb.get()


def test_kernels_take_packed_arguments_and_known_pointers():
    """The three kernel calls pack their arguments into the call's slots at once and run
    as one native run of their packed entries; the data pointer of a view is its
    storage's plus the offset and a tuple part's is the part's (numpy is asked only for
    the input's and the two storages' and output's); a library without a run loop calls
    each packed entry from Python, one without packed entries (exported before them) each
    kernel argument by argument.  All three match numpy at two sizes."""
    ex = unity.compile(_pair_then_matmul())
    vm = relax.VirtualMachine(ex, unity.cpu())
    source = vm._namespace["__source__"]
    assert source.count("PACK") == 1 and source.count("KRUN") == 1, source
    assert [p.entries for p in vm._namespace["__plans__"]] == [3]
    assert source.count("PTR(") == 4, source
    runner, ex.kernels.run_kernels = ex.kernels.run_kernels, None  # a library without a run loop
    each = relax.VirtualMachine(ex, unity.cpu())
    ex.kernels.run_kernels = runner
    each_source = each._namespace["__source__"]
    assert each_source.count("PACK") == 3 and "KRUN" not in each_source, each_source
    for name in ex.kernels.function_names:  # as a library of before packed entries loads
        del ex.kernels.metadata["functions"][name]["packed_symbol"]
    ex.kernels._functions.clear()
    old = relax.VirtualMachine(ex, unity.cpu())
    assert "PACK" not in old._namespace["__source__"]
    for n in (3, 9):
        a = rng.standard_normal((n, 8), dtype=np.float32)
        ref = np.exp(a) @ (2 * a).T
        np.testing.assert_allclose(vm["main"](a).numpy(), ref, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(each["main"](a).numpy(), ref, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(old["main"](a).numpy(), ref, rtol=1e-5, atol=1e-5)


def _plus_one_checked():
    """exp, then a kernel adding 1 that asserts at most 4 rows, then exp: three kernels
    over ``m`` rows."""
    n = tir.SizeVar("n")
    a, b = tir.decl_buffer((n, 4), "float32", "A"), tir.decl_buffer((n, 4), "float32", "B")
    i, j = tir.Var("i"), tir.Var("j")
    store = tir.BufferStore(b, a[i, j] + tir.const(1.0, "float32"), (i, j))
    rows = tir.For(i, tir.const(0), n, tir.ForKind.SERIAL,
                   tir.For(j, tir.const(0), tir.const(4), tir.ForKind.SERIAL, store))  # fmt: skip
    plus_one = tir.PrimFunc((a, b), tir.AssertStmt(tir.le(n, tir.const(4)), "at most 4 rows", rows))
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("m", 4), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            e = bb.emit(op.exp(x))
            gv = bb.add_func(plus_one, "plus_one")
            p = bb.emit(op.call_tir(gv, (e,), relax.TensorStructInfo(("m", 4), "float32")))
            out = bb.emit_output(op.exp(p))
        bb.emit_func_output(out)
    return bb.get()


def test_a_run_of_kernels_stops_at_the_failing_one_and_names_it():
    """The three kernels run as one native run; the middle one failing its assert raises
    its own message (not the first's or the last's), and the intermediates are given back
    to the pool after the run (its kernels still use them while it runs)."""
    vm = relax.VirtualMachine(unity.compile(_plus_one_checked()), unity.cpu())
    source = vm._namespace["__source__"]
    assert [p.entries for p in vm._namespace["__plans__"]] == [3]
    assert source.index("KRUN") < source.index("GIVE"), source
    x = rng.standard_normal((3, 4), dtype=np.float32)
    np.testing.assert_allclose(vm["main"](x).numpy(), np.exp(np.exp(x) + 1), rtol=1e-5)
    with pytest.raises(RuntimeError, match=r"^plus_one: at most 4 rows$"):
        vm["main"](np.zeros((5, 4), "float32"))
    np.testing.assert_allclose(vm["main"](x).numpy(), np.exp(np.exp(x) + 1), rtol=1e-5)


def test_shape_and_prim_parameters():
    bb = relax.BlockBuilder()
    s = relax.Var("s", relax.ShapeStructInfo(("a", 3)))
    k = relax.Var("k", relax.PrimStructInfo("int64", relax.sym("k")))
    x = relax.Var("x", relax.TensorStructInfo(("a", 3), "float32"))
    with bb.function("main", [s, k, x]):
        bb.emit_func_output(relax.Tuple((relax.ShapeExpr((relax.sym("a") * relax.sym("k"),)), x)))
    with unity.transform.PassContext(opt_level=3):
        ex = unity.compile(bb.get())
    vm = relax.VirtualMachine(ex, unity.cpu())
    shape, same = vm["main"]((2, 3), 5, np.zeros((2, 3), "float32"))
    assert shape == (10,) and same.shape == (2, 3)
    with pytest.raises(ValueError, match=r"parameter 2 'x'.*dim 0 must be a = 2"):
        vm["main"]((2, 3), 5, np.zeros((4, 3), "float32"))
    with pytest.raises(ValueError, match=r"parameter 1 'k': expected a int64 scalar"):
        vm["main"]((2, 3), 1.5, np.zeros((2, 3), "float32"))


def test_time_evaluator_and_malformed_bytecode(journey3):
    vm = relax.VirtualMachine(journey3, unity.cpu())
    result = vm.time_evaluator("main", unity.cpu(), number=2, repeat=2)(
        np.ones((1, 2, 256), "float32")
    )
    assert len(result.results) == 2 and result.mean > 0
    program = {"version": 1, "functions": {"main": {**journey3.program["functions"]["main"]}}}
    program["functions"]["main"]["code"] = [["alloc", "1; import os", "float32", [4], 1]]
    with pytest.raises(ValueError, match="malformed instruction"):
        relax.VirtualMachine(Executable(program, [], journey3.kernels), unity.cpu())
    with pytest.raises(KeyError, match="no function 'other'"):
        vm["other"]


def test_reexport_of_a_loaded_executable(journey3, tmp_path):
    first, second = str(tmp_path / "a.so"), str(tmp_path / "b.so")
    journey3.export_library(first)
    loaded = unity.runtime.load_module(first)
    assert isinstance(loaded, Executable) and loaded.program == journey3.program
    loaded.export_library(second)
    assert os.path.getsize(second) == os.path.getsize(first)
    vm = relax.VirtualMachine(unity.runtime.load_module(second), unity.cpu())
    a = rng.random((2, 3, 256), dtype=np.float32)
    np.testing.assert_allclose(vm["main"](a).numpy(), softmax_sum_ref(a), rtol=1e-5, atol=1e-6)


def test_one_function_called_from_two_threads_at_once():
    """Two threads calling the same function at different sizes (ctypes releases the GIL
    while a kernel runs, so the calls interleave) each get their own results: each call
    takes its own storage from the pool and packs its arguments into its own slots."""
    import threading

    vm = relax.VirtualMachine(unity.compile(_pair_then_matmul()), unity.cpu())
    f = vm["main"]
    errors = []

    def work(n):
        a = rng.standard_normal((n, 8), dtype=np.float32)
        want = np.exp(a) @ (2 * a).T
        for _ in range(60):
            got = f(a).numpy()
            if not np.allclose(got, want, rtol=1e-5, atol=1e-5):
                errors.append((n, float(np.abs(got - want).max())))

    threads = [threading.Thread(target=work, args=(n,)) for n in (37, 64)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
