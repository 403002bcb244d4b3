"""Relax script errors name the problem, the line and the column, with a caret under it."""

from __future__ import annotations

import pytest

from unity.script import ParseError, from_source
from unity.script import relax as R


def parse_error(text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        from_source(text)
    return info.value


def function(*body: str, params: str = 'x: R.Tensor((2, 3), "float32")') -> str:
    return "\n".join(["@R.function", f"def main({params}):", *("    " + line for line in body)])


def test_unknown_op_exact_text():
    err = parse_error(function("y = R.foo(x)", "return y"))
    assert str(err) == "\n".join([
        "<string>:3:9: error: unknown relax operator R.foo",
        "        y = R.foo(x)",
        "            ^^^^^",
    ])  # fmt: skip


def test_unknown_nn_op():
    err = parse_error(function("y = R.nn.conv3d(x)", "return y"))
    assert (err.line, err.column, err.message) == (3, 9, "unknown relax operator R.nn.conv3d")


def test_wrong_arity_names_the_signature():
    err = parse_error(function("y = R.add(x)", "return y"))
    assert (err.line, err.column) == (3, 9)
    assert err.message == "bad call of R.add(x1, x2): missing a required argument: 'x2'"
    err = parse_error(function("y = R.exp(x, x)", "return y"))
    assert err.message == "bad call of R.exp(x): too many positional arguments"


def test_unknown_keyword_attribute():
    err = parse_error(function("y = R.sum(x, axes=1)", "return y"))
    assert "got an unexpected keyword argument 'axes'" in err.message


def test_struct_info_mismatch_reports_the_op_inference_error():
    params = 'x: R.Tensor((2, 3), "float32"), w: R.Tensor((4, 5), "float32")'
    text = function("with R.dataflow():", "    y = R.matmul(x, w)", "    R.output(y)", "return y",
                    params=params)  # fmt: skip
    err = parse_error(text)
    assert str(err) == "\n".join([
        (
            "<string>:4:13: error: matmul reduces over mismatched dims: 3 vs 4"
            " (shapes (2, 3) and (4, 5))"
        ),
        "            y = R.matmul(x, w)",
        "                ^^^^^^^^^^^^^^",
    ])  # fmt: skip


def test_broadcast_and_dtype_mismatches():
    params = 'x: R.Tensor((2, 3), "float32"), w: R.Tensor((4, 5), "float32")'
    err = parse_error(function("y = R.add(x, w)", "return y", params=params))
    assert "cannot broadcast shapes (2, 3) and (4, 5)" in err.message
    params = 'x: R.Tensor((2, 3), "float32"), w: R.Tensor((2, 3), "int32")'
    err = parse_error(function("y = R.add(x, w)", "return y", params=params))
    assert "float32 vs int32" in err.message and err.line == 3


def test_annotation_contradicting_the_inferred_struct_info():
    err = parse_error(function('y: R.Tensor((2, 4), "float32") = R.exp(x)', "return y"))
    assert (err.line, err.column) == (3, 8)
    assert err.message == (
        'the annotation of y is R.Tensor((2, 4), dtype="float32") but its value is '
        'R.Tensor((2, 3), dtype="float32") (dim 1 is 4 vs 3)'
    )


def test_return_annotation_is_checked():
    text = "\n".join([
        "@R.function",
        'def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "int8"):',
        "    return x",
    ])  # fmt: skip
    err = parse_error(text)
    assert err.line == 2 and "dtype int8 vs float32" in err.message


def test_unknown_name_and_missing_return():
    err = parse_error(function("y = R.exp(z)", "return y"))
    assert (err.line, err.column, err.message) == (3, 15, "unknown name 'z'")
    err = parse_error(function("y = R.exp(x)"))
    assert err.message == "the function must end with `return value`"


def test_dataflow_variable_used_after_its_block():
    err = parse_error(
        function("with R.dataflow():", "    y = R.exp(x)", "    R.output()", "return y")
    )
    assert err.message == "y is local to its dataflow block; export it with R.output(y)"
    assert (err.line, err.column) == (6, 12)


def test_dataflow_block_needs_output_last():
    err = parse_error(function("with R.dataflow():", "    y = R.exp(x)", "return x"))
    assert err.message == "a dataflow block must end with R.output(...)"


def test_missing_module_function_and_parameter_annotation():
    text = "\n".join([
        "@I.ir_module",
        "class Module:",
        "    @R.function",
        '    def main(x: R.Tensor((2,), "float32")):',
        '        y = R.call_tir(cls.nope, (x,), out_sinfo=R.Tensor((2,), "float32"))',
        "        return y",
    ])  # fmt: skip
    err = parse_error(text)
    assert (err.line, err.column) == (5, 24)
    assert err.message == "the module has no function 'nope' (it has: main)"
    err = parse_error(function("return x", params="x"))
    assert err.message == "parameter x needs struct info, e.g. R.Tensor(...)"


def test_if_needs_else_and_matching_results():
    params = 'c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")'
    err = parse_error(function("if c:", "    y = x", "return y", params=params))
    assert err.message == "an `if` in a relax function needs an `else` branch"
    err = parse_error(
        function("if c:", "    y = x", "else:", "    z = x", "return y", params=params)
    )
    assert err.message == "both branches must end by assigning y"


def test_errors_in_a_decorated_function_point_into_this_file():
    with pytest.raises(ParseError) as info:

        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            y = R.reshape(x, R.shape([4, 2]))
            return y

    err = info.value
    assert err.filename == __file__
    with open(__file__) as source:
        lines = source.read().splitlines()
    assert lines[err.line - 1].strip() == "y = R.reshape(x, R.shape([4, 2]))"
    assert "cannot reshape (2, 3) (6 elements) to (4, 2) (8 elements)" in err.message
