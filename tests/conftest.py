"""Shared test configuration.

Every test runs under a `PassContext` whose `WellFormedInstrument` checks the module
before the first pass and after every pass, so a pass that breaks the IR is named
where it happens.  Tests that feed ill-formed IR on purpose opt out with
`@pytest.mark.ill_formed`.  (A test's own `PassContext` replaces this one, as in TVM.)
"""

import pytest

from unity.ir.instrument_dump import WellFormedInstrument
from unity.ir.transform import PassContext


@pytest.fixture(autouse=True)
def _well_formed_after_every_pass(request: pytest.FixtureRequest):
    if request.node.get_closest_marker("ill_formed"):
        yield
        return
    with PassContext(instruments=[WellFormedInstrument()]):
        yield
