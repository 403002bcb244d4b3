"""Shape manipulation, indexing and creation ops vs numpy."""

from __future__ import annotations

import numpy as np
import pytest

from tests.topi.run import check, rand
from unity import te, topi


def test_reshape_with_minus_one_and_symbolic_rows():
    n = te.var("n")
    x = te.placeholder((n, 6), name="x")
    out = topi.reshape(x, (n * 3, 2))
    for rows in (1, 3):
        a = rand((rows, 6))
        check([x], out, [a], a.reshape(rows * 3, 2))
    y = te.placeholder((2, 3, 4), name="y")
    b = rand((2, 3, 4))
    check([y], topi.reshape(y, (4, -1)), [b], b.reshape(4, -1))


def test_reshape_merging_or_splitting_dims_indexes_each_group():
    """Runs of dims of equal products map on their own: an NCHW16c -> NCHW reshape reads
    ``x[n, c // 16, c % 16, h, w]`` (not the whole flat index unravelled, which over
    symbolic sizes no later analysis took apart); shapes that do not split so keep it."""
    from unity import tir

    n, h, w = (tir.SizeVar(v, "int64") for v in "nhw")
    sixteen = tir.const(16, "int64")
    x = te.placeholder((n, tir.const(9, "int64"), sixteen, h, w), name="x")
    y = topi.reshape(x, (n, tir.const(144, "int64"), h, w))
    reads = te.create_prim_func([x, y]).script()
    assert "x[v_i0, v_i1 // T.int64(16), v_i1 % T.int64(16), v_i2, v_i3]" in reads
    a = rand((2, 9, 16, 3, 5))
    check([x], y, [a], a.reshape(2, 144, 3, 5))
    z = te.placeholder((2, 3, 4), name="z")
    for shape in ((4, 6), (6, 4), (2, 12), (24,), (1, 2, 3, 1, 4)):
        b = rand((2, 3, 4))
        check([z], topi.reshape(z, shape), [b], b.reshape(shape))


def test_reshape_rejects_wrong_sizes():
    with pytest.raises(ValueError, match="cannot reshape 6 elements into 8"):
        topi.reshape(te.placeholder((2, 3), name="x"), (2, 4))


def test_transpose_squeeze_expand_flatten():
    x = te.placeholder((2, 1, 3), name="x")
    a = rand((2, 1, 3))
    check([x], [topi.transpose(x, (2, 0, 1)), topi.transpose(x), topi.squeeze(x),
                topi.squeeze(x, [1]), topi.expand_dims(x, [0, -1]), topi.flatten(x)], [a],
          [a.transpose(2, 0, 1), a.T, a.squeeze(), a.squeeze(1), a[None, ..., None], a.reshape(-1)])  # fmt: skip


def test_concat_and_split_with_symbolic_axis():
    n = te.var("n")
    x, y = te.placeholder((2, n), name="x"), te.placeholder((2, 3), name="y")
    out = topi.concatenate([x, y, x], axis=1)
    for cols in (1, 4):
        a, b = rand((2, cols)), rand((2, 3))
        check([x, y], out, [a, b], np.concatenate([a, b, a], axis=1))
    z = te.placeholder((7, 2), name="z")
    c = rand((7, 2))
    check([z], topi.split(z, [2, 5]), [c], np.split(c, [2, 5]))
    w = te.placeholder((6, 2), name="w")
    d = rand((6, 2))
    check([w], topi.split(w, 3), [d], np.split(d, 3))


def test_split_sections_of_a_symbolic_axis():
    n = te.var("n")
    x = te.placeholder((n,), name="x")
    parts = topi.split(x, 2)
    a = rand((8,))
    check([x], parts, [a], np.split(a, 2))


def test_split_sections_of_a_symbolic_axis_that_does_not_divide():
    n = te.var("n")
    x = te.placeholder((n,), name="x")
    parts = topi.split(x, 3)  # sections of ceil(n / 3), the last ones shorter or empty (ONNX)
    for rows in (1, 4, 5, 6):
        a = rand((rows,))
        size = -(-rows // 3)
        check([x], parts, [a], [a[k * size : (k + 1) * size] for k in range(3)])


def test_split_points_of_a_symbolic_axis_are_clamped():
    n = te.var("n")
    x = te.placeholder((n, 2), name="x")
    parts = topi.split(x, [2, -1])  # numpy: x[:2], x[2:-1], x[-1:], Python slice rules
    for rows in (1, 2, 5):
        a = rand((rows, 2))
        check([x], parts, [a], np.split(a, [2, -1]))


@pytest.mark.parametrize("rows", [1, 3, 6])
@pytest.mark.parametrize(
    ("begin", "end", "stride"),
    [(-1, 2**31 - 1, 1), (-4, -1, 1), (1, -2, 2), (-1, -2**31, -1), (-2, 0, -1), (4, -5, -2),
     (2**31 - 1, -2**31, -2), (0, 5, -1)],
)  # fmt: skip
def test_strided_slice_of_symbolic_axis_with_negative_bounds_and_strides(rows, begin, end, stride):
    n = te.var("n")
    x = te.placeholder((n, 2), name="x")
    out = topi.strided_slice(x, [begin], [end], [stride])
    a = rand((rows, 2))
    check([x], out, [a], a[begin:end:stride])


def test_broadcast_to():
    x = te.placeholder((3, 1), name="x")
    a = rand((3, 1))
    check([x], topi.broadcast_to(x, (2, 3, 4)), [a], np.broadcast_to(a, (2, 3, 4)))


@pytest.mark.parametrize(
    ("begin", "end", "strides"),
    [([1, 0], [3, 4], [1, 2]), ([-1, 3], [-6, 0], [-1, -1]), ([0], [2**31 - 1], [2]),
     ([5, -2], [-100, 100], [-2, 1])],
)  # fmt: skip
def test_strided_slice_follows_python_slicing(begin, end, strides):
    x = te.placeholder((5, 4), name="x")
    a = rand((5, 4))
    key = tuple(slice(b, None if e >= 2**31 - 1 else e, s) for b, e, s in zip(begin, end, strides))
    check([x], topi.strided_slice(x, begin, end, strides), [a], a[key])


def test_strided_slice_of_symbolic_axis():
    n = te.var("n")
    x = te.placeholder((n, 2), name="x")
    out = topi.strided_slice(x, [1], [2**31 - 1], [2])
    for rows in (2, 7):
        a = rand((rows, 2))
        check([x], out, [a], a[1::2])
    out2 = topi.strided_slice(x, [-3], [-1], [1])
    a = rand((6, 2))
    check([x], out2, [a], a[-3:-1])


def test_take_wraps_negative_indices():
    x = te.placeholder((5, 3), name="x")
    i = te.placeholder((2, 2), "int64", name="i")
    a, idx = rand((5, 3)), np.array([[0, -1], [4, -5]], "int64")
    check([x, i], topi.take(x, i, 0), [a, idx], np.take(a, idx, 0), build=True)


def test_an_index_out_of_range_fails_in_the_interpreter_and_the_compiled_kernel():
    """numpy and onnxruntime refuse it; the kernel used to clamp it (a silent wrong answer)."""
    import unity
    from unity import tir

    x = te.placeholder((5, 3), name="x")
    i = te.placeholder((2, 2), "int64", name="i")
    func = te.create_prim_func([x, i, topi.take(x, i, 1)])
    a, idx, out = rand((5, 3)), np.array([[0, -1], [4, -5]], "int64"), np.zeros((5, 2, 2), "float32")
    with pytest.raises(tir.InterpretError, match="out of range"):
        tir.interpret(func, a, idx, out)
    lib = unity.build(func, target="llvm")
    with pytest.raises(RuntimeError, match=r"an index into x axis 1 is outside \[0, 3\) \(it is read from i\)"):
        lib["main"](a, idx, out)
    idx[1] = [2, -3]  # in range: no error
    lib["main"](a, idx, out)
    np.testing.assert_array_equal(out, np.take(a, idx, 1))


def test_gather_elements():
    x = te.placeholder((3, 3), name="x")
    i = te.placeholder((2, 3), "int32", name="i")
    a, idx = rand((3, 3)), np.array([[1, 2, -1], [0, 0, 2]], "int32")
    check([x, i], topi.gather_elements(x, i, 0), [a, idx], np.take_along_axis(a, idx % 3, 0))


def _scatter_ref(a, idx, upd, axis, reduction):
    out = a.copy()
    for p in np.ndindex(*idx.shape):
        q = list(p)
        q[axis] = idx[p] % a.shape[axis]
        q = tuple(q)
        if reduction == "update":
            out[q] = upd[p]
        elif reduction == "add":
            out[q] += upd[p]
        elif reduction == "mul":
            out[q] *= upd[p]
        elif reduction == "max":
            out[q] = max(out[q], upd[p])
        else:
            out[q] = min(out[q], upd[p])
    return out


@pytest.mark.parametrize("reduction", ["update", "add", "mul", "max", "min"])
@pytest.mark.parametrize("axis", [0, 1])
def test_scatter_elements(reduction, axis):
    x = te.placeholder((3, 4), name="x")
    i = te.placeholder((2, 3), "int64", name="i")
    u = te.placeholder((2, 3), name="u")
    a, upd = rand((3, 4)), rand((2, 3))
    idx = np.array([[1, 0, 2], [1, -1, 0]], "int64")
    want = _scatter_ref(a, idx, upd, axis, reduction)
    check([x, i, u], topi.scatter_elements(x, i, u, axis, reduction), [a, idx, upd], want)


@pytest.mark.parametrize("reduction", ["update", "add", "max"])
@pytest.mark.parametrize("axis", [0, 2])
def test_scatter_elements_with_one_index_per_row(reduction, axis):
    """Indices of length 1 off the axis broadcast over the updates' rows (the RoI pooler's
    Expand): the result is the scatter of the expanded indices."""
    shape, upd_shape = (5, 3, 4), [3, 2, 4]
    upd_shape[axis] = 3
    idx_shape = [1, 1, 1]
    idx_shape[axis] = 3
    x = te.placeholder(shape, name="x")
    i = te.placeholder(tuple(idx_shape), "int64", name="i")
    u = te.placeholder(tuple(upd_shape), name="u")
    a, upd = rand(shape), rand(tuple(upd_shape))
    idx = np.array([3, -1, 3], "int64").reshape(idx_shape)  # row 3 twice: the last one wins
    want = _scatter_ref(a, np.broadcast_to(idx, upd_shape), upd, axis, reduction)
    check([x, i, u], topi.scatter_elements(x, i, u, axis, reduction), [a, idx, upd], want)


def test_creation_ops():
    n = te.var("n")
    x = te.placeholder((n, 4), name="x")
    outs = [topi.full((n, 2), "float32", 1.5), topi.tril(x), topi.triu(x, 1), topi.tril(x, -1),
            topi.full_like(x, 3)]  # fmt: skip
    a = rand((3, 4))
    check(
        [x],
        outs,
        [a],
        [np.full((3, 2), 1.5), np.tril(a), np.triu(a, 1), np.tril(a, -1), np.full((3, 4), 3.0)],
    )
    check([], topi.arange(1, 8, 3), [], np.arange(1, 8, 3))
    check(
        [], topi.arange(0.5, -1.0, -0.5, "float32"), [], np.arange(0.5, -1.0, -0.5, dtype="float32")
    )


def test_tile_repeat_flip():
    n = te.var("n")
    x = te.placeholder((n, 3), name="x")
    outs = [
        topi.tile(x, (2, 1, 2)),
        topi.repeat(x, 2, 0),
        topi.repeat(x, 3, -1),
        topi.flip(x, [0, 1]),
    ]
    for rows in (1, 2):
        a = rand((rows, 3))
        check(
            [x],
            outs,
            [a],
            [np.tile(a, (2, 1, 2)), np.repeat(a, 2, 0), np.repeat(a, 3, 1), a[::-1, ::-1]],
        )


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_round_trips_with_space_to_depth(mode):
    x = te.placeholder((1, 8, 2, 3), name="x")
    a = rand((1, 8, 2, 3))
    b = 2
    if mode == "DCR":
        want = a.reshape(1, b, b, 2, 2, 3).transpose(0, 3, 4, 1, 5, 2).reshape(1, 2, 4, 6)
    else:
        want = a.reshape(1, 2, b, b, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 4, 6)
    out = topi.depth_to_space(x, 2, mode=mode)
    check([x], out, [a], want)
    y = te.placeholder((1, 2, 4, 6), name="y")
    s2d = want.reshape(1, 2, 2, b, 3, b).transpose(0, 3, 5, 1, 2, 4).reshape(1, 8, 2, 3)
    check([y], topi.space_to_depth(y, 2), [want], s2d)


def test_one_hot_and_gather_nd():
    i = te.placeholder((3,), "int64", name="i")
    idx = np.array([0, -1, 2], "int64")
    want = np.eye(4, dtype="float32")[idx % 4] * 5 - 1 * (1 - np.eye(4, dtype="float32")[idx % 4])
    check(
        [i],
        [topi.one_hot(i, 4, 5.0, -1.0), topi.one_hot(i, 4, axis=0)],
        [idx],
        [want, np.eye(4)[idx % 4].T],
    )
    x = te.placeholder((2, 3, 4), name="x")
    j = te.placeholder((5, 2), "int64", name="j")
    a = rand((2, 3, 4))
    jj = np.array([[0, 0], [1, 2], [1, -1], [0, 1], [-2, 1]], "int64")
    check([x, j], topi.gather_nd(x, j), [a, jj], a[jj[:, 0], jj[:, 1]])
    k = te.placeholder((2, 1), "int64", name="k")
    kk = np.array([[2], [0]], "int64")
    check([x, k], topi.gather_nd(x, k, batch_dims=1), [a, kk], np.stack([a[0, 2], a[1, 0]]))


def _scatter_nd_ref(a, idx, upd, reduction):
    out = a.copy()
    k = idx.shape[-1]
    for u in np.ndindex(*idx.shape[:-1]):
        key = tuple(int(v) % a.shape[j] for j, v in enumerate(idx[u]))
        cur = out[key]
        new = upd[u]
        out[key] = {"update": new, "add": cur + new, "mul": cur * new,
                    "max": np.maximum(cur, new), "min": np.minimum(cur, new)}[reduction]  # fmt: skip
    del k
    return out


@pytest.mark.parametrize("reduction", ["update", "add", "mul", "max", "min"])
def test_scatter_nd(reduction):
    x = te.placeholder((4, 3), name="x")
    i = te.placeholder((2, 2, 1), "int64", name="i")
    u = te.placeholder((2, 2, 3), name="u")
    a, upd = rand((4, 3)), rand((2, 2, 3))
    idx = np.array([[[1], [3]], [[-1], [0]]], "int64")
    check([x, i, u], topi.scatter_nd(x, i, u, reduction), [a, idx, upd], _scatter_nd_ref(a, idx, upd, reduction))
    j = te.placeholder((3, 2), "int64", name="j")
    v = te.placeholder((3,), name="v")
    jj, vv = np.array([[0, 1], [2, 2], [3, 0]], "int64"), rand((3,))
    check([x, j, v], topi.scatter_nd(x, j, v, reduction), [a, jj, vv], _scatter_nd_ref(a, jj, vv, reduction))


def test_reshape_to_and_from_scalars():
    x = te.placeholder((), name="x")
    y = te.placeholder((1, 1), name="y")
    a, b = np.asarray(rand((1,))[0]), rand((1, 1))
    check([x], topi.reshape(x, (1,)), [a], a.reshape(1))
    check([y], topi.reshape(y, ()), [b], b.reshape(()))


_GUARDED_CONCAT = r"""
import ctypes, mmap, numpy as np, unity
from unity import te, topi
from unity.schedule.default import schedule_primfunc

libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PAGE = mmap.PAGESIZE
keep = []

def guarded(shape):
    # a float32 array with an unreadable page right before and after it
    size = int(np.prod(shape)) * 4
    pages = -(-size // PAGE)
    region = mmap.mmap(-1, (pages + 2) * PAGE)
    keep.append(region)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    for at in (base, base + (pages + 1) * PAGE):
        assert libc.mprotect(at, PAGE, 0) == 0
    start = base + PAGE + pages * PAGE - size  # ends at the guard page
    buf = (ctypes.c_char * size).from_address(start)
    return np.frombuffer(buf, dtype=np.float32).reshape(shape)

a_t, b_t = te.placeholder((1, 64, 9, 9), name="a"), te.placeholder((1, 48, 9, 9), name="b")
func = te.create_prim_func([a_t, b_t, topi.concatenate([a_t, b_t], 1)])
lib = unity.build(schedule_primfunc(func))
a, b, out = guarded((1, 64, 9, 9)), guarded((1, 48, 9, 9)), guarded((1, 112, 9, 9))
a[...] = 1.0
b[...] = 2.0
lib["main"](a, b, out)
assert (out[:, :64] == 1).all() and (out[:, 64:] == 2).all()
"""


def test_concat_reads_only_inside_its_inputs():
    # a vector loop evaluates both sides of the select: each load must stay in its tensor
    # (it read 64 channels before `b` and crashed SqueezeNet's process when that was unmapped)
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _GUARDED_CONCAT], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
