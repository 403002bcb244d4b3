"""Einsum through `from_onnx`: ellipsis broadcasting and diagonals against `np.einsum`."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from unity.relax.frontend.onnx import OnnxImportError, from_onnx
from unity.relax.frontend.onnx.ops.einsum import parse_einsum

from .onnx_helpers import FLOAT, run_unity, tensor

RNG = np.random.default_rng(2)


def _einsum_model(equation, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], name="es", equation=equation)
    inputs = [tensor(n, FLOAT, s) for n, s in zip(names, shapes, strict=True)]
    out = helper.make_tensor_value_info("y", FLOAT, None)
    graph = helper.make_graph([node], "g", inputs, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])


CASES = [  # equation, operand shapes
    ("...ii->...i", [(3, 5, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),                             # implicit output: the trace
    ("bii->b", [(2, 3, 3)]),
    ("iji->j", [(3, 2, 3)]),
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (3, 5, 2)]),  # ellipsis of different widths
    ("...ij,...jk", [(1, 4, 5), (6, 5, 2)]),      # broadcast size-1 dim, implicit output
    ("i...,i...->...", [(3, 2, 4), (3, 1, 4)]),
    ("ij...->ji", [(2, 3)]),                      # an empty ellipsis
    ("...", [(2, 3)]),
    ("bij,bjj->bi", [(2, 3, 4), (2, 4, 4)]),
]  # fmt: skip


@pytest.mark.parametrize(("equation", "shapes"), CASES)
def test_einsum_matches_numpy(equation, shapes):
    xs = [RNG.standard_normal(s).astype("float32") for s in shapes]
    (got,) = run_unity(from_onnx(_einsum_model(equation, shapes)), *xs)
    np.testing.assert_allclose(got, np.einsum(equation, *xs), rtol=1e-5, atol=1e-5)


def test_parse_expands_the_ellipsis_right_aligned():
    terms, out = parse_einsum("...ij,...j->...i", [4, 2])
    assert terms == [["…0", "…1", "i", "j"], ["…1", "j"]]
    assert out == ["…0", "…1", "i"]


@pytest.mark.parametrize(("equation", "shapes", "message"), [
    ("ij->i", [(2, 3, 4)], "term 'ij' does not fit an input of rank 3"),
    ("ii->i", [(2, 3)], "takes the diagonal of 'i' over axes of sizes 2 and 3"),
    ("ii->i", [("n", "n")], "needs static sizes for the diagonal of 'i', got n and n"),
    ("ij->k", [(2, 3)], "output 'k' repeats a letter or names one no input has"),
    ("i.j->i", [(2, 3)], r"term 'i.j' has a '.' outside one '...'"),
    ("ij,jk->ik", [(2, 3)], "equation 'ij,jk->ik' has 2 terms for 1 inputs"),
    ("ij...->j", [(2, 3, 4)], r"output 'j' drops the 1 broadcast dims of '...' \(numpy too\)"),
])  # fmt: skip
def test_bad_equations_name_the_node(equation, shapes, message):
    with pytest.raises(OnnxImportError, match=rf'Einsum node "es": {message}'):
        from_onnx(_einsum_model(equation, shapes))
