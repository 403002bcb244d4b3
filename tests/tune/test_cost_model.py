"""The ridge cost model ranks what it has learned."""

import numpy as np

from tests.tune.helpers import matmul
from unity.tune.cost_model import CostModel, features
from unity.tune.space import spaces_for


def test_learns_a_ranking_from_measurements():
    rng = np.random.default_rng(0)
    rows = [{"tile": float(t), "vec": float(v)} for t, v in rng.integers(0, 6, size=(20, 2))]
    latency = [np.exp(0.5 * r["tile"] - 0.3 * r["vec"]) * 1e-3 for r in rows]
    model = CostModel(alpha=0.1)
    model.fit(rows, latency)
    test = [{"tile": 0.0, "vec": 5.0}, {"tile": 3.0, "vec": 2.0}, {"tile": 5.0, "vec": 0.0}]
    assert np.argsort(model.predict(test)).tolist() == [0, 1, 2]


def test_untrained_until_three_rows():
    model = CostModel()
    model.fit([{"a": 1.0}, {"a": 2.0}], [1.0, 2.0])
    assert not model.trained and model.predict([{"a": 1.0}]).tolist() == [0.0]


def test_features_read_loop_kinds_and_knobs():
    func = matmul(32)
    space = spaces_for(func)[1]
    knobs = {
        "ti": 4,
        "tj": 16,
        "kb": None,
        "pack": False,
        "order": "ij",
        "parallel": True,
        "unroll": True,
    }
    scheduled, _ = space.apply(func, knobs)
    f = features(scheduled, "matmul", knobs)
    assert f["space:matmul"] == 1.0 and f["knob:ti"] == 2.0 and f["knob:order=ij"] == 1.0
    assert f["parallel_loops"] == 1 and f["vectorized_loops"] == 3 and f["unroll_loops"] == 1
