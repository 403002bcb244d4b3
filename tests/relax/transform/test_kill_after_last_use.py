"""KillAfterLastUse: `R.memory.kill_tensor` / `kill_storage` right after each last use."""

import numpy as np

import unity
from unity import relax
from unity.ir.structural import assert_structural_equal
from unity.ir.transform import PassContext
from unity.relax import Call
from unity.relax.pipeline import get_pipeline
from unity.relax.transform import KillAfterLastUse, StaticPlanBlockMemory
from unity.relax.vm import memory
from unity.script import from_source
from unity.script import ir as I
from unity.script import relax as R
from unity.script import tir as T

rng = np.random.default_rng(0)


def run(mod, *inputs):
    vm = relax.VirtualMachine(unity.compile(mod, pipeline=None), unity.cpu())
    return vm["main"](*inputs).numpy()


def test_kills_follow_the_last_use():
    @I.ir_module
    class Before:
        @T.prim_func
        def exp(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
            for i, j in T.grid(2, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.exp(A[vi, vj])

        @R.function
        def main(x: R.Tensor((2, 4), "float32")):
            storage = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
            alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
            _ = cls.exp(x, alloc, out_sinfo=R.Tuple())
            alloc1 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
            _1 = cls.exp(alloc, alloc1, out_sinfo=R.Tuple())
            return alloc1

    @I.ir_module
    class Expected:
        @T.prim_func
        def exp(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
            for i, j in T.grid(2, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.exp(A[vi, vj])

        @R.function
        def main(x: R.Tensor((2, 4), "float32")):
            storage = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
            alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
            _2 = R.memory.kill_storage(storage)
            _ = cls.exp(x, alloc, out_sinfo=R.Tuple())
            alloc1 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
            _1 = cls.exp(alloc, alloc1, out_sinfo=R.Tuple())
            _3 = R.memory.kill_tensor(alloc)
            return alloc1

    after = KillAfterLastUse()(Before)
    assert_structural_equal(after, Expected)
    assert [b.var.name_hint for b in after["main"].body.blocks[0].bindings][2] == "_2"
    assert_structural_equal(from_source(after.script()), after)
    x = rng.standard_normal((2, 4)).astype("float32") - 2
    for mod in (Before, after):
        np.testing.assert_allclose(run(mod, x), np.exp(np.exp(x)), rtol=1e-6)


def test_aliases_extend_life_and_returned_tensors_live_on():
    @I.ir_module
    class Before:
        @T.prim_func
        def exp(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
            for i, j in T.grid(2, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.exp(A[vi, vj])

        @R.function
        def main(x: R.Tensor((2, 4), "float32")):
            storage = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
            a = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
            _ = cls.exp(x, a, out_sinfo=R.Tuple())
            t = (a, x)
            lv = t[0]
            storage1 = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
            b = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
            _1 = cls.exp(lv, b, out_sinfo=R.Tuple())
            return b

    @I.ir_module
    class Expected:
        @T.prim_func
        def exp(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
            for i, j in T.grid(2, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.exp(A[vi, vj])

        @R.function
        def main(x: R.Tensor((2, 4), "float32")):
            storage = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
            a = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
            _2 = R.memory.kill_storage(storage)
            _ = cls.exp(x, a, out_sinfo=R.Tuple())
            t = (a, x)
            lv = t[0]
            storage1 = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
            b = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
            _3 = R.memory.kill_storage(storage1)
            _1 = cls.exp(lv, b, out_sinfo=R.Tuple())
            _4 = R.memory.kill_tensor(a)  # after the last use of its alias lv; b is returned
            return b

    after = KillAfterLastUse()(Before)
    assert_structural_equal(after, Expected)
    x = rng.standard_normal((2, 4)).astype("float32") - 2
    first = run(after, x)
    np.testing.assert_allclose(first, np.exp(np.exp(x)), rtol=1e-6)
    vm = relax.VirtualMachine(unity.compile(after, pipeline=None), unity.cpu())
    kept = vm["main"](x).numpy().copy()
    vm["main"](x + 1)  # the returned tensor's storage must not be reused under it
    np.testing.assert_array_equal(kept, first)


def test_tensor_used_in_an_if_dies_after_the_if():
    @I.ir_module
    class Before:
        @T.prim_func
        def exp(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
            for i, j in T.grid(2, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.exp(A[vi, vj])

        @R.function
        def main(x: R.Tensor((2, 4), "float32"), c: R.Prim("bool")):
            storage = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
            a = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
            _ = cls.exp(x, a, out_sinfo=R.Tuple())
            if c:
                out = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
                _1 = cls.exp(a, out, out_sinfo=R.Tuple())
                r = out
            else:
                r = x
            return r

    after = KillAfterLastUse()(Before)
    bindings = after["main"].body.blocks[0].bindings
    kinds = [b.value.op for b in bindings if isinstance(b.value, Call)]
    assert kinds[-1] is memory.kill_tensor and bindings[-1].value.args[0] is bindings[1].var
    assert bindings[-2].value.__class__.__name__ == "If"
    x = rng.standard_normal((2, 4)).astype("float32") - 2
    for cond in (True, False):
        np.testing.assert_allclose(run(after, x, cond), np.exp(np.exp(x)) if cond else x, rtol=1e-6)


def test_nothing_to_kill_returns_the_module():
    @I.ir_module
    class Plain:
        @T.prim_func
        def exp(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
            for i, j in T.grid(2, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.exp(A[vi, vj])

        @R.function
        def main(x: R.Tensor((2, 4), "float32")):
            alloc = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
            _ = cls.exp(x, alloc, out_sinfo=R.Tuple())
            return alloc

    assert KillAfterLastUse()(Plain) is Plain
    planned = StaticPlanBlockMemory()(Plain)
    assert planned is Plain  # the only allocation is the output
    mod = get_pipeline("default", 1)(Plain)
    assert KillAfterLastUse()(mod) is mod  # already killed: idempotent


def test_pipeline_kills_every_planned_object_once():
    x = relax.Var("x", relax.TensorStructInfo(("n", 8), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        h = bb.emit(relax.op.nn.softmax(relax.op.exp(x)))  # reductions do not fuse together
        h = bb.emit(relax.op.nn.softmax(relax.op.negative(h)))
        bb.emit_func_output(bb.emit(relax.op.add(relax.op.sum(h, axis=[1], keepdims=True), x)))
    with PassContext(opt_level=1):
        lowered = unity.relax.transform.LegalizeOps()(bb.get())
        lowered = get_pipeline("default", 1)(lowered)
    values = [b.value for block in lowered["main"].body.blocks for b in block.bindings]
    ops = [v.op for v in values if isinstance(v, Call)]
    assert ops.count(memory.alloc_tensor) > ops.count(memory.alloc_storage) >= 1
    assert ops.count(memory.kill_tensor) == ops.count(memory.alloc_tensor)
    assert ops.count(memory.kill_storage) == ops.count(memory.alloc_storage)
    vm = relax.VirtualMachine(unity.compile(bb.get()), unity.cpu())
    for n in (1, 3, 17):
        a = rng.standard_normal((n, 8)).astype("float32")
        # atol: sum(softmax) ~ 1 plus x ~ -1 cancels, leaving 1 ulp of 1.0 (1.2e-7)
        np.testing.assert_allclose(vm["main"](a).numpy(), reference(a), rtol=1e-5, atol=1e-6)


def softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def reference(a):
    return softmax(-softmax(np.exp(a))).sum(1, keepdims=True) + a
