"""The pass infrastructure: running, skipping, contexts, configs, decorators, diagnostics."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from unity import tir, transform
from unity.instrument import PassInstrument
from unity.ir import DiagnosticError, IRModule
from unity.ir.structural import assert_structural_equal
from unity.transform import (
    FunctionPass, ModulePass, PassContext, PassInfo, PrintIR, Sequential, function_pass,
    module_pass, register_config,
)  # fmt: skip


def _func(value: int) -> tir.PrimFunc:
    A = tir.decl_buffer((4,), "int32", "A")
    i = tir.Var("i")
    store = tir.BufferStore(A, i + value, (i,))
    return tir.PrimFunc((A,), tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, store))


@dataclass(frozen=True)
class TagModule(ModulePass):
    """Set module attribute `key` to `value`."""

    key: str = "tag"
    value: str = "x"

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        if mod.attrs.get(self.key) == self.value:
            return mod
        return mod.with_attr(self.key, self.value)


@dataclass(frozen=True)
class BumpConstants(ModulePass):
    """Add one to every integer constant of every PrimFunc (opt_level 3)."""

    opt_level = 3

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return mod.map_functions(tir.PrimFunc, _bump)


class _Bump(tir.StmtExprMutator):
    def visit_int_imm_(self, imm: tir.IntImm) -> tir.PrimExpr:
        return tir.IntImm(imm.dtype, imm.value + 1)


def _bump(func: tir.PrimFunc) -> tir.PrimFunc:
    return func.replace(body=_Bump().visit_stmt(func.body))


class Recorder(PassInstrument):
    """Record every hook call; veto the passes named in `veto`."""

    def __init__(self, veto: tuple[str, ...] = ()) -> None:
        self.events: list[str] = []
        self.veto = veto

    def enter_pass_ctx(self) -> None:
        self.events.append("enter")

    def exit_pass_ctx(self) -> None:
        self.events.append("exit")

    def should_run(self, mod: IRModule, info: PassInfo) -> bool:
        self.events.append(f"should_run {info.name}")
        return info.name not in self.veto

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        self.events.append(f"before {info.name}")

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        self.events.append(f"after {info.name}")


def test_sequential_runs_passes_in_order_and_an_instrument_can_veto_one():
    mod = IRModule({"main": _func(1)})
    recorder = Recorder(veto=("TagModule",))
    seq = Sequential([TagModule(), BumpConstants()], name="pipeline")
    with PassContext(opt_level=3, instruments=[recorder]):
        out = seq(mod)
    assert recorder.events == [
        "enter",
        "should_run pipeline", "before pipeline",
        "should_run TagModule",
        "should_run BumpConstants", "before BumpConstants", "after BumpConstants",
        "after pipeline",
        "exit",
    ]  # fmt: skip
    assert "tag" not in out.attrs
    assert_structural_equal(out["main"], _bump(_func(1)))


def test_a_pass_returns_its_input_when_nothing_changes():
    mod = IRModule({"main": _func(1)}, attrs={"tag": "x"})
    assert TagModule()(mod) is mod
    assert TagModule(value="y")(mod) is not mod
    assert Sequential([TagModule()])(mod) is mod


def test_opt_level_above_the_context_skips_the_pass_unless_required():
    mod = IRModule({"main": _func(1)})
    with PassContext(opt_level=2):
        assert BumpConstants()(mod) is mod
    with PassContext(opt_level=2, required_pass=["BumpConstants"]):
        assert BumpConstants()(mod) is not mod
    with PassContext(opt_level=3):
        assert BumpConstants()(mod) is not mod


def test_disabled_pass_never_runs_and_required_ignores_vetoes():
    mod = IRModule({"main": _func(1)})
    with PassContext(opt_level=3, disabled_pass=["BumpConstants"]):
        assert Sequential([BumpConstants()])(mod) is mod
    with PassContext(required_pass=["TagModule"], instruments=[Recorder(veto=("TagModule",))]):
        assert TagModule()(mod).attrs["tag"] == "x"


def test_sequential_opt_level_applies_to_the_whole_sequence():
    mod = IRModule({"main": _func(1)})
    with PassContext(opt_level=1):
        assert Sequential([TagModule()], opt_level=2)(mod) is mod
        assert Sequential([TagModule()], opt_level=1)(mod).attrs["tag"] == "x"


def test_pass_contexts_nest_and_restore():
    outer_default = PassContext.current()
    with PassContext(opt_level=1) as outer:
        assert PassContext.current() is outer
        with PassContext(opt_level=3) as inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer
    assert PassContext.current() is outer_default


def test_nested_context_instruments_are_entered_and_exited():
    outer, inner = Recorder(), Recorder()
    with PassContext(instruments=[outer]):
        with PassContext(instruments=[inner]):
            TagModule()(IRModule())
    assert outer.events == ["enter", "exit"]
    assert inner.events == ["enter", "should_run TagModule", "before TagModule",
                            "after TagModule", "exit"]  # fmt: skip


register_config("test.unroll_limit", int, 16)
register_config("test.ratio", float, 0.5)


def test_config_keys_are_declared_and_typed():
    assert PassContext().get_config("test.unroll_limit") == 16
    with PassContext(config={"test.unroll_limit": 4, "test.ratio": 1}) as ctx:
        assert ctx.get_config("test.unroll_limit") == 4
        assert ctx.get_config("test.ratio") == 1.0
    with pytest.raises(KeyError) as info:
        PassContext(config={"test.unrol_limit": 4})
    assert str(info.value) == (
        "PassContext: unknown config key 'test.unrol_limit'; did you mean 'test.unroll_limit'? "
        "(declare it with unity.transform.register_config)"
    )
    with pytest.raises(TypeError, match="'test.unroll_limit' expects int, got str"):
        PassContext(config={"test.unroll_limit": "4"})
    with pytest.raises(ValueError, match="already declared with type int"):
        register_config("test.unroll_limit", str, "")


def test_print_ir_prints_the_module_and_returns_it(capsys):
    mod = IRModule({"main": _func(1)})
    assert PrintIR("before bump")(mod) is mod
    out = capsys.readouterr().out
    assert out.startswith("PrintIR(before bump):\n")
    assert len(out.splitlines()) > 1


def test_module_pass_decorator_on_a_function():
    @module_pass(opt_level=1, name="AddTag")
    def add_tag(mod: IRModule, ctx: PassContext) -> IRModule:
        return mod.with_attr("tag", ctx.opt_level)

    assert add_tag.info == PassInfo(1, "AddTag")
    with PassContext(opt_level=1):
        assert add_tag(IRModule()).attrs["tag"] == 1
    with PassContext(opt_level=0):
        mod = IRModule()
        assert add_tag(mod) is mod


def test_module_pass_decorator_on_a_class_returns_a_factory():
    @module_pass(opt_level=0)
    class SetTag:
        def __init__(self, value: str) -> None:
            self.value = value

        def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
            return mod.with_attr("tag", self.value)

    p = SetTag("v")
    assert p.info.name == "SetTag"
    assert p.value == "v"
    assert p(IRModule()).attrs["tag"] == "v"


def test_function_pass_decorator_and_class():
    @function_pass(opt_level=0)
    def bump(func: tir.PrimFunc, mod: IRModule, ctx: PassContext) -> tir.PrimFunc:
        return _bump(func)

    mod = IRModule({"main": _func(1)})
    assert_structural_equal(bump(mod)["main"], _bump(_func(1)))

    @dataclass(frozen=True)
    class Keep(FunctionPass):
        function_kind = tir.PrimFunc

        def transform_function(self, func, mod, ctx):
            return func

    assert Keep()(mod) is mod


def test_required_passes_run_first():
    @dataclass(frozen=True)
    class NeedsTag(ModulePass):
        required = ("TagModule",)

        def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
            assert mod.attrs["tag"] == "x"
            return mod.with_attr("seen", "yes")

    assert dict(NeedsTag()(IRModule()).attrs) == {"tag": "x", "seen": "yes"}


def test_diagnostic_error_raised_in_a_pass_carries_the_pass_name_and_path():
    func = _func(1)
    store = func.body.body

    @dataclass(frozen=True)
    class Reject(ModulePass):
        def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
            raise DiagnosticError("stores are not allowed here", node=store)

    with pytest.raises(DiagnosticError) as info:
        Sequential([TagModule(), Reject()])(IRModule({"main": func}))
    assert info.value.pass_name == "Reject"
    text = str(info.value)
    assert text.splitlines()[:3] == [
        "stores are not allowed here",
        "  in pass: Reject",
        "  at: @main.body.body",
    ]


def test_bad_inputs_and_results_are_reported():
    with pytest.raises(TypeError, match="TagModule expects an IRModule, got PrimFunc"):
        TagModule()(_func(1))

    @module_pass
    def forgets(mod, ctx):
        return None

    with pytest.raises(TypeError, match="pass forgets returned NoneType"):
        forgets(IRModule())
    with pytest.raises(TypeError, match="is not a Pass"):
        Sequential([lambda m: m])
    with pytest.raises(TypeError, match="opt_level must be an int"):
        PassContext(opt_level="3")
    with pytest.raises(KeyError, match="unknown pass 'NoSuchPass'"):
        transform.get_pass("NoSuchPass")


def test_function_pass_visits_only_its_function_kind():
    class OtherFunc(tir.PrimFunc):
        pass

    seen: list[str] = []

    @function_pass(function_kind=OtherFunc)
    def record(func, mod, ctx):
        seen.append(type(func).__name__)
        return func

    f = _func(1)
    mod = IRModule({"main": f, "other": OtherFunc(f.params, f.body)})
    assert record(mod) is mod
    assert seen == ["OtherFunc"]


def test_apply_pass_to_function_touches_only_matching_functions():
    mod = IRModule({"main": _func(1), "helper": _func(1), "helper2": _func(5)})
    with PassContext(opt_level=3):
        out = transform.ApplyPassToFunction(BumpConstants(), "helper")(mod)
    assert out["main"] is mod["main"] and out["helper2"] is mod["helper2"]
    assert_structural_equal(out["helper"], _bump(_func(1)))
    assert out.get_global_var("helper") is mod.get_global_var("helper")
    assert transform.ApplyPassToFunction(BumpConstants(), "nothing")(mod) is mod
    with pytest.raises(ValueError, match="no function matches 'nothing'"):
        transform.ApplyPassToFunction(BumpConstants(), "nothing", True)(mod)
