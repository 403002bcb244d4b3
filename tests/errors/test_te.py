"""Wrong `te` input gets a clear error naming the tensor/compute and the problem."""

from __future__ import annotations

import pytest

from unity import te

A = te.placeholder((8, 8), "float32", name="A")


@pytest.mark.parametrize(
    "make, exc, phrases",
    [
        (lambda: te.compute((8,), lambda i, j: A[i, j], name="C"), ValueError,
         ["te.compute 'C'", "1 dimension(s)", "takes 2"]),
        (lambda: te.compute((8, 8), lambda i: A[i, 0], name="C"), ValueError,
         ["te.compute 'C'", "2 dimension(s)", "takes 1"]),
        (lambda: te.compute((8,), lambda i: A[i], name="C"), IndexError,
         ["tensor A has 2 dims", "indexed with 1"]),
        (lambda: te.compute((8,), lambda i: A[i * 1.5, 0], name="C"), TypeError,
         ["tensor A: index 0 must be an integer", "float32"]),
        (lambda: te.placeholder((8.5, 2), name="P"), TypeError,
         ["te.placeholder 'P'", "shape dim 0 must be an integer"]),
        (lambda: te.placeholder((4, "a"), name="P"), TypeError,
         ["te.placeholder 'P'", "shape dim 1 must be an integer", "str"]),
        (lambda: te.placeholder((4, -1), name="P"), ValueError,
         ["te.placeholder 'P'", "shape dim 1 is negative (-1)"]),
        (lambda: te.placeholder((4,), "float33", name="P"), ValueError,
         ["unknown dtype 'float33'"]),
        (lambda: te.reduce_axis((0,), name="k"), ValueError,
         ["te.reduce_axis 'k'", "dom must be (lo, hi)"]),
        (lambda: te.reduce_axis((0, 2.5), name="k"), TypeError,
         ["te.reduce_axis 'k'", "bounds must be integers"]),
        (lambda: te.compute((8,), lambda i: None, name="C"), TypeError,
         ["te.compute 'C'", "must return an expression", "NoneType"]),
        (lambda: te.compute((8,), lambda i: "x", name="C"), TypeError,
         ["te.compute 'C'", "must return an expression", "str"]),
    ],
)
def test_bad_te_input(make, exc, phrases):
    with pytest.raises(exc) as info:
        make()
    for phrase in phrases:
        assert phrase in str(info.value)


def test_reduction_inside_expression_is_rejected():
    k = te.reduce_axis((0, 8), name="k")
    with pytest.raises(ValueError, match=r"te.compute 'C': a reduction .* must be the whole body"):
        te.compute((8,), lambda i: te.sum(A[i, k], axis=k) + 1.0, name="C")


def test_reduce_axis_used_outside_a_reduction_is_named():
    k = te.reduce_axis((0, 8), name="k")
    C = te.compute((8,), lambda i: A[i, k], name="C")
    with pytest.raises(ValueError, match=r"create_prim_func: variable\(s\) k are used"):
        te.create_prim_func([A, C])


def test_missing_input_in_argument_list_is_named():
    C = te.compute((8,), lambda i: A[i, 0], name="C")
    with pytest.raises(ValueError, match="placeholder 'A' is read by 'C' but is not in the argument"):
        te.create_prim_func([C])
