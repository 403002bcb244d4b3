"""Packing a constant operand at compile time: `pack_array` equals the in-kernel packing."""

from __future__ import annotations

import numpy as np
import pytest
from default_workloads import WORKLOADS

from unity import tir
from unity.schedule.default import RuleContext, schedule_primfunc
from unity.schedule.default.prepack import pack_array, prepacked_params, split_prepacked

CTX = RuleContext(lanes=16, num_cores=2, parallel_min_work=0, parallel_min_copy=0)


@pytest.mark.parametrize(
    ("name", "recipe"),
    [("conv3x3", "oihw:16"), ("dense_bias_relu", "nk:16"), ("matmul_tiled", "kn:32")],
)
def test_split_kernel_on_packed_constant_matches(name: str, recipe: str) -> None:
    func = WORKLOADS[name]()
    scheduled = schedule_primfunc(func, CTX)
    found = prepacked_params(scheduled)
    assert list(found.values()) == [recipe]
    (index,) = found
    rng = np.random.default_rng(0)
    args = [
        rng.standard_normal([int(d.value) for d in p.shape]).astype("float32") for p in func.params
    ]
    args[-1][...] = 0
    expected = [a.copy() for a in args]
    tir.interpret(func, *expected)
    split = split_prepacked(scheduled, {index})
    assert (
        tuple(int(d.value) for d in split.params[index].shape)
        == pack_array(recipe, args[index]).shape
    )
    args[index] = pack_array(recipe, args[index])
    tir.interpret(split, *args)
    np.testing.assert_allclose(args[-1], expected[-1], rtol=1e-4, atol=1e-4)


def test_pack_array_layouts():
    w = np.arange(2 * 3 * 1 * 1 * 4, dtype="float32").reshape(8, 3, 1, 1)
    packed = pack_array("oihw:4", w)
    assert packed.shape == (2, 3, 1, 1, 4) and packed[1, 2, 0, 0, 3] == w[7, 2, 0, 0]
    b = np.arange(12, dtype="float32").reshape(3, 4)
    assert pack_array("kn:2", b)[1, 2, 0] == b[2, 2]
    with pytest.raises(ValueError, match="unknown packing recipe"):
        pack_array("xy:2", b)
