"""A few TOPI computes compiled with `unity.build(..., "llvm")`, symbolic shapes, vs numpy."""

from __future__ import annotations

import numpy as np

from tests.topi.run import check, rand
from unity import te, topi
from unity.topi.testing import conv2d_python, layer_norm_python, pool2d_python, softmax_python


def test_elementwise_softmax_and_reductions_build():
    n = te.var("n")
    x, y = te.placeholder((n, 4), name="x"), te.placeholder((4,), name="y")
    for rows in (1, 3):
        a, b = rand((rows, 4)), rand((4,))
        check([x, y], [topi.add(x, y), topi.nn.softmax(x), topi.mean(x, 1), topi.argmax(x, 1)],
              [a, b], [a + b, softmax_python(a), a.mean(1), np.argmax(a, 1)], rtol=1e-5, build=True)  # fmt: skip


def test_conv_pool_and_norm_build():
    x, k = te.placeholder((1, 2, 6, 6), name="x"), te.placeholder((3, 2, 3, 3), name="k")
    xv, kv = rand((1, 2, 6, 6)), rand((3, 2, 3, 3))
    outs = [topi.nn.conv2d(x, k, 1, 1), topi.nn.avg_pool2d(x, 3, 2, 1), topi.nn.max_pool2d(x, 2)]
    want = [conv2d_python(xv, kv, padding=(1, 1, 1, 1)), pool2d_python(xv, (3, 3), (2, 2), "avg", (1, 1, 1, 1)),
            pool2d_python(xv, (2, 2), (2, 2), "max")]  # fmt: skip
    check([x, k], outs, [xv, kv], want, rtol=1e-4, atol=1e-4, build=True)
    g, b = te.placeholder((6,), name="g"), te.placeholder((6,), name="b")
    y = te.placeholder((3, 6), name="y")
    yv, gv, bv = rand((3, 6)), rand((6,)), rand((6,))
    check([y, g, b], topi.nn.layer_norm(y, g, b), [yv, gv, bv], layer_norm_python(yv, gv, bv),
          rtol=1e-4, atol=1e-5, build=True)  # fmt: skip


def test_transform_ops_build():
    n = te.var("n")
    x = te.placeholder((n, 4), name="x")
    i = te.placeholder((2,), "int64", name="i")
    a, idx = rand((5, 4)), np.array([0, -1], "int64")
    outs = [topi.reshape(x, (n * 2, 2)), topi.concat([x, x], 1), topi.take(x, i, 0),
            topi.strided_slice(x, [1], [2**31 - 1], [2])]  # fmt: skip
    want = [a.reshape(10, 2), np.concatenate([a, a], 1), np.take(a, idx, 0), a[1::2]]
    check([x, i], outs, [a, idx], want, build=True)
