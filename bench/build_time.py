"""Wall time of `unity.build` (lowering + LLVM codegen + O3 + JIT) for a 1024^2 matmul
and a conv2d, each built from a fresh TE definition.

Run: ``python bench/build_time.py``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

import unity
from unity import te, tir


def conv2d(batch: int = 1, channels: int = 64, size: int = 56, filters: int = 64) -> tir.PrimFunc:
    """3x3 conv2d NCHW with padding 1 (a ResNet layer)."""
    data = te.placeholder((batch, channels, size, size), name="data")
    kernel = te.placeholder((filters, channels, 3, 3), name="kernel")
    padded = te.compute(
        (batch, channels, size + 2, size + 2),
        lambda n, c, h, w: te.if_then_else(
            (h >= 1) & (h <= size) & (w >= 1) & (w <= size), data[n, c, h - 1, w - 1], te.const(0.0)
        ),
        name="pad",
    )
    rc, ry, rx = (
        te.reduce_axis((0, e), name) for e, name in ((channels, "rc"), (3, "ry"), (3, "rx"))
    )
    out = te.compute(
        (batch, filters, size, size),
        lambda n, f, y, x: te.sum(
            padded[n, rc, y + ry, x + rx] * kernel[f, rc, ry, rx], axis=[rc, ry, rx]
        ),
        name="conv",
    )
    return te.create_prim_func([data, kernel, out])


def _time_build(make) -> tuple[float, float]:
    """(seconds to lower, seconds for the whole build), best of 3."""
    lowers, builds = [], []
    for _ in range(3):
        func = make()
        start = time.perf_counter()
        tir.lower(func)
        lowers.append(time.perf_counter() - start)
        start = time.perf_counter()
        unity.build(func)
        builds.append(time.perf_counter() - start)
    return min(lowers), min(builds)


def main() -> None:
    from matmul import matmul

    unity.build(matmul(16))  # warm up imports and LLVM initialization
    for name, make in (
        ("matmul 1024x1024", lambda: matmul(1024)),
        ("conv2d 1x64x56x56 k3", conv2d),
    ):
        lower_s, build_s = _time_build(make)
        print(
            f"unity.build {name:22s}: {build_s * 1e3:7.1f} ms "
            f"(of which tir.lower {lower_s * 1e3:6.1f} ms)"
        )


if __name__ == "__main__":
    main()
