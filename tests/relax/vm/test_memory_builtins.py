"""`R.memory.*` builtins: struct info, bytecode (`storage` / `view` / `kill`) and VM runs."""

import numpy as np
import pytest

import unity
from unity import relax
from unity.ir.diagnostics import DiagnosticError
from unity.relax import ObjectStructInfo, TensorStructInfo, Var
from unity.relax.vm import memory
from unity.relax.vm.codegen import codegen, plan_storage
from unity.script import ir as I
from unity.script import relax as R
from unity.script import tir as T


def test_struct_info_of_the_builtins():
    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        s = R.memory.alloc_storage(R.shape([4 * n]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        t = R.memory.alloc_tensor(s, R.prim_value(0), R.shape([n]), R.dtype("float32"))
        k = R.memory.kill_tensor(t)
        return s

    s, t, k = (b.var.struct_info for b in main.body.blocks[0].bindings)
    assert isinstance(s, ObjectStructInfo)
    assert t.script() == 'R.Tensor((n,), dtype="float32")'
    assert k.script() == "R.Tuple()"


def test_bad_builtin_arguments_are_clear_errors():
    storage = Var("s", ObjectStructInfo())
    with pytest.raises(DiagnosticError, match="memory.alloc_storage expects a 1-D size in bytes"):
        relax.BlockBuilder().normalize(memory.alloc_storage((2, 16)))
    tensor = Var("t", TensorStructInfo((4,), "float32"))
    with pytest.raises(DiagnosticError, match=r"alloc_tensor expects a storage \(R.Object\)"):
        relax.BlockBuilder().normalize(memory.alloc_tensor(tensor, 0, (4,), "float32"))
    assert relax.BlockBuilder().normalize(memory.kill_storage(storage)).struct_info.fields == ()


def test_plan_storage_pools_storage_until_its_last_view_dies():
    code = [
        ["storage", 1, 64, 0],
        ["view", 2, 1, 0, "float32", [4], 0],
        ["kill", 1],  # the storage dies first (TVM's order); its view lives on
        ["kernel", "k", [["t", 0, [4]], ["t", 2, [4]]]],
        ["alloc", 3, "float32", [4], 0],
        ["kernel", "k", [["t", 2, [4]], ["t", 3, [4]]]],
        ["kill", 2],
    ]
    planned = plan_storage(code, 3)
    assert planned == [
        ["storage", 1, 64, 1],
        ["view", 2, 1, 0, "float32", [4], 0],
        ["kernel", "k", [["t", 0, [4]], ["t", 2, [4]]]],
        ["alloc", 3, "float32", [4], 0],
        ["kernel", "k", [["t", 2, [4]], ["t", 3, [4]]]],
        ["free", 1],  # kills of pooled memory are dropped: the free gives it back
    ]


def test_escaping_view_is_a_real_array_and_its_storage_is_not_pooled():
    code = [["storage", 1, 64, 0], ["view", 2, 1, 16, "int32", [2, 2], 0], ["tuple", 3, [2]]]
    assert plan_storage(code, 3) == [
        ["storage", 1, 64, 0],
        ["view", 2, 1, 16, "int32", [2, 2], 1],
        ["tuple", 3, [2]],
    ]


@I.ir_module
class Offsets:
    """Two tensors at different offsets of one storage; the second is returned."""

    @T.prim_func
    def fill(A: T.Buffer((4,), "float32"), B: T.Buffer((2, 2), "float32")):
        for i, j in T.grid(2, 2):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi * 2 + vj] * T.float32(10)

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        s = R.memory.alloc_storage(R.shape([48]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        a = R.memory.alloc_tensor(s, R.prim_value(0), R.shape([2, 2]), R.dtype("float32"))
        b = R.memory.alloc_tensor(s, R.prim_value(32), R.shape([2, 2]), R.dtype("float32"))
        _ = cls.fill(x, a, out_sinfo=R.Tuple())
        _1 = cls.fill(x, b, out_sinfo=R.Tuple())
        return (a, b)


def test_views_at_offsets_run_and_survive_the_next_call():
    program, _ = codegen(Offsets)
    code = program["functions"]["main"]["code"]
    assert code[0] == ["storage", 1, 48, 0]  # a returned view keeps the storage out of the pool
    vm = relax.VirtualMachine(unity.compile(Offsets, pipeline=None), unity.cpu())
    x = np.arange(4, dtype="float32")
    a, b = vm["main"](x)
    np.testing.assert_array_equal(a.numpy(), [[0, 10], [20, 30]])
    np.testing.assert_array_equal(b.numpy(), [[0, 10], [20, 30]])
    vm["main"](x + 1)
    np.testing.assert_array_equal(b.numpy(), [[0, 10], [20, 30]])


def test_static_view_past_its_storage_is_refused_when_loading():
    program, constants = codegen(Offsets)
    program["functions"]["main"]["code"][0][2] = 40  # b needs bytes 32..48
    exe = unity.compile(Offsets, pipeline=None)
    exe.program = program
    with pytest.raises(RuntimeError, match="at byte offset 32 needs bytes up to 48, but the storage has 40"):
        relax.VirtualMachine(exe, unity.cpu())


def test_tensor_in_a_storage_from_elsewhere_is_a_clear_error():
    @R.function
    def main(s: R.Object):
        t = R.memory.alloc_tensor(s, R.prim_value(0), R.shape([4]), R.dtype("float32"))
        return t

    with pytest.raises(DiagnosticError, match="needs a storage made by R.memory.alloc_storage"):
        codegen(unity.IRModule({"main": main}))
