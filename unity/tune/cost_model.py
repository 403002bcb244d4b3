"""A small learned cost model: ridge regression of log-latency on schedule features.

Features (`features`) are read from the scheduled PrimFunc's loops (how many loops of
each kind, the log-extents of the parallel, vectorized and unrolled loops, the depth
of the nest, the bytes of the buffers it allocates) and from the knobs (numbers as
log2, booleans as 0/1, strings one-hot).  `CostModel.fit` solves the ridge normal
equations on standardized features in numpy; `predict` returns predicted
log-latencies (lower is faster), used to rank candidates before measuring them.

Example:
    >>> model = CostModel()
    >>> model.fit([{"x": 1.0}, {"x": 2.0}, {"x": 3.0}], [1e-3, 2e-3, 4e-3])
    >>> [round(float(v), 1) for v in model.predict([{"x": 1.0}, {"x": 3.0}])]
    [-6.7, -5.7]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from unity.schedule.analysis import as_int
from unity.tir.function import PrimFunc
from unity.tir.functor import post_order_visit
from unity.tir.stmt import Block, For, ForKind

__all__ = ["CostModel", "features"]


def features(func: PrimFunc, space: str, knobs: dict[str, Any]) -> dict[str, float]:
    """Numeric features of a scheduled function and the knobs that made it.

    Example:
        >>> sorted(features(func, "rules", {"lanes": 8}))[:3]  # doctest: +SKIP
        ['alloc_log_bytes', 'blocks', 'knob:lanes']
    """
    out: dict[str, float] = {f"space:{space}": 1.0}
    for key, value in knobs.items():
        if isinstance(value, bool) or value is None:
            out[f"knob:{key}"] = float(bool(value))
        elif isinstance(value, int | float):
            out[f"knob:{key}"] = math.log2(max(float(value), 1.0))
        else:
            out[f"knob:{key}={value}"] = 1.0
    out.update(_loop_features(func))
    return out


def _loop_features(func: PrimFunc) -> dict[str, float]:
    stats = {"loops": 0.0, "blocks": 0.0, "alloc_log_bytes": 0.0}
    for kind in ForKind:
        stats[f"{kind.value}_loops"] = 0.0
        stats[f"{kind.value}_log_extent"] = 0.0

    def visit(node: object) -> None:
        if isinstance(node, For):
            extent = as_int(node.extent) or 64
            stats["loops"] += 1
            stats[f"{node.kind.value}_loops"] += 1
            stats[f"{node.kind.value}_log_extent"] += math.log2(max(extent, 1))
        elif isinstance(node, Block):
            stats["blocks"] += 1
            for buf in node.alloc_buffers:
                size = 4
                for dim in buf.shape:
                    size *= as_int(dim) or 64
                stats["alloc_log_bytes"] += math.log2(size)

    post_order_visit(func.body, visit)
    return stats


class CostModel:
    """Ridge regression from feature dicts to log-latency.

    Attributes:
        alpha: The ridge penalty (on standardized features).

    Example:
        >>> model = CostModel()
        >>> model.fit([{"flops": 1.0}, {"flops": 2.0}, {"flops": 4.0}], [1e-3, 2e-3, 4e-3])
        >>> small, large = model.predict([{"flops": 1.0}, {"flops": 4.0}])  # log-latencies
        >>> model.trained, bool(small < large)
        (True, True)
    """

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = alpha
        self.names: list[str] = []
        self.weights: np.ndarray | None = None
        self.mean = self.scale = np.zeros(0)
        self.bias = 0.0

    @property
    def trained(self) -> bool:
        """True once `fit` has seen at least three measurements."""
        return self.weights is not None

    def fit(self, rows: list[dict[str, float]], latencies: list[float]) -> None:
        """Fit on measured rows (fewer than three rows leave the model untrained).

        Example:
            >>> CostModel().fit([{"a": 1.0}] * 3, [1.0, 1.0, 1.0])
        """
        if len(rows) < 3:
            return
        self.names = sorted({k for row in rows for k in row})
        x = self._matrix(rows)
        self.mean, self.scale = x.mean(axis=0), x.std(axis=0) + 1e-9
        z = (x - self.mean) / self.scale
        y = np.log(np.asarray(latencies, dtype=np.float64))
        self.bias = float(y.mean())
        gram = z.T @ z + self.alpha * np.eye(z.shape[1])
        self.weights = np.linalg.solve(gram, z.T @ (y - self.bias))

    def predict(self, rows: list[dict[str, float]]) -> np.ndarray:
        """Predicted log-latency per row (zeros while untrained).

        Example:
            >>> CostModel().predict([{"a": 1.0}]).tolist()
            [0.0]
        """
        if self.weights is None:
            return np.zeros(len(rows))
        z = (self._matrix(rows) - self.mean) / self.scale
        return z @ self.weights + self.bias

    def _matrix(self, rows: list[dict[str, float]]) -> np.ndarray:
        return np.array(
            [[row.get(name, 0.0) for name in self.names] for row in rows], dtype=np.float64
        )
