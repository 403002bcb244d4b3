"""The progress bar: trials, best latency, default, time left."""

import io

from unity.tune.progress import Progress


def test_prints_every_few_trials_and_at_the_end():
    out = io.StringIO()
    ticks = iter([0.0, 10.0, 20.0])  # start, then one reading per drawn line
    bar = Progress(total=6, stream=out, every=2, clock=ticks.__next__)
    bar.update("mm", 1, None, None)  # not a multiple of `every`: nothing drawn
    bar.update("mm", 3, 2e-3, 4e-3)
    bar.update("mm", 6, 1e-3, 4e-3, final=True)
    lines = out.getvalue().splitlines()
    assert lines == [
        "[tune] mm [##########----------] 3/6 trials  best 2.000 ms (default 4.000 ms, 2.00x)  left 0:00:10",
        "[tune] mm [####################] 6/6 trials  best 1.000 ms (default 4.000 ms, 4.00x)  left 0:00:00",
    ]


def test_draws_nothing_without_a_stream():
    Progress(3, stream=None).update("mm", 3, 1e-3, None, final=True)
