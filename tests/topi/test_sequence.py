"""reverse_sequence and tensor_scatter vs numpy loops written from the ONNX pseudocode."""

from __future__ import annotations

import numpy as np
import pytest

from tests.topi.run import check, rand
from unity import te
from unity.topi.sequence import reverse_sequence, tensor_scatter


def _reverse_sequence_numpy(x, lengths, batch_axis, time_axis):
    out = x.copy()
    for b, n in enumerate(lengths):
        src = np.take(x, b, axis=batch_axis)  # time_axis shifts down when batch_axis < time_axis
        t_axis = time_axis - (batch_axis < time_axis)
        head = np.flip(np.take(src, np.arange(n), t_axis), t_axis)
        rev = np.concatenate([head, np.take(src, np.arange(n, x.shape[time_axis]), t_axis)], t_axis)
        index = [slice(None)] * x.ndim
        index[batch_axis] = b
        out[tuple(index)] = rev
    return out


def _tensor_scatter_numpy(past, update, starts, axis, circular):
    out = past.copy()
    size = past.shape[axis]
    for b in range(past.shape[0]):
        for s in range(update.shape[axis]):
            pos = (starts[b] + s) % size if circular else starts[b] + s
            dst, src = [b] + [slice(None)] * (past.ndim - 1), [b] + [slice(None)] * (past.ndim - 1)
            dst[axis], src[axis] = pos, s
            out[tuple(dst)] = update[tuple(src)]
    return out


@pytest.mark.parametrize(("shape", "batch_axis", "time_axis", "lengths"), [
    ((4, 3, 2), 1, 0, [4, 0, 2]),
    ((3, 5), 0, 1, [1, 5, 3]),
    ((2, 6, 3), 0, 1, [6, 2]),
])  # fmt: skip
def test_reverse_sequence_matches_numpy(shape, batch_axis, time_axis, lengths):
    a, lens = rand(shape), np.array(lengths, "int64")
    x = te.placeholder(shape, name="x")
    n = te.placeholder(lens.shape, "int64", name="n")
    want = _reverse_sequence_numpy(a, lens, batch_axis, time_axis)
    check([x, n], reverse_sequence(x, n, batch_axis, time_axis), [a, lens], want, build=True)


def test_reverse_sequence_clamps_lengths_into_the_time_axis():
    a, lens = rand((2, 4)), np.array([9, -3], "int64")
    x, n = te.placeholder((2, 4), name="x"), te.placeholder((2,), "int64", name="n")
    want = np.stack([a[0, ::-1], a[1]])
    check([x, n], reverse_sequence(x, n, 0, 1), [a, lens], want, build=True)


@pytest.mark.parametrize("circular", [False, True])
@pytest.mark.parametrize(("shape", "steps", "axis", "starts"), [
    ((2, 1, 4, 5), 2, -2, [1, 2]),
    ((3, 6, 2), 3, 1, [0, 3, 2]),
])  # fmt: skip
def test_tensor_scatter_matches_numpy(circular, shape, steps, axis, starts):
    new_shape = list(shape)
    new_shape[axis] = steps
    past, update, pos = rand(shape), rand(new_shape), np.array(starts, "int64")
    p, u = te.placeholder(shape, name="p"), te.placeholder(new_shape, name="u")
    w = te.placeholder(pos.shape, "int64", name="w")
    want = _tensor_scatter_numpy(past, update, pos, axis % len(shape), circular)
    check([p, u, w], tensor_scatter(p, u, w, axis, circular), [past, update, pos], want, build=True)


def test_tensor_scatter_without_positions_writes_from_the_start():
    past, update = rand((2, 5, 3)), rand((2, 2, 3))
    p, u = te.placeholder(past.shape, name="p"), te.placeholder(update.shape, name="u")
    want = _tensor_scatter_numpy(past, update, [0, 0], 1, circular=False)
    check([p, u], tensor_scatter(p, u, axis=1), [past, update], want, build=True)


def test_sequence_ops_reject_bad_axes():
    x, n = te.placeholder((3, 4), name="x"), te.placeholder((3,), "int64", name="n")
    with pytest.raises(ValueError, match="reverse_sequence: batch_axis and time_axis are both 0"):
        reverse_sequence(x, n, 0, 0)
    with pytest.raises(ValueError, match="tensor_scatter: axis 0 is the batch axis"):
        tensor_scatter(x, te.placeholder((1, 4), name="u"), axis=0)
