"""The printer core: dispatch, underline rendering, unique names, the IRModule printer."""

from __future__ import annotations

import pytest

from unity import tir
from unity.ir import IRModule
from unity.ir.printer import Line, NameTable, Text, render, script


def _func():
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i")
    load = A[i]
    loop = tir.For(
        i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, tir.BufferStore(A, load * 2.0, (i,))
    )
    return tir.PrimFunc((A,), loop), load, loop


def test_underline_marks_expression_span_and_statement_first_line():
    f, load, loop = _func()
    assert script(f, underline={load, loop}) == "\n".join(  # noqa: FLY002 - one line per item
        [
            "@T.prim_func",
            'def main(A: T.Buffer((4,), "float32")):',
            "    for i in T.serial(4):",
            "    ^^^^^^^^^^^^^^^^^^^^^",
            "        A[i] = A[i] * T.float32(2.0)",
            "               ^^^^",
        ]
    )


def test_underline_inside_a_module_keeps_the_indentation():
    f, load, _ = _func()
    mod = IRModule({"main": f})
    assert mod.script(underline={load}).splitlines()[-2:] == [
        "            A[i] = A[i] * T.float32(2.0)",
        "                   ^^^^",
    ]


def test_underline_of_a_block_marks_its_with_line():
    from unity.script import tir as T

    @T.prim_func
    def f(A: T.Buffer((2,), "float32")):
        for i in T.serial(2):
            with T.block("B"):
                vi = T.axis.spatial(2, i)
                A[vi] = T.float32(0)

    block = f.body.body.block
    lines = script(f, underline={block}).splitlines()
    assert lines[3:5] == ['        with T.block("B"):', "        ^^^^^^^^^^^^^^^^^^"]


def test_render_merges_marks_on_one_line():
    text = Text("a") + " + " + Text("bb").marked() + " * " + Text("c").marked()
    assert render([Line(1, text)]) == "    a + bb * c\n        ^^   ^"


def test_name_table_is_by_identity_and_avoids_reserved_words():
    names = NameTable()
    a, b, c = object(), object(), object()
    assert [
        names.name(a, "T"),
        names.name(b, "for"),
        names.name(c, "x.y"),
        names.name(a, "zzz"),
    ] == ["T_1", "for_1", "x_y", "T_1"]


def test_empty_module_and_unknown_objects():
    assert IRModule().script() == "@I.ir_module\nclass Module:\n    pass"
    with pytest.raises(TypeError, match="no printer registered for object"):
        script(object())
