"""Script errors name the file, line and column of the user's source, with a caret."""

from __future__ import annotations

import pytest

from unity.ir import DiagnosticError
from unity.script import ParseError, from_source
from unity.script import tir as T

_UNKNOWN = """\
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        A[i] = foo[i] + T.float32(1)
"""


def _error(text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        from_source(text, filename="kernel.py")
    return info.value


def test_unknown_name_exact_position_and_text():
    err = _error(_UNKNOWN)
    assert (err.filename, err.line, err.column) == ("kernel.py", 4, 16)
    assert str(err) == "\n".join(  # noqa: FLY002 - one line per item
        [
            "kernel.py:4:16: error: unknown name 'foo'",
            "            A[i] = foo[i] + T.float32(1)",
            "                   ^^^",
        ]
    )
    assert isinstance(err, DiagnosticError)


def test_decorated_function_reports_its_file_line():
    with pytest.raises(ParseError) as info:

        @T.prim_func
        def bad(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                A[i] = undefined_thing  # noqa: F821 - the error under test

    with open(__file__) as source:
        lines = source.read().splitlines()
    line = next(
        n
        for n, text in enumerate(lines, 1)
        if text.endswith("A[i] = undefined_thing  # noqa: F821 - the error under test")
    )
    err = info.value
    assert (err.filename, err.line, err.column) == (
        __file__,
        line,
        lines[line - 1].index("undefined") + 1,
    )
    assert "unknown name 'undefined_thing'" in str(err)


def test_storing_a_mismatched_dtype_is_an_error():
    err = _error("""\
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int64")):
    for i in T.serial(4):
        A[i] = B[i]
""")
    assert (err.line, err.column) == (4, 16)
    assert err.message == (
        "buffer A has dtype float32 but the value has dtype int64; "
        'convert it with T.Cast("float32", ...)'
    )


def test_literals_convert_implicitly_but_expressions_do_not_mix():
    f = from_source('@T.prim_func\ndef main(A: T.Buffer((4,), "float32")):\n    A[0] = 1\n')
    assert f.body.value.dtype == "float32"
    err = _error("""\
@T.prim_func
def main(A: T.Buffer((4,), "float32"), n: T.int32):
    A[0] = A[1] * n
""")
    assert (err.line, err.column) == (3, 12)
    assert (
        err.message
        == "operands of * have different dtypes: float32 and int32; convert one with T.Cast"
    )


def test_typed_let_checks_its_value():
    err = _error("@T.prim_func\ndef main(x: T.float32):\n    y: T.int32 = x\n    T.evaluate(y)\n")
    assert (err.line, err.column) == (3, 18)
    assert "variable y has dtype int32 but the value has dtype float32" in err.message


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("    T.evaluate(T.exp(A[0], 1))", "bad call of T.exp: tir.exp takes 1 arguments, got 2"),
        (
            "    for i in T.serial(1, 2, 3):\n        T.evaluate(i)",
            "T.serial takes (extent) or (start, stop), got 3",
        ),
        ("    A[0, 1] = T.float32(0)", "buffer A has 1 dims, indexed with 2"),
        ("    T.reads(A[0])", "T.reads belongs inside a `with T.block(...)`"),
        ("    return 1", "unsupported statement in a TIR script: Return"),
        ("    T.evaluate(lambda: 1)", "unsupported syntax in a script: Lambda"),
        ("    T.evaluate(T.nothing(1))", "T has no attribute 'nothing'"),
        (
            "    for i, j in T.serial(4):\n        T.evaluate(i)",
            "1 loop variable(s) expected, got 2",
        ),
        (
            "    with T.block('b'):\n        vi = T.axis.remap('S', [1])",
            "T.axis.remap needs enclosing loop variables",
        ),
    ],
)
def test_other_errors_name_the_problem(body: str, message: str):
    err = _error(f'@T.prim_func\ndef main(A: T.Buffer((4,), "float32")):\n{body}\n')
    assert message in err.message
    assert err.line >= 3


def test_parameter_annotation_errors():
    err = _error("@T.prim_func\ndef main(A):\n    T.evaluate(0)\n")
    assert (err.line, err.column) == (2, 10) and "parameter A needs an annotation" in err.message
    err = _error(
        '@T.prim_func\ndef main(A: T.Buffer((T.float32("n"),), "float32")):\n    T.evaluate(0)\n'
    )
    assert (err.line, err.column) == (2, 23)
    assert err.message == "shape variable 'n' must have an integer dtype, not float32"


def test_not_a_script():
    err = _error("x = 1\n")
    assert "expected a decorated function or class" in err.message
    err = _error("def f():\n    pass\n")
    assert err.message == "f has no script decorator (such as @T.prim_func or @I.ir_module)"
    err = _error("@T.prim_func\ndef main(:\n")
    assert err.line == 2
