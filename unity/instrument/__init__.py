"""Pass instruments (TVM's `tvm.instrument`): hooks around every pass, timing, printing.

Example:
    >>> from unity.instrument import PassTimingInstrument
    >>> PassTimingInstrument().render()
    'Pass timing (no passes ran)'
"""

from unity.ir.instrument import (
    PassInstrument, PassTimingInstrument, PrintAfterAll, PrintBeforeAll, pass_instrument,
)  # fmt: skip

__all__ = [
    "PassInstrument", "PassTimingInstrument", "PrintAfterAll", "PrintBeforeAll",
    "pass_instrument",
]  # fmt: skip

from unity.ir.instrument_dump import DumpIR, IllFormedError, WellFormedInstrument, ir_diff

__all__ += ["DumpIR", "IllFormedError", "WellFormedInstrument", "ir_diff"]
