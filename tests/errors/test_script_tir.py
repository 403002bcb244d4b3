"""Mistakes in a `@T.prim_func` script are a ParseError naming the line and the problem."""

from __future__ import annotations

import pytest

from unity.script import tir as T
from unity.script.parser.errors import ParseError


def _typo():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        A[0] = T.flot32(1)


def _unknown_name():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in T.serial(8):
            A[i] = C[i]  # noqa: F821 - the mistake under test


def _bad_dtype():
    @T.prim_func
    def f(A: T.Buffer((8,), "float33")):
        A[0] = T.float32(1)


def _index_count():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        A[0, 1] = T.float32(1)


def _float_index():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        A[T.float32(1.0)] = T.float32(1)


def _store_string():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        A[0] = "hello"


def _float_extent():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in T.serial(8.5):
            A[i] = T.float32(1)


def _bad_param():
    @T.prim_func
    def f(A: int):
        pass


def _list_comp():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        x = [i for i in range(3)]  # noqa: F841


def _call_arity():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        A[0] = T.exp(1, 2, 3)


@pytest.mark.parametrize(
    "script, phrases",
    [
        (_typo, ["T has no attribute 'flot32'"]),
        (_unknown_name, ["unknown name 'C'"]),
        (_bad_dtype, ["bad buffer A", "unknown dtype 'float33'"]),
        (_index_count, ["buffer A has 1 dims, indexed with 2"]),
        (_float_index, ["index 0 of buffer A must be an integer, got float32"]),
        (_store_string, ["cannot use 'hello' as float32"]),
        (_float_extent, ["a loop extent must be an integer"]),
        (_bad_param, ["parameter A: expected T.Buffer"]),
        (_list_comp, ["unsupported syntax", "ListComp"]),
        (_call_arity, ["T.exp", "takes 1 arguments, got 3"]),
    ],
)
def test_script_mistake(script, phrases):
    with pytest.raises(ParseError) as info:
        script()
    text = str(info.value)
    assert "test_script_tir.py:" in text  # the file and line of the mistake
    for phrase in phrases:
        assert phrase in text
