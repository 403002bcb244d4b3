"""Struct-info inference of the shape-manipulation ops, static and symbolic."""

import numpy as np
import pytest

from unity.ir.diagnostics import DiagnosticError
from unity.relax import TupleStructInfo, op
from unity.relax.struct_info import sym

from .helpers import infer, shape_of, tensor


def test_reshape_infers_minus_one_symbolically():
    assert shape_of(op.reshape(tensor("x", ("n", 4)), (-1,))) == ("4*n",)
    assert shape_of(op.reshape(tensor("x", ("n", 4, 6)), ("n", -1, 3))) == ("n", "8", "3")
    assert shape_of(op.reshape(tensor("x", (2, 3, 4)), (6, -1))) == ("6", "4")


def test_reshape_errors_name_both_shapes():
    with pytest.raises(DiagnosticError, match=r"reshape cannot reshape \(2, 3\) \(6 elements\) to \(4, 2\) \(8 elements\)"):
        infer(op.reshape(tensor("x", (2, 3)), (4, 2)))
    with pytest.raises(DiagnosticError, match="at most one -1"):
        infer(op.reshape(tensor("x", (2, 3)), (-1, -1)))
    with pytest.raises(DiagnosticError, match="7 elements do not divide by 2"):
        infer(op.reshape(tensor("x", (7,)), (2, -1)))


def test_permute_dims():
    x = tensor("x", ("n", 3, 4))
    assert shape_of(op.permute_dims(x, [2, 0, 1])) == ("4", "n", "3")
    assert shape_of(op.permute_dims(x)) == ("4", "3", "n")
    with pytest.raises(DiagnosticError, match="permutation of 3 axes"):
        infer(op.permute_dims(x, [0, 0, 1]))


def test_concat_adds_the_axis_dims():
    a, b = tensor("a", ("n", 3)), tensor("b", ("m", 3))
    assert shape_of(op.concat([a, b], axis=0)) == ("m + n", "3")
    assert shape_of(op.concat([tensor("a", (2, 3)), tensor("b", (2, 5))], axis=-1)) == ("2", "8")
    with pytest.raises(DiagnosticError, match=r"concat expects equal dims off axis 1, got \(2, 3\) and \(4, 5\)"):
        infer(op.concat([tensor("a", (2, 3)), tensor("b", (4, 5))], axis=1))


def test_split_sections_and_indices():
    sinfo = infer(op.split(tensor("x", ("n", 6)), 3, axis=1))
    assert isinstance(sinfo, TupleStructInfo) and len(sinfo.fields) == 3
    assert all(tuple(map(str, f.shape)) == ("n", "2") for f in sinfo.fields)
    parts = infer(op.split(tensor("x", (10,)), [2, 5])).fields
    assert [int(f.shape[0]) for f in parts] == [2, 3, 5]
    with pytest.raises(DiagnosticError, match="cannot split axis 0 of size 7 into 2 equal parts"):
        infer(op.split(tensor("x", (7,)), 2))


def test_split_points_on_a_symbolic_axis_are_clamped_to_it():
    parts = infer(op.split(tensor("x", ("n", 3)), [2])).fields
    assert [str(f.shape[0]) for f in parts] == ["Min(2, n)", "Max(0, n - Min(2, n))"]
    parts = infer(op.split(tensor("x", ("n",)), [-1])).fields  # numpy: x[:-1], x[-1:]
    assert [str(f.shape[0]) for f in parts] == ["n - 1", "1"]
    parts = infer(op.split(tensor("x", (3,)), [2, -3, 5])).fields  # static: numpy's sizes
    assert [int(f.shape[0]) for f in parts] == [len(p) for p in np.split(np.zeros(3), [2, -3, 5])]


def test_split_sections_of_a_symbolic_axis_shorten_the_last_parts():
    parts = infer(op.split(tensor("x", ("n",)), 3)).fields  # ONNX: chunks of ceil(n/3)
    assert [str(f.shape[0]) for f in parts] == [
        "ceiling(n/3)", "-ceiling(n/3) + Min(n, 2*ceiling(n/3))", "n - Min(n, 2*ceiling(n/3))",
    ]  # fmt: skip
    parts = infer(op.split(tensor("x", (3 * sym("h"),)), 3)).fields  # divisible: plain sizes
    assert [str(f.shape[0]) for f in parts] == ["h", "h", "h"]


@pytest.mark.parametrize(
    ("begin", "end", "stride", "want"),
    [(-1, 2**63 - 1, 1, "1"), (-3, -1, 1, "Max(0, n - Max(0, n - 3) - 1)"), (0, -1, 1, "n - 1"),
     (-1, -2**63, -1, "n"), (2**63 - 1, -2**63, -2, "ceiling(n/2)"), (1, 2**31, 1, "n - 1")],
)  # fmt: skip
def test_strided_slice_negative_bounds_on_a_symbolic_axis(begin, end, stride, want):
    sliced = op.strided_slice(tensor("x", (2, "n")), [1], [begin], [end], [stride])
    assert shape_of(sliced) == ("2", want)


def test_strided_slice_with_symbolic_bounds_clamps_them_to_the_axis():
    n, p = sym("n"), sym("p")
    assert shape_of(op.strided_slice(tensor("x", (128, 4)), [0], [0], [n])) == ("Min(128, n)", "4")
    assert shape_of(op.strided_slice(tensor("x", ("m",)), [0], [p], [p + n])) == (
        "Max(0, -Min(m, p) + Min(m, n + p))",)  # fmt: skip
    with pytest.raises(DiagnosticError, match=r"symbolic bounds \[0:n\] need a positive stride"):
        infer(op.strided_slice(tensor("x", (8,)), [0], [0], [n], [-1]))


@pytest.mark.parametrize("n", [3, 8, 11])
def test_strided_slice_with_a_symbolic_end_runs_like_numpy(n):
    import unity
    from unity import relax
    from unity.relax import BlockBuilder

    x, y = tensor("x", (8, 2)), tensor("y", ("n",))
    bb = BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            out = bb.emit_output(op.strided_slice(x, [0], [1], [sym("n")]))
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(unity.compile(bb.get(), target="llvm"), unity.cpu())
    a = np.arange(16, dtype="float32").reshape(8, 2)
    np.testing.assert_array_equal(vm["main"](a, np.zeros(n, "float32")).numpy(), a[1:n])


@pytest.mark.parametrize("rows", [1, 2, 5])
def test_split_and_negative_slices_of_a_symbolic_axis_run(rows):
    import unity
    from unity import relax
    from unity.relax import BlockBuilder

    x = tensor("x", ("n", 3))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            parts = bb.emit(op.split(x, [2, -1]))
            outs = [bb.emit(relax.TupleGetItem(parts, k)) for k in range(3)]
            thirds = bb.emit(op.split(x, 3))
            outs += [bb.emit(relax.TupleGetItem(thirds, k)) for k in range(3)]
            outs.append(bb.emit(op.strided_slice(x, [0], [-1], [2**63 - 1])))
            outs.append(bb.emit(op.strided_slice(x, [0], [-1], [-2**63], [-2])))
            out = bb.emit_output(relax.Tuple(tuple(outs)))
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(unity.compile(bb.get(), target="llvm"), unity.cpu())
    a = np.arange(rows * 3, dtype="float32").reshape(rows, 3)
    got = [t.numpy() for t in vm["main"](a)]
    size = -(-rows // 3)
    want = [*np.split(a, [2, -1]), *(a[k * size : (k + 1) * size] for k in range(3)), a[-1:], a[::-2]]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_squeeze_expand_dims_flatten():
    x = tensor("x", ("n", 1, 4))
    assert shape_of(op.squeeze(x, 1)) == ("n", "4")
    assert shape_of(op.squeeze(x)) == ("n", "4")
    with pytest.raises(DiagnosticError, match="cannot squeeze axis 2 of size 4"):
        infer(op.squeeze(x, 2))
    assert shape_of(op.expand_dims(tensor("y", ("n", 4)), [0, -1])) == ("1", "n", "4", "1")
    assert shape_of(op.flatten(x)) == ("4*n",)


def test_broadcast_to():
    assert shape_of(op.broadcast_to(tensor("x", (1, 4)), ("n", 4))) == ("n", "4")
    with pytest.raises(DiagnosticError, match=r"broadcast_to cannot broadcast shapes \(3,\) and \(2, 4\)"):
        infer(op.broadcast_to(tensor("x", (3,)), (2, 4)))


def test_strided_slice_static_and_symbolic():
    x = tensor("x", (10, "n"))
    assert shape_of(op.strided_slice(x, [0], [1], [9], [2])) == ("4", "n")
    assert shape_of(op.strided_slice(x, [0], [-3], [100])) == ("3", "n")
    sinfo = infer(op.strided_slice(x, [1], [0], [2 ** 31]))
    assert str(sinfo.shape[1]) == "n"
    with pytest.raises(DiagnosticError, match="nonzero strides"):
        infer(op.strided_slice(x, [0], [0], [4], [0]))


def test_take_gather_scatter():
    x, idx = tensor("x", ("n", 8)), tensor("i", (3, 2), "int64")
    assert shape_of(op.take(x, idx, axis=1)) == ("n", "3", "2")
    assert shape_of(op.take(x, tensor("j", ("m",), "int32"), axis=0)) == ("m", "8")
    with pytest.raises(DiagnosticError, match="take expects integer indices, got dtype float32"):
        infer(op.take(x, tensor("f", (2,)), axis=0))
    g = op.gather_elements(x, tensor("i", ("n", 2), "int64"), axis=1)
    assert shape_of(g) == ("n", "2") and infer(g).dtype == "float32"
    with pytest.raises(DiagnosticError, match="indices of the input's rank 2, got rank 1"):
        infer(op.gather_elements(x, tensor("i", (2,), "int64")))
    s = op.scatter_elements(x, tensor("i", (2, 2), "int64"), tensor("u", (2, 2)), axis=0)
    assert shape_of(s) == ("n", "8")
    with pytest.raises(DiagnosticError, match=r"indices of the updates' shape .*, got \(2, 2\) vs \(2, 3\)"):
        infer(op.scatter_elements(x, tensor("i", (2, 2), "int64"), tensor("u", (2, 3))))
    rows = op.scatter_elements(x, tensor("i", (2, 1), "int64"), tensor("u", (2, 8)), axis=0)  # one per row
    assert shape_of(rows) == ("n", "8")
    with pytest.raises(DiagnosticError, match="indices of the updates' shape"):  # not along the axis
        infer(op.scatter_elements(x, tensor("i", (1, 8), "int64"), tensor("u", (2, 8)), axis=0))
