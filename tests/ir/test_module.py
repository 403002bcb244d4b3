"""IRModule, GlobalVar and the Op registry."""

import pytest

from unity import tir
from unity.ir import GlobalVar, IRModule, Op


def _func() -> tir.PrimFunc:
    A = tir.decl_buffer((4,), "float32", "A")
    return tir.PrimFunc((A,), tir.Evaluate(tir.const(0)))


def test_lookup_by_name_and_global_var():
    f = _func()
    mod = IRModule({"main": f})
    gv = mod.get_global_var("main")
    assert mod["main"] is f and mod[gv] is f
    assert "main" in mod and gv in mod


def test_missing_function_lists_what_exists():
    mod = IRModule({"main": _func()})
    with pytest.raises(KeyError, match="has no function 'foo' .it has: main."):
        mod["foo"]


def test_update_func_and_add_make_unique_names():
    mod = IRModule({"f": _func()})
    g = _func()
    gv = mod.add("f", g)
    assert gv.name_hint == "f1" and mod["f1"] is g
    mod.update_func(gv, _func())
    assert mod["f1"] is not g


def test_map_functions_returns_self_when_nothing_changes():
    mod = IRModule({"main": _func()})
    assert mod.map_functions(tir.PrimFunc, lambda f: f) is mod
    changed = mod.map_functions(tir.PrimFunc, lambda f: f.with_attr("x", 1))
    assert changed is not mod and changed["main"].attrs == {"x": 1}
    assert mod["main"].attrs == {}


def test_op_registry_rejects_duplicates():
    op = Op("test.my_op", numpy=None)
    assert Op.get("test.my_op") is op
    with pytest.raises(ValueError, match="already registered"):
        Op("test.my_op")
    with pytest.raises(KeyError, match="unknown operator 'test.nope'"):
        Op.get("test.nope")


def test_global_var_distinct_objects():
    assert GlobalVar("a") is not GlobalVar("a")
