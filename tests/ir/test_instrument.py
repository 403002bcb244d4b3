"""Pass instruments: timing table, printing around passes, the `pass_instrument` decorator."""

from __future__ import annotations

import re
from dataclasses import dataclass

from unity.instrument import (
    PassInstrument, PassTimingInstrument, PrintAfterAll, PrintBeforeAll, pass_instrument,
)  # fmt: skip
from unity.ir import IRModule
from unity.transform import ModulePass, PassContext, PassInfo, Sequential


@dataclass(frozen=True)
class Mark(ModulePass):
    """Set module attribute `key`."""

    key: str = "a"

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return mod.with_attr(self.key, True)


def test_timing_instrument_renders_one_line_per_pass_nested_under_its_parent():
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        Sequential([Mark("a"), Mark("b")], name="outer")(IRModule())
        Mark("c")(IRModule())
    lines = timing.render().splitlines()
    assert re.fullmatch(r"Pass timing \(total [0-9.]+ms\):", lines[0])
    row = r"[0-9.]+ms \[[0-9.]+ms\] \([0-9.]+%; [0-9.]+%\)"
    assert re.fullmatch(rf"  outer: {row}", lines[1])
    assert re.fullmatch(rf"    Mark: {row}", lines[2])
    assert re.fullmatch(rf"    Mark: {row}", lines[3])
    assert re.fullmatch(rf"  Mark: {row}", lines[4])
    assert len(lines) == 5


def test_timing_is_reset_when_a_context_is_entered_again():
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        Mark()(IRModule())
    with PassContext(instruments=[timing]):
        pass
    assert timing.render() == "Pass timing (no passes ran)"


def test_print_before_and_after_all(capsys):
    with PassContext(instruments=[PrintBeforeAll(), PrintAfterAll()]):
        Mark()(IRModule())
    out = capsys.readouterr().out
    assert out.index("Before Running Pass: Mark (opt_level=0)") < out.index(
        "After Running Pass: Mark (opt_level=0)"
    )


def test_pass_instrument_decorator_makes_a_plain_class_an_instrument():
    @pass_instrument
    class SkipMark:
        def should_run(self, mod: IRModule, info: PassInfo) -> bool:
            return info.name != "Mark"

    inst = SkipMark()
    assert isinstance(inst, PassInstrument)
    mod = IRModule()
    with PassContext(instruments=[inst]):
        assert Mark()(mod) is mod
    assert Mark()(mod) is not mod


def test_an_instrument_failing_to_enter_leaves_the_others_exited():
    events: list[str] = []

    class Good(PassInstrument):
        def enter_pass_ctx(self) -> None:
            events.append("enter good")

        def exit_pass_ctx(self) -> None:
            events.append("exit good")

    class Bad(PassInstrument):
        def enter_pass_ctx(self) -> None:
            raise RuntimeError("cannot enter")

    before = PassContext.current()
    try:
        with PassContext(instruments=[Good(), Bad()]):
            raise AssertionError("unreachable")
    except RuntimeError:
        pass
    assert events == ["enter good", "exit good"]
    assert PassContext.current() is before
