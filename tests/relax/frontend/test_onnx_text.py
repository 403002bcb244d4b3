"""TfIdfVectorizer over integer token ids, against onnxruntime (any row length)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from unity.relax.frontend.onnx import from_onnx
from unity.relax.frontend.onnx.errors import OnnxImportError

from .onnx_helpers import FLOAT, model, run_ort, run_unity, tensor

POOL = dict(ngram_counts=[0, 4], ngram_indexes=[0, 1, 2, 3, 4, 5, 6],
            pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7])  # 4 unigrams, then 3 bigrams  # fmt: skip


def _vectorizer(shape: list[object], mode: str, elem: int = TensorProto.INT32, **attrs: object):
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode=mode, **{**POOL, **attrs})
    out = [*shape[:-1], 7]
    return model([node], [tensor("x", elem, shape)], [tensor("y", FLOAT, out)])


@pytest.mark.parametrize("mode,attrs", [
    ("TF", {"min_gram_length": 1, "max_gram_length": 2, "max_skip_count": 2}),
    ("IDF", {"min_gram_length": 1, "max_gram_length": 2, "max_skip_count": 0,
             "weights": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]}),
    ("TFIDF", {"min_gram_length": 2, "max_gram_length": 2, "max_skip_count": 1,
               "weights": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]}),
    ("TFIDF", {"min_gram_length": 1, "max_gram_length": 1, "max_skip_count": 3}),
])  # fmt: skip
def test_counts_match_onnxruntime_for_any_row_length(mode, attrs):
    proto = _vectorizer(["rows", "length"], mode, **attrs)
    mod = from_onnx(proto)
    rng = np.random.default_rng(len(attrs))
    for shape in ((2, 12), (3, 5), (1, 1)):
        x = rng.integers(2, 9, shape).astype("int32")
        (got,), (want,) = run_unity(mod, x), run_ort(proto, {"x": x})
        np.testing.assert_allclose(got, want)


def test_a_single_row_of_int64_ids():
    proto = _vectorizer(["length"], "TF", TensorProto.INT64, min_gram_length=1,
                        max_gram_length=2, max_skip_count=1)  # fmt: skip
    x = np.array([5, 6, 7, 8, 6, 7, 2, 5, 4], "int64")
    (got,), (want,) = run_unity(from_onnx(proto), x), run_ort(proto, {"x": x})
    assert got.shape == (7,)
    np.testing.assert_allclose(got, want)


def test_string_tokens_are_refused_by_name():
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=1,
                            max_gram_length=1, max_skip_count=0, ngram_counts=[0],
                            ngram_indexes=[0], pool_strings=["a"])  # fmt: skip
    proto = model([node], [tensor("x", TensorProto.STRING, [3])], [tensor("y", FLOAT, [1])])
    with pytest.raises(OnnxImportError, match="element type STRING"):
        from_onnx(proto)


def test_no_ngram_of_the_lengths_asked_gives_zeros():
    proto = _vectorizer(["rows", "length"], "TF", min_gram_length=3, max_gram_length=3,
                        max_skip_count=0)  # fmt: skip
    x = np.array([[2, 3, 5], [5, 6, 7]], "int32")
    (got,) = run_unity(from_onnx(proto), x)  # onnxruntime refuses it; ONNX's reference:
    (want,) = ReferenceEvaluator(proto).run(None, {"x": x})
    np.testing.assert_array_equal(got, want)
    assert got.shape == (2, 7) and not got.any()
