"""The relax printer: readable script for functions, expressions and struct info."""

from unity.relax import BlockBuilder, TensorStructInfo, Var, op
from unity.relax.printer import format_struct_info


def test_function_prints_as_r_function_with_dataflow_block():
    x = Var("x", TensorStructInfo(("n", 4), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(op.exp(x))
            gv = bb.emit_output(op.sum(lv, axis=1))
        bb.emit_func_output(gv)
    assert bb.get()["main"].script() == "\n".join([
        "@R.function",
        'def main(x: R.Tensor((n, 4), dtype="float32")) -> R.Tensor((n,), dtype="float32"):',
        "    n = T.int64()",
        "    with R.dataflow():",
        '        lv: R.Tensor((n, 4), dtype="float32") = R.exp(x)',
        '        gv: R.Tensor((n,), dtype="float32") = R.sum(lv, axis=(1,), keepdims=False)',
        "        R.output(gv)",
        "    return gv",
    ])


def test_struct_info_and_call_repr():
    assert format_struct_info(TensorStructInfo(None, "int8", ndim=2)) == 'R.Tensor(ndim=2, dtype="int8")'
    x = Var("x", TensorStructInfo((2,), "float32"))
    assert repr(op.astype(x, "int8")) == 'R.astype(x, dtype="int8")'
