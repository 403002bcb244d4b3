"""Host functions (data-dependent output shapes) against onnx's reference implementation."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from unity.runtime.host_functions import HOST_FUNCTIONS, host_function


def _reference(op: str, inputs: list[np.ndarray], n_out: int = 1, **attrs):
    names = [f"i{k}" for k in range(len(inputs))]
    outs = [f"o{k}" for k in range(n_out)]
    node = helper.make_node(op, names, outs, **attrs)
    graph = helper.make_graph([node], "g", [onnx.ValueInfoProto(name=n) for n in names],
                              [onnx.ValueInfoProto(name=o) for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return ReferenceEvaluator(model).run(None, dict(zip(names, inputs, strict=True)))


RNG = np.random.default_rng(11)


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4)])
def test_nonzero(shape):
    x = (RNG.random(shape) > 0.6).astype("float32") * RNG.standard_normal(shape).astype("float32")
    np.testing.assert_array_equal(host_function("unity.host.nonzero")(x), _reference("NonZero", [x])[0])


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress(axis):
    x = RNG.standard_normal((4, 5)).astype("float32")
    cond = RNG.random(4 if axis == 0 else 5 if axis is not None else 20) > 0.5
    want = _reference("Compress", [x, cond], **({} if axis is None else {"axis": axis}))[0]
    got = host_function("unity.host.compress")(x, cond, np.array(np.nan if axis is None else float(axis)))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_unique_sorted(axis):
    x = RNG.integers(0, 3, (6, 4)).astype("float32")
    x[3] = x[1]  # a repeated row for the axis-0 case
    want = _reference("Unique", [x], 4, **({} if axis is None else {"axis": axis}))
    got = host_function("unity.host.unique")(x, np.array(np.nan if axis is None else float(axis)), np.array(1))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype


@pytest.mark.parametrize("axis", [None, 1])
def test_unique_in_first_occurrence_order(axis):
    """(onnx's reference takes the unsorted values along axis 0 whatever the axis.)"""
    x = RNG.integers(0, 3, (3, 8)).astype("float32")
    x[:, 5] = x[:, 2]
    items = list(x.reshape(-1)) if axis is None else [tuple(c) for c in x.T]
    firsts = {}
    for k, item in enumerate(items):
        firsts.setdefault(item, k)
    order = list(firsts)
    values, first, inverse, counts = host_function("unity.host.unique")(
        x, np.array(np.nan if axis is None else float(axis)), np.array(0))
    want_values = np.array(order, "float32") if axis is None else np.array(order, "float32").T
    np.testing.assert_array_equal(values, want_values)
    assert first.tolist() == list(firsts.values())
    assert inverse.tolist() == [order.index(it) for it in items]
    assert counts.tolist() == [items.count(it) for it in order]


@pytest.mark.parametrize("center", [0, 1])
def test_nonmax_suppression_on_random_boxes(center):
    corners = RNG.random((2, 30, 2)) * 10
    sizes = RNG.random((2, 30, 2)) * 4 + 0.5
    if center:
        boxes = np.concatenate([corners, sizes], -1)[..., [1, 0, 3, 2]]
    else:
        boxes = np.concatenate([corners, corners + sizes], -1)
        boxes[:, ::3] = boxes[:, ::3][..., [2, 3, 0, 1]]  # some flipped corners
    boxes = boxes.astype("float32")
    scores = RNG.random((2, 3, 30)).astype("float32")
    extra = [np.array([5], "int64"), np.array([0.4], "float32"), np.array([0.2], "float32")]
    want = _reference("NonMaxSuppression", [boxes, scores, *extra], center_point_box=center)[0]
    got = host_function("unity.host.nonmax_suppression")(boxes, scores, *extra, np.array(center))
    np.testing.assert_array_equal(got, want)
    assert len(got) > 10


@pytest.mark.parametrize("pairs", ["at once", "box by box"])
def test_nonmax_suppression_of_offset_classes_ties_and_empty_boxes(pairs, monkeypatch):
    # torchvision's batched NMS shifts each class's boxes apart into one NMS call: a kept
    # box only meets its own class's boxes; tied scores, repeated and zero-area boxes too.
    # The overlaps of all candidate pairs at once, or (past the cap) one kept box at a time
    from unity.runtime import host_functions

    if pairs == "box by box":
        monkeypatch.setattr(host_functions, "_PAIRS", 0)
    n = 600
    lo = RNG.random((n, 2)) * 20
    boxes = np.concatenate([lo, lo + RNG.random((n, 2)) * 6], -1)
    boxes[:, [1, 3]] += 100.0 * (np.arange(n) % 7)[:, None]  # 7 classes, 100 apart in x
    boxes[::25, 2:] = boxes[::25, :2]  # empty boxes
    boxes[1::40] = boxes[0]  # repeats of box 0
    scores = np.round(RNG.random(n), 2)  # many ties
    args = [boxes[None].astype("float32"), scores[None, None].astype("float32"), np.array([1000], "int64"),
            np.array([0.3], "float32"), np.array([0.05], "float32")]  # fmt: skip
    want = _reference("NonMaxSuppression", args)[0]
    got = host_function("unity.host.nonmax_suppression")(*args, np.array(0))
    np.testing.assert_array_equal(got, want)
    assert 100 < len(got) < 500  # some suppressed, some kept


def test_nonmax_suppression_with_a_nan_box():
    boxes = np.array([[[0, 0, 1, 1], [0, 0, np.nan, 1], [0, 0.1, 1, 1.1], [5, 5, 6, 6]]], "float32")
    args = [boxes, np.array([[[0.9, 0.8, 0.7, 0.6]]], "float32"), np.array([4], "int64"),
            np.array([0.5], "float32"), np.array([0.0], "float32")]  # fmt: skip
    want = _reference("NonMaxSuppression", args)[0]
    got = host_function("unity.host.nonmax_suppression")(*args, np.array(0))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("shape", "axis", "k", "largest"), [
    ((5000,), 0, 7, 1),     # one long row: partitioned first
    ((5000,), 0, 7, 0),
    ((3, 40), 1, 39, 1),    # several rows: sorted whole
    ((40, 3), 0, 5, 0),
    ((6,), 0, 0, 1),
])  # fmt: skip
def test_topk_orders_ties_by_index_as_the_reference(shape, axis, k, largest):
    x = RNG.integers(0, 9, shape).astype("float32")  # many ties
    want = _reference("TopK", [x, np.array([k], "int64")], 2, axis=axis, largest=largest)
    got = host_function("unity.host.topk")(x, np.array([k]), np.array(axis), np.array(largest))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("largest", [0, 1])
def test_topk_of_the_extreme_integers_does_not_wrap(largest):
    x = np.array([-128, 127, 0, -128, 5], "int8")
    values, indices = host_function("unity.host.topk")(x, np.array([2]), np.array(0), np.array(largest))
    assert (values.tolist(), indices.tolist()) == (([127, 5], [1, 4]) if largest else ([-128, -128], [0, 3]))


def test_an_unknown_host_function_is_named():
    with pytest.raises(ValueError, match="unknown host function 'unity.host.sort'"):
        host_function("unity.host.sort")
    assert all(name.startswith("unity.host.") for name in HOST_FUNCTIONS)


def test_the_importer_uses_every_host_function():
    """Each registered host function has a caller (no dead registrations)."""
    import pathlib

    import unity.relax.frontend.onnx.ops as ops

    folder = pathlib.Path(ops.__file__).parent
    source = "".join(p.read_text() for p in (*folder.glob("*.py"), *folder.parent.glob("*.py")))
    for name in HOST_FUNCTIONS:
        assert f'"{name.removeprefix("unity.host.")}"' in source or f'"{name}"' in source, name


def test_tensor_to_shape_and_stack_append():
    assert host_function("unity.host.tensor_to_shape")(np.array([3, 0, 7], np.int64)) == (3, 0, 7)
    append = host_function("unity.host.stack_append")
    stack = append(np.zeros((0, 0), np.float32), np.array([1.0, 2.0], np.float32))
    stack = append(stack, np.array([3.0, 4.0], np.float32))
    np.testing.assert_array_equal(stack, [[1.0, 2.0], [3.0, 4.0]])
    assert stack.dtype == np.float32
    with pytest.raises(ValueError, match=r"step 2 gives \[3\], the steps before gave \[2\]"):
        append(stack, np.zeros(3, np.float32))


def test_append_rows_fills_spare_room_once():
    append = host_function("unity.host.append_rows")
    rows = np.zeros((0, 3), np.float32)
    for k in range(6):
        rows = append(rows, np.full((1, 3), k, np.float32))
    np.testing.assert_array_equal(rows[:, 0], np.arange(6))
    assert rows.base is not None and rows.base.shape[0] > 6  # room left after the rows
    two = append(rows, np.full((2, 3), 9.0, np.float32))
    other = append(rows, np.full((1, 3), 7.0, np.float32))  # the room is taken: a copy
    np.testing.assert_array_equal(two[6:, 0], [9.0, 9.0])
    np.testing.assert_array_equal(other[6:, 0], [7.0])
    np.testing.assert_array_equal(rows[:, 0], np.arange(6))  # earlier rows untouched
    with pytest.raises(ValueError, match=r"appends rows of shape \[2\] to rows of shape \[3\]"):
        append(rows, np.zeros((1, 2), np.float32))
