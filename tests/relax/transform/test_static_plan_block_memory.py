"""StaticPlanBlockMemory: intermediates with disjoint lifetimes share `R.memory` storage."""

import numpy as np
import pytest

import unity
from unity import relax, topi
from unity.ir.structural import assert_structural_equal
from unity.ir.transform import PassContext
from unity.relax import Call, op
from unity.relax.pipeline import get_pipeline
from unity.relax.transform import StaticPlanBlockMemory
from unity.relax.vm import memory
from unity.script import from_source
from unity.script import ir as I
from unity.script import relax as R
from unity.script import tir as T

rng = np.random.default_rng(0)


def run(mod, *inputs):
    """Compile `mod` as it is (no pipeline) and run main."""
    vm = relax.VirtualMachine(unity.compile(mod, pipeline=None), unity.cpu())
    return vm["main"](*inputs).numpy()


def calls(mod, target_op, func="main"):
    return [
        b.value
        for block in mod[func].body.blocks
        for b in block.bindings
        if isinstance(b.value, Call) and b.value.op is target_op
    ]


def test_chain_reuses_dead_storage_and_leaves_the_output():
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
            alloc = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
            _ = cls.exp(x, alloc, out_sinfo=R.Tuple())
            alloc1 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
            _1 = cls.exp(alloc, alloc1, out_sinfo=R.Tuple())
            alloc2 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
            _2 = cls.exp(alloc1, alloc2, out_sinfo=R.Tuple())
            alloc3 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
            _3 = cls.exp(alloc2, alloc3, out_sinfo=R.Tuple())
            return alloc3

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
            _ = cls.exp(x, alloc, out_sinfo=R.Tuple())
            storage1 = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
            alloc1 = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
            _1 = cls.exp(alloc, alloc1, out_sinfo=R.Tuple())
            alloc2 = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
            _2 = cls.exp(alloc1, alloc2, out_sinfo=R.Tuple())
            alloc3 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
            _3 = cls.exp(alloc2, alloc3, out_sinfo=R.Tuple())
            return alloc3

    after = StaticPlanBlockMemory()(Before)
    assert_structural_equal(after, Expected)
    assert_structural_equal(from_source(after.script()), after)  # prints and parses back
    x = rng.standard_normal((2, 4)).astype("float32") - 3
    reference = np.exp(np.exp(np.exp(np.exp(x))))
    for mod in (Before, after):
        np.testing.assert_allclose(run(mod, x), reference, rtol=1e-5)


@I.ir_module
class Sizes:
    """Tensors of 16, 64, 32 and 128 bytes: a bigger one grows a dead storage, a smaller fits."""

    @T.prim_func
    def f(A: T.Buffer((4,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi % 4] + T.float32(1)

    @T.prim_func
    def g(A: T.Buffer((16,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + A[vi + 8]

    @T.prim_func
    def h(A: T.Buffer((8,), "float32"), B: T.Buffer((32,), "float32")):
        for i in range(32):
            with T.block("B"):
                vi = T.axis.spatial(32, i)
                B[vi] = A[vi % 8] * T.float32(2)

    @T.prim_func
    def k(A: T.Buffer((32,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] - A[vi + 28]

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        a = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0))
        _ = cls.k(R.const(np.arange(32, dtype="float32")), a, out_sinfo=R.Tuple())
        b = R.builtin.alloc_tensor(R.shape([16]), R.dtype("float32"), R.prim_value(0))
        _1 = cls.f(a, b, out_sinfo=R.Tuple())
        c = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0))
        _2 = cls.g(b, c, out_sinfo=R.Tuple())
        d = R.builtin.alloc_tensor(R.shape([32]), R.dtype("float32"), R.prim_value(0))
        _3 = cls.h(c, d, out_sinfo=R.Tuple())
        out = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0))
        _4 = cls.k(d, out, out_sinfo=R.Tuple())
        return out


def test_storage_grows_to_the_largest_tensor_it_holds():
    after = StaticPlanBlockMemory()(Sizes)
    storages = calls(after, memory.alloc_storage)
    tensors = calls(after, memory.alloc_tensor)
    # a (16 B) dies at b; c (32 B) takes a's storage, grown to 32 B; d (128 B) takes b's
    # storage (64 B, dead after c), grown to 128 B
    assert [int(s.args[0].values[0]) for s in storages] == [32, 128]
    assert [t.args[0] for t in tensors] == [storages_var(after, 0), storages_var(after, 1)] * 2
    x = np.zeros(4, "float32")
    np.testing.assert_array_equal(run(after, x), run(Sizes, x))


def storages_var(mod, i):
    bindings = [b for block in mod["main"].body.blocks for b in block.bindings]
    return [b.var for b in bindings if isinstance(b.value, Call) and b.value.op is memory.alloc_storage][i]


def test_upper_bound_gives_a_constant_size_storage():
    @I.ir_module
    class Before:
        @T.prim_func
        def neg(a: T.handle, b: T.handle):
            n = T.int64()
            A = T.match_buffer(a, (n, 4), "float32")
            B = T.match_buffer(b, (n, 4), "float32")
            for i, j in T.grid(n, T.int64(4)):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.float32(0) - A[vi, vj]

        @R.function
        def main(x: R.Tensor(("n", 4), "float32")):
            n = T.int64()
            R.func_attr({"tir_var_upper_bound": {"n": 8}})
            alloc = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0))
            _ = cls.neg(x, alloc, out_sinfo=R.Tuple())
            alloc1 = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0))
            _1 = cls.neg(alloc, alloc1, out_sinfo=R.Tuple())
            return alloc1

    @I.ir_module
    class Expected:
        @T.prim_func
        def neg(a: T.handle, b: T.handle):
            n = T.int64()
            A = T.match_buffer(a, (n, 4), "float32")
            B = T.match_buffer(b, (n, 4), "float32")
            for i, j in T.grid(n, T.int64(4)):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.float32(0) - A[vi, vj]

        @R.function
        def main(x: R.Tensor(("n", 4), "float32")):
            n = T.int64()
            R.func_attr({"tir_var_upper_bound": {"n": 8}})
            storage = R.memory.alloc_storage(R.shape([128]), R.prim_value(0), R.str("global"), R.dtype("float32"))
            alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([n, 4]), R.dtype("float32"))
            _ = cls.neg(x, alloc, out_sinfo=R.Tuple())
            alloc1 = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0))
            _1 = cls.neg(alloc, alloc1, out_sinfo=R.Tuple())
            return alloc1

    after = StaticPlanBlockMemory()(Before)
    assert_structural_equal(after, Expected)
    for n in (1, 5, 8):
        x = rng.standard_normal((n, 4)).astype("float32")
        np.testing.assert_array_equal(run(after, x), x)
    with pytest.raises(RuntimeError, match="needs bytes up to 144, but the storage has 128"):
        run(after, np.zeros((9, 4), "float32"))  # past the bound: refused, never overrun


@I.ir_module
class Dynamic:
    """Unbounded `n`: (n,) tensors of any dtype share storages of 4 * n bytes."""

    @T.prim_func
    def neg(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = T.float32(0) - A[vi]

    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        a = R.builtin.alloc_tensor(R.shape([n]), R.dtype("float32"), R.prim_value(0))
        _ = cls.neg(x, a, out_sinfo=R.Tuple())
        b = R.builtin.alloc_tensor(R.shape([n]), R.dtype("float32"), R.prim_value(0))
        _1 = cls.neg(a, b, out_sinfo=R.Tuple())
        c = R.builtin.alloc_tensor(R.shape([n]), R.dtype("float32"), R.prim_value(0))
        _2 = cls.neg(b, c, out_sinfo=R.Tuple())
        d = R.builtin.alloc_tensor(R.shape([n]), R.dtype("int32"), R.prim_value(0))
        _3 = cls.neg(c, d, out_sinfo=R.Tuple())
        return c


def test_unbounded_symbolic_sizes_share_storage_when_sympy_proves_it():
    @I.ir_module
    class Expected:
        @T.prim_func
        def neg(a: T.handle, b: T.handle):
            n = T.int64()
            A = T.match_buffer(a, (n,), "float32")
            B = T.match_buffer(b, (n,), "float32")
            for i in range(n):
                with T.block("B"):
                    vi = T.axis.spatial(n, i)
                    B[vi] = T.float32(0) - A[vi]

        @R.function
        def main(x: R.Tensor(("n",), "float32")):
            n = T.int64()
            storage = R.memory.alloc_storage(R.shape([4 * n]), R.prim_value(0), R.str("global"), R.dtype("float32"))
            a = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([n]), R.dtype("float32"))
            _ = cls.neg(x, a, out_sinfo=R.Tuple())
            storage1 = R.memory.alloc_storage(R.shape([4 * n]), R.prim_value(0), R.str("global"), R.dtype("float32"))
            b = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([n]), R.dtype("float32"))
            _1 = cls.neg(a, b, out_sinfo=R.Tuple())
            c = R.builtin.alloc_tensor(R.shape([n]), R.dtype("float32"), R.prim_value(0))
            _2 = cls.neg(b, c, out_sinfo=R.Tuple())
            d = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([n]), R.dtype("int32"))
            _3 = cls.neg(c, d, out_sinfo=R.Tuple())
            return c

    assert_structural_equal(StaticPlanBlockMemory()(Dynamic), Expected)


def test_nothing_to_plan_returns_the_module():
    @I.ir_module
    class Only:
        @T.prim_func
        def neg(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = T.float32(0) - A[vi]

        @R.function
        def helper(t: R.Tensor((4,), "float32")):
            return t

        @R.function
        def main(x: R.Tensor((4,), "float32")):
            a = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0))
            _ = cls.neg(x, a, out_sinfo=R.Tuple())
            b = cls.helper(a)  # may return `a`: not planned
            c = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0))
            _1 = cls.neg(x, c, out_sinfo=R.Tuple())
            t = (c, x)  # returned through a tuple: not planned
            return (b, t)

    assert StaticPlanBlockMemory()(Only) is Only
    planned = StaticPlanBlockMemory()(Sizes)
    assert StaticPlanBlockMemory()(planned) is planned  # planned tensors are not builtins


def test_bad_upper_bound_is_a_clear_error():
    func = Sizes["main"].with_attr("tir_var_upper_bound", {"n": -1})
    mod = Sizes.copy()
    mod.update_func(Sizes.get_global_var("main"), func)
    with pytest.raises(TypeError, match=r"tir_var_upper_bound\['n'\] must be a positive int"):
        StaticPlanBlockMemory()(mod)


def mlp(batch_bound=None):
    w1, w2 = rng.standard_normal((32, 16), "float32"), rng.standard_normal((10, 32), "float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("batch", 16), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(op.nn.relu(op.nn.linear(x, relax.const(w1))))
            h = bb.emit(op.nn.linear(h, relax.const(w2)))
            h = bb.emit(op.exp(op.nn.softmax(h)))  # several intermediates of one size
            out = bb.emit_output(op.nn.relu(op.add(h, h)))
        bb.emit_func_output(out)
    mod = bb.get()
    if batch_bound is not None:
        main = mod["main"].with_attr("tir_var_upper_bound", {"batch": batch_bound})
        mod.update_func(mod.get_global_var("main"), main)

    def reference(a):
        h = np.maximum(a @ w1.T, 0) @ w2.T
        e = np.exp(h - h.max(-1, keepdims=True))
        return np.maximum(2 * np.exp(e / e.sum(-1, keepdims=True)), 0)

    return mod, reference


@pytest.mark.parametrize("bound", [None, 64])
def test_mlp_compiles_once_and_runs_at_three_batch_sizes(bound):
    mod, reference = mlp(bound)
    with PassContext(opt_level=1):
        lowered = get_pipeline("default", 1)(mod)
    storages = calls(lowered, memory.alloc_storage)
    tensors = calls(lowered, memory.alloc_tensor)
    assert len(tensors) > len(storages) >= 1  # storage is actually reused
    if bound is not None:
        assert all(s.args[0].values[0].is_Integer for s in storages)
    vm = relax.VirtualMachine(unity.compile(mod), unity.cpu())
    for batch in (1, 7, 64):
        a = rng.standard_normal((batch, 16), "float32")
        np.testing.assert_allclose(vm["main"](a).numpy(), reference(a), rtol=1e-4, atol=1e-5)


def test_cnn_with_symbolic_batch_unchanged_by_planning():
    w = rng.standard_normal((4, 3, 3, 3), "float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 3, 8, 8), "float32"))
    with bb.function("main", [x]):
        c = bb.emit(op.nn.conv2d(x, relax.const(w), padding=1))
        r = bb.emit(op.nn.max_pool2d(op.nn.relu(c), pool_size=2))
        bb.emit_func_output(bb.emit(op.sigmoid(op.nn.relu(op.add(r, r)))))
    with PassContext(opt_level=0):  # unfused: one kernel per op, many intermediates
        lowered = get_pipeline("default", 0)(bb.get())
    planned = StaticPlanBlockMemory()(lowered)
    assert 1 <= len(calls(planned, memory.alloc_storage)) < len(calls(planned, memory.alloc_tensor))
    for batch in (1, 7, 64):
        a = rng.standard_normal((batch, 3, 8, 8), "float32")
        conv = np.maximum(topi.testing.conv2d_nchw_python(a, w, 1, 1), 0)
        pooled = conv.reshape(batch, 4, 4, 2, 4, 2).max(axis=(3, 5))
        reference = 1 / (1 + np.exp(-np.maximum(2 * pooled, 0)))
        for mod in (lowered, planned):
            np.testing.assert_allclose(run(mod, a), reference, rtol=1e-5, atol=1e-6)


def test_if_branches_are_planned_on_their_own():
    @I.ir_module
    class Before:
        @T.prim_func
        def neg(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = T.float32(0) - A[vi]

        @R.function
        def main(x: R.Tensor((4,), "float32"), c: R.Prim("bool")):
            a = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0))
            _ = cls.neg(x, a, out_sinfo=R.Tuple())
            if c:
                b = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0))
                _1 = cls.neg(a, b, out_sinfo=R.Tuple())
                d = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0))
                _2 = cls.neg(b, d, out_sinfo=R.Tuple())
                r = d
            else:
                r = x
            return r

    after = StaticPlanBlockMemory()(Before)
    outer = after["main"].body.blocks[0].bindings
    assert outer[0].value.op is not memory.alloc_storage  # `a` is used inside the If: kept
    branch = after["main"].body.blocks[0].bindings[-1].value.true_branch
    ops = [b.value.op for b in branch.blocks[0].bindings if isinstance(b.value, Call)]
    assert ops.count(memory.alloc_storage) == 1 and ops.count(memory.alloc_tensor) == 1
    x = rng.standard_normal(4).astype("float32")
    for cond in (True, False):
        np.testing.assert_array_equal(run(after, x, cond), run(Before, x, cond))


def test_sizes_compare_by_their_constant_factor_when_their_symbolic_part_is_shared():
    """A storage of ``8 * floor(n / 2)`` bytes holds a tensor of ``4 * floor(n / 2)``
    (compared by the factors, without sympy's expansion: GoogLeNet over a symbolic image
    size spent 9 s planning), and of ``-8 * floor(-n / 4)`` one of ``-4 * floor(-n / 4)``
    (a negative part: comparing the factors as they are under-sized a storage of
    ResNet-50 over a symbolic size, an error at run time); rounded sizes of different shapes are not compared (sympy
    rarely decides them); polynomials still are."""
    import sympy

    from unity.relax.transform.static_plan_block_memory import _at_least

    n = sympy.Symbol("n", integer=True, positive=True)
    half = sympy.floor(n / 2)
    assert _at_least(8 * half, 4 * half) and not _at_least(4 * half, 8 * half)
    up = sympy.floor(-n / 4)  # -ceil(n / 4): sizes of a rounded-up count print so
    assert _at_least(-8 * up, -4 * up) and not _at_least(-4 * up, -8 * up)
    assert not _at_least(n * n, half)
    assert _at_least(2 * n + 4, n) and not _at_least(n, 2 * n)
    third = sympy.floor((n + 2) / 3)
    shared = sympy.Max(4 * half, 4 * third, evaluate=False)  # a storage of both
    assert _at_least(shared, 4 * third) and _at_least(shared, 2 * half)
    assert not _at_least(shared, 8 * half)


@I.ir_module
class Strided:
    """Every 2nd, then 3rd, then 2nd element of an (n,) input (negated at each step, and
    once more): sizes after strided steps, which sympy does not order."""

    @T.prim_func
    def every(a: T.handle, b: T.handle, step: T.int64):
        n = T.int64()
        m = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (m,), "float32")
        for i in range(m):
            with T.block("B"):
                vi = T.axis.spatial(m, i)
                B[vi] = T.float32(0) - A[vi * step]

    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        a = R.builtin.alloc_tensor(R.shape([(n + 1) // 2]), R.dtype("float32"), R.prim_value(0))
        _ = cls.every(x, a, R.prim_value(T.int64(2)), out_sinfo=R.Tuple())
        b = R.builtin.alloc_tensor(R.shape([((n + 1) // 2 + 2) // 3]), R.dtype("float32"), R.prim_value(0))
        _1 = cls.every(a, b, R.prim_value(T.int64(3)), out_sinfo=R.Tuple())
        c = R.builtin.alloc_tensor(R.shape([(((n + 1) // 2 + 2) // 3 + 1) // 2]), R.dtype("float32"), R.prim_value(0))
        _2 = cls.every(b, c, R.prim_value(T.int64(2)), out_sinfo=R.Tuple())
        d = R.builtin.alloc_tensor(R.shape([(((n + 1) // 2 + 2) // 3 + 1) // 2]), R.dtype("float32"), R.prim_value(0))
        _3 = cls.every(c, d, R.prim_value(T.int64(1)), out_sinfo=R.Tuple())
        return d


def test_symbolic_sizes_sympy_cannot_order_share_a_storage_of_their_max():
    """`c` (after three strided steps) takes the storage of `a` (dead by then), though
    sympy orders neither size: the storage grows to the ``Max`` of both (two storages
    instead of three, as a static size plans; each storage the pool keeps apart is cold in
    the caches when next written).  Results match numpy for sizes from 1 up."""
    import sympy

    after = StaticPlanBlockMemory()(Strided)
    storages = calls(after, memory.alloc_storage)
    tensors = calls(after, memory.alloc_tensor)
    first, second = (s.args[0].values[0] for s in storages)
    assert isinstance(first, sympy.Max) and not second.has(sympy.Max)
    assert [t.args[0] for t in tensors] == [storages_var(after, i) for i in (0, 1, 0)]
    for n in (1, 2, 5, 12, 37):
        x = rng.standard_normal(n).astype("float32")
        np.testing.assert_array_equal(run(after, x), x[::2][::3][::2])  # negated 4 times
