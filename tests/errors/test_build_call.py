"""Calling a built kernel with wrong arguments is a ValueError naming the parameter."""

from __future__ import annotations

import os

import numpy as np
import pytest

import unity
from unity import te, tir


@pytest.fixture(scope="module")
def add_one():
    A = te.placeholder((4, 4), "float32", name="A")
    B = te.compute((4, 4), lambda i, j: A[i, j] + 1.0, name="B")
    return unity.build(te.create_prim_func([A, B]))


@pytest.fixture(scope="module")
def add_scalar():
    s = tir.Var("s", "int8")
    Z = te.placeholder((4,), "int8", name="Z")
    W = te.compute((4,), lambda i: Z[i] + s, name="W")
    return unity.build(te.create_prim_func([Z, s, W]))["main"]


GOOD = np.ones((4, 4), "float32")


def _read_only(arr):
    arr.flags.writeable = False
    return arr


def test_a_read_only_input_is_fine(add_one):
    out = np.zeros((4, 4), "float32")
    add_one["main"](_read_only(np.ones((4, 4), "float32")), out)
    np.testing.assert_array_equal(out, 2.0)


@pytest.mark.parametrize(
    "args, phrases",
    [
        ((GOOD,), ["main: expected 2 arguments (A, B), got 1"]),
        ((GOOD, GOOD, GOOD), ["main: expected 2 arguments (A, B), got 3"]),
        ((np.ones((4, 5), "float32"), GOOD), ["parameter 0 'A'", "shape (4, 4)", "got shape (4, 5)"]),
        ((np.ones(16, "float32"), GOOD), ["parameter 0 'A'", "expected rank 2", "got rank 1"]),
        ((np.ones((4, 4)), GOOD), ["parameter 0 'A'", "expected dtype float32, got float64"]),
        ((np.ones((4, 8), "float32")[:, ::2], GOOD), ["parameter 0 'A'", "C-contiguous"]),
        (([[1.0] * 4] * 4, GOOD), ["parameter 0 'A'", "got list"]),
        ((1.0, GOOD), ["parameter 0 'A'", "got float"]),
        ((GOOD, np.broadcast_to(np.zeros(1, "float32"), (4, 4))), ["parameter 1 'B'"]),
        ((GOOD, _read_only(np.zeros((4, 4), "float32"))), ["parameter 1 'B'", "read-only"]),
    ],
)
def test_bad_arguments(add_one, args, phrases):
    with pytest.raises(ValueError) as info:
        add_one["main"](*args)
    for phrase in phrases:
        assert phrase in str(info.value)


def test_symbolic_dim_bound_by_an_earlier_argument():
    n = te.var("n")
    X = te.placeholder((n,), "float32", name="X")
    Y = te.compute((n,), lambda i: X[i] * 2.0, name="Y")
    fn = unity.build(te.create_prim_func([X, Y]))["main"]
    with pytest.raises(ValueError, match=r"parameter 1 'Y'.*n = 3\), got shape \(4,\)"):
        fn(np.ones(3, "float32"), np.zeros(4, "float32"))


def test_a_scalar_parameter_binds_the_shapes_it_appears_in():
    """A kernel whose buffers are sized by expressions of a scalar parameter (a fused
    kernel over ``(W - 1) // 2 + 1`` columns, `W` passed): the scalar binds them."""
    w = tir.Var("w", "int64")
    X = te.placeholder(((w - 1) // 2 + 1,), "float32", name="X")
    Y = te.compute(X.shape, lambda i: X[i] * 2.0, name="Y")
    fn = unity.build(te.create_prim_func([X, Y, w]))["main"]
    out = np.zeros(4, "float32")
    fn(np.ones(4, "float32"), out, 7)
    np.testing.assert_array_equal(out, 2.0)
    with pytest.raises(ValueError, match=r"parameter 0 'X'.*got shape \(4,\)"):
        fn(np.ones(4, "float32"), out, 9)  # w = 9 sizes X at 5 elements


def test_a_scalar_disagreeing_with_the_shape_it_sizes_is_named():
    n = tir.Var("n", "int64")
    X = te.placeholder((n,), "float32", name="X")
    Y = te.compute((n,), lambda i: X[i] + 1.0, name="Y")
    fn = unity.build(te.create_prim_func([X, Y, n]))["main"]
    with pytest.raises(ValueError, match=r"parameter 2 'n': 5 disagrees .*n = 3"):
        fn(np.ones(3, "float32"), np.zeros(3, "float32"), 5)


@pytest.mark.parametrize(
    "value, phrase",
    [(1000, "1000 is out of range for int8 [-128, 127]"), (-129, "out of range for int8"),
     (1.5, "expected a int8 scalar, got float"), ("x", "expected a int8 scalar, got str")],
)
def test_bad_scalar_argument(add_scalar, value, phrase):
    z, w = np.ones(4, "int8"), np.zeros(4, "int8")
    with pytest.raises(ValueError) as info:
        add_scalar(z, value, w)
    assert "parameter 1 's'" in str(info.value) and phrase in str(info.value)
    add_scalar(z, 127, w)
    np.testing.assert_array_equal(w, np.full(4, -128, "int8"))  # wraps like int8 arithmetic


def test_unknown_function_and_target(add_one):
    with pytest.raises(KeyError, match=r"no function 'nope'; it has \['main'\]"):
        add_one["nope"]
    A = te.placeholder((4,), name="A")
    func = te.create_prim_func([A, te.compute((4,), lambda i: A[i], name="B")])
    with pytest.raises(ValueError, match="unknown kind 'llvmx'"):
        unity.build(func, target="llvmx")
    with pytest.raises(TypeError, match="unity.build: expected an IRModule or a PrimFunc, got str"):
        unity.build("hello")


@pytest.mark.parametrize("content", [b"", b"hello world\n", b"\x7fELF" + b"\0" * 100])
def test_load_module_on_a_non_unity_file(tmp_path, content):
    path = tmp_path / "model.so"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=f"load_module: cannot open {path}"):
        unity.runtime.load_module(str(path))


def test_load_module_missing_file(tmp_path):
    missing = os.path.join(tmp_path, "missing.so")
    with pytest.raises(ValueError, match=f"load_module: cannot open {missing}"):
        unity.runtime.load_module(missing)


def test_load_module_on_a_foreign_shared_library():
    libm = "/usr/lib/x86_64-linux-gnu/libm.so.6"
    if not os.path.exists(libm):
        pytest.skip("no libm at the Debian path")
    with pytest.raises(ValueError, match=f"load_module: {libm} is not a unity library"):
        unity.runtime.load_module(libm)
