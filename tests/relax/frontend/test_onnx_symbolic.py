"""The import-time folding lattice of shape-valued tensors (`frontend.onnx.symbolic`)."""

from __future__ import annotations

import numpy as np
import sympy

from unity.relax.frontend.onnx.symbolic import SymTensor, fold_symbolic, make_value
from unity.relax.struct_info import sym

N, S = sym("n"), sym("s")


def _sym(*values: object) -> SymTensor:
    out = np.empty(len(values), dtype=object)
    out[:] = [sympy.sympify(v) for v in values]
    return SymTensor(out)


def test_make_value_gives_numpy_when_every_entry_is_a_number():
    assert isinstance(make_value(_sym(2, 3).values), np.ndarray)
    assert isinstance(make_value(_sym(N, 3).values), SymTensor)


def test_gather_concat_and_arithmetic_keep_symbols():
    shape = _sym(N, S, 64)
    (seq,) = fold_symbolic("Gather", [shape, np.array(1)], {"axis": 0})
    (seq1,) = fold_symbolic("Unsqueeze", [seq, np.array([0])], {})
    (heads,) = fold_symbolic("Div", [np.array([64]), np.array([8])], {})
    (out,) = fold_symbolic("Concat", [seq1, heads, np.array([-1])], {"axis": 0})
    assert out.values.tolist() == [S, 8, -1]
    (prod,) = fold_symbolic("Mul", [shape, np.array([2, 1, 1])], {})
    assert prod.values.tolist() == [2 * N, S, 64]


def test_slice_and_reduce_prod_of_a_symbolic_shape():
    (tail,) = fold_symbolic("Slice", [_sym(N, S, 4), np.array([1]), np.array([3])], {})
    assert tail.values.tolist() == [S, 4]
    (total,) = fold_symbolic("ReduceProd", [tail], {"keepdims": 0})
    assert total.values.tolist() == 4 * S


def test_integer_division_truncates_toward_zero():
    (q,) = fold_symbolic("Div", [_sym(-7, 7), np.array([2, 2])], {})
    assert q.tolist() == [-3, 3]


def test_equal_decides_only_provable_cases():
    (same,) = fold_symbolic("Equal", [_sym(N, 3), _sym(N, 4)], {})
    assert same.tolist() == [True, False]
    assert fold_symbolic("Equal", [_sym(N), _sym(S)], {}) is None


def test_where_selects_known_entries():
    (out,) = fold_symbolic("Where", [np.array([True, False]), _sym(N, S), np.array([1, 2])], {})
    assert out.values.tolist() == [N, 2]


def test_float_results_are_declined():
    assert fold_symbolic("Cast", [_sym(N)], {"_to_dtype": "float32"}) is None


def test_equal_uses_that_shape_symbols_are_positive():
    # exporters write Where(Equal(shape, -1), ones, shape) before an Expand
    (is_hole,) = fold_symbolic("Equal", [_sym(N, 1, S), np.array([-1, -1, -1])], {})
    assert is_hole.tolist() == [False, False, False]
    (target,) = fold_symbolic("Where", [is_hole, np.array([1, 1, 1]), _sym(N, 1, S)], {})
    assert target.values.tolist() == [N, 1, S]
    assert fold_symbolic("Equal", [_sym(N - 2), np.array([0])], {}) is None  # n may be 2
