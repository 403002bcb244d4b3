"""first_equal: structurally equal PrimFuncs map to the first of their kind."""

from __future__ import annotations

from unity import te, tir
from unity.relax.transform.prim_func_dedupe import first_equal, signature


def _add_one(shape: tuple[int, ...], dtype: str = "float32") -> tir.PrimFunc:
    a = te.placeholder(shape, dtype, name="a")
    b = te.compute(shape, lambda *i: a(*i) + tir.const(1, dtype), name="b")
    return te.create_prim_func([a, b])


def _times_two(shape: tuple[int, ...]) -> tir.PrimFunc:
    a = te.placeholder(shape, "float32", name="a")
    b = te.compute(shape, lambda *i: a(*i) * tir.const(2.0, "float32"), name="b")
    return te.create_prim_func([a, b])


def test_equal_functions_built_twice_map_to_the_first():
    funcs = {"x": _add_one((4, 8)), "y": _add_one((4, 8)), "z": _add_one((4, 8))}
    assert first_equal(funcs) == {"x": "x", "y": "x", "z": "x"}


def test_same_signature_but_different_body_stays_apart():
    funcs = {"add": _add_one((4, 8)), "mul": _times_two((4, 8))}
    assert signature(funcs["add"]) == signature(funcs["mul"])
    assert first_equal(funcs) == {"add": "add", "mul": "mul"}


def test_different_shapes_or_dtypes_stay_apart():
    funcs = {"a": _add_one((4, 8)), "b": _add_one((8, 4)), "c": _add_one((4, 8), "float64")}
    assert first_equal(funcs) == {"a": "a", "b": "b", "c": "c"}


def test_keys_that_may_not_merge_keep_their_function_and_still_serve_as_first():
    funcs = {"old": _add_one((3,)), "kept": _add_one((3,)), "new": _add_one((3,))}
    same = first_equal(funcs, lambda key: key != "kept")
    assert same == {"old": "old", "kept": "kept", "new": "old"}
