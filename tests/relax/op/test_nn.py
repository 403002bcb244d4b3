"""Struct-info inference of the nn ops (convolution, pooling, activations, norms, pad)."""

import pytest

from unity.ir.diagnostics import DiagnosticError
from unity.relax import TensorStructInfo, TupleStructInfo, Var, op, sym

from .helpers import infer, shape_of, tensor

nn = op.nn


def test_conv2d_symbolic_batch_with_stride_padding_dilation():
    x, w = tensor("x", ("n", 3, 32, 32)), tensor("w", (16, 3, 3, 3))
    assert shape_of(nn.conv2d(x, w)) == ("n", "16", "30", "30")
    assert shape_of(nn.conv2d(x, w, strides=2, padding=1)) == ("n", "16", "16", "16")
    assert shape_of(nn.conv2d(x, w, padding=2, dilation=2)) == ("n", "16", "32", "32")
    assert shape_of(nn.conv2d(x, w, strides=(2, 1), padding=(1, 0, 0, 0))) == ("n", "16", "16", "30")


def test_conv2d_symbolic_spatial_dims():
    x, w = tensor("x", (1, 3, "h", "w"), ), tensor("k", (8, 3, 3, 3))
    assert shape_of(nn.conv2d(x, w, padding=1)) == ("1", "8", "h", "w")
    out_h = infer(nn.conv2d(x, w, strides=2, padding=1)).shape[2]
    for h in range(1, 12):  # (h + 2 - 3) // 2 + 1
        assert out_h.subs(sym("h"), h) == (h - 1) // 2 + 1


def test_conv2d_nhwc_hwio_and_groups():
    x, w = tensor("x", ("n", 32, 32, 8)), tensor("w", (3, 3, 2, 16))
    call = nn.conv2d(x, w, padding=1, groups=4, data_layout="NHWC", kernel_layout="HWIO")
    assert shape_of(call) == ("n", "32", "32", "16")
    depthwise = nn.conv2d(tensor("x", ("n", 8, 10, 10)), tensor("w", (8, 1, 3, 3)), groups=8)
    assert shape_of(depthwise) == ("n", "8", "8", "8")


def test_conv2d_errors():
    x = tensor("x", ("n", 3, 32, 32))
    with pytest.raises(DiagnosticError, match="data channels 3 = weight in-channels 4 \\* groups 1"):
        infer(nn.conv2d(x, tensor("w", (16, 4, 3, 3))))
    with pytest.raises(DiagnosticError, match="conv2d expects a 4-D weight, got rank 3"):
        infer(nn.conv2d(x, tensor("w", (16, 3, 3))))
    with pytest.raises(DiagnosticError, match="empty output height"):
        infer(nn.conv2d(tensor("x", (1, 3, 2, 2)), tensor("w", (1, 3, 5, 5))))
    with pytest.raises(DiagnosticError, match="matching dtypes"):
        infer(nn.conv2d(x, tensor("w", (16, 3, 3, 3), "float16")))


def test_conv2d_transpose():
    x, w = tensor("x", ("n", 16, 8, 8)), tensor("w", (16, 4, 4, 4))
    assert shape_of(nn.conv2d_transpose(x, w, strides=2, padding=1)) == ("n", "4", "16", "16")
    assert shape_of(nn.conv2d_transpose(x, w, strides=2, padding=1, output_padding=1)) == ("n", "4", "17", "17")


def test_pooling():
    x = tensor("x", ("n", 3, 32, 32))
    assert shape_of(nn.max_pool2d(x, 2)) == ("n", "3", "16", "16")
    assert shape_of(nn.avg_pool2d(x, 3, strides=2, padding=1)) == ("n", "3", "16", "16")
    assert shape_of(nn.max_pool2d(tensor("y", (1, 1, 5, 5)), 2, ceil_mode=True)) == ("1", "1", "3", "3")
    assert shape_of(nn.max_pool2d(tensor("y", ("n", 7, 7, 3)), 3, 2, layout="NHWC")) == ("n", "3", "3", "3")
    assert shape_of(nn.adaptive_avg_pool2d(x, 1)) == ("n", "3", "1", "1")
    with pytest.raises(DiagnosticError, match="max_pool2d expects a 4-D input, got rank 2"):
        infer(nn.max_pool2d(tensor("z", (2, 2)), 2))


def test_conv2d_blocked_data_takes_an_oihw_kernel_and_gives_blocked_output():
    x = tensor("x", ("n", 2, 9, 9, 16))  # NCHW16c of (n, 32, 9, 9)
    assert shape_of(nn.conv2d(x, tensor("w", (64, 32, 3, 3)), strides=2, padding=1,
                              data_layout="NCHW16c")) == ("n", "4", "5", "5", "16")  # fmt: skip
    grouped = nn.conv2d(x, tensor("w", (32, 16, 1, 1)), groups=2, data_layout="NCHW16c")
    assert shape_of(grouped) == ("n", "2", "9", "9", "16")
    depthwise = nn.conv2d(x, tensor("w", (32, 1, 3, 3)), groups=32, data_layout="NCHW16c")
    assert shape_of(depthwise) == ("n", "2", "7", "7", "16")
    unknown = infer(nn.conv2d(Var("u", TensorStructInfo(None, "float32", 5)),
                              tensor("w", (16, 16, 1, 1)), data_layout="NCHW16c"))  # fmt: skip
    assert unknown.ndim == 5 and unknown.shape is None


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "groups", "kernel_layout", "message"),
    [(("n", 2, 8, 8, 16), (24, 32, 1, 1), 1, "OIHW",
      "conv2d expects output channels \\(24\\) divisible by the block 16"),
     (("n", 2, 8, 8, 16), (32, 8, 1, 1), 4, "OIHW",
      "conv2d with groups=4 expects C/groups \\(8\\) and O/groups \\(8\\) divisible by the "
      "block 16, or a depthwise conv \\(groups = C = O\\)"),
     (("n", 2, 8, 8, 16), (1, 1, 32, 32), 1, "HWIO",
      'conv2d takes kernel_layout "OIHW" with data_layout "NCHW16c", got "HWIO"'),
     (("n", 32, 8, 8), (32, 32, 1, 1), 1, "OIHW",
      'conv2d expects 5-D data \\(N, C/16, H, W, 16\\) for data_layout "NCHW16c", got rank 4'),
     (("n", 4, 8, 8, 8), (32, 32, 1, 1), 1, "OIHW",
      'expects data \\(N, C/16, H, W, 16\\) for data_layout "NCHW16c", got \\(n, 4, 8, 8, 8\\)'),
     (("n", 2, 8, 8, 16), (32, 16, 1, 1), 1, "OIHW",
      "data channels 32 = weight in-channels 16 \\* groups 1")],
)  # fmt: skip
def test_conv2d_blocked_errors(x_shape, w_shape, groups, kernel_layout, message):
    call = nn.conv2d(tensor("x", x_shape), tensor("w", w_shape), groups=groups,
                     data_layout="NCHW16c", kernel_layout=kernel_layout)  # fmt: skip
    with pytest.raises(DiagnosticError, match=message):
        infer(call)


def test_conv2d_nchw_data_writes_a_blocked_out_layout():
    image, w = tensor("x", ("n", 3, 32, 32)), tensor("w", (32, 3, 3, 3))
    call = nn.conv2d(image, w, strides=2, padding=1, out_layout="NCHW16c")
    assert call.attrs.out_layout == "NCHW16c" and call.attrs.data_layout == "NCHW"
    assert shape_of(call) == ("n", "2", "16", "16", "16")
    x24 = tensor("x", (1, 24, 7, 7))  # input channels that are not whole blocks
    assert shape_of(nn.conv2d(x24, tensor("w", (16, 24, 1, 1)), out_layout="NCHW8c")) == (
        "1", "2", "7", "7", "8")  # fmt: skip
    assert shape_of(nn.conv2d(image, w, out_layout="NCHW")) == ("n", "32", "30", "30")
    assert nn.conv2d(image, w).attrs.out_layout is None  # None: the data_layout
    blocked = tensor("b", ("n", 2, 9, 9, 16))
    same = nn.conv2d(blocked, tensor("w", (32, 32, 1, 1)), data_layout="NCHW16c",
                     out_layout="NCHW16c")  # fmt: skip
    assert shape_of(same) == ("n", "2", "9", "9", "16")
    unknown = infer(nn.conv2d(Var("u", TensorStructInfo(None, "float32", 4)), w,
                              out_layout="NCHW16c"))  # fmt: skip
    assert unknown.ndim == 5 and unknown.shape is None


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "groups", "layouts", "message"),
    [(("n", 3, 8, 8), (32, 3, 3, 3), 1, ("NCHW", "OIHW", "NHWC"),
      'conv2d takes out_layout None, the data_layout "NCHW" or a blocked "NCHW{b}c", '
      'got "NHWC"'),
     (("n", 8, 8, 3), (32, 3, 3, 3), 1, ("NHWC", "OIHW", "NCHW16c"),
      'conv2d writes out_layout "NCHW16c" only from data_layout "NCHW", got "NHWC"'),
     (("n", 2, 8, 8, 16), (32, 32, 1, 1), 1, ("NCHW16c", "OIHW", "NCHW8c"),
      'conv2d writes out_layout "NCHW8c" only from data_layout "NCHW", got "NCHW16c"'),
     (("n", 3, 8, 8), (3, 3, 3, 32), 1, ("NCHW", "HWIO", "NCHW16c"),
      'conv2d writes out_layout "NCHW16c" only with kernel_layout "OIHW", got "HWIO"'),
     (("n", 6, 8, 8), (48, 2, 3, 3), 3, ("NCHW", "OIHW", "NCHW16c"),
      'conv2d writes out_layout "NCHW16c" only with groups=1, got groups=3'),
     (("n", 3, 8, 8), (24, 3, 3, 3), 1, ("NCHW", "OIHW", "NCHW16c"),
      "conv2d expects output channels (24) divisible by the block 16"),
     (("n", 3, 8, 8), (32, 4, 3, 3), 1, ("NCHW", "OIHW", "NCHW16c"),
      "conv2d expects data channels 3 = weight in-channels 4 * groups 1")],
)  # fmt: skip
def test_conv2d_out_layout_errors(x_shape, w_shape, groups, layouts, message):
    data_layout, kernel_layout, out_layout = layouts
    call = nn.conv2d(tensor("x", x_shape), tensor("w", w_shape), groups=groups,
                     data_layout=data_layout, kernel_layout=kernel_layout,
                     out_layout=out_layout)  # fmt: skip
    with pytest.raises(DiagnosticError) as err:
        infer(call)
    assert message in str(err.value)


def test_conv2d_transpose_refuses_an_out_layout():
    from unity.relax import Call
    from unity.relax.op.nn.convolution import Conv2DAttrs

    x, w = tensor("x", (1, 16, 4, 4)), tensor("w", (16, 16, 3, 3))
    attrs = Conv2DAttrs(kernel_layout="IOHW", out_layout="NCHW16c")
    message = 'conv2d_transpose takes no out_layout (its result is in data_layout), got "NCHW16c"'
    with pytest.raises(DiagnosticError) as err:
        infer(Call(nn.conv2d_transpose, (x, w), attrs))
    assert message in str(err.value)


def test_conv2d_transpose_refuses_a_blocked_layout():
    call = nn.conv2d_transpose(tensor("x", (1, 2, 4, 4, 8)), tensor("w", (16, 8, 3, 3)),
                               data_layout="NCHW8c")  # fmt: skip
    message = 'conv2d_transpose does not take the blocked layout "NCHW8c"'
    with pytest.raises(DiagnosticError, match=message):
        infer(call)


def test_pooling_blocked_pools_axes_2_and_3():
    x = tensor("x", ("n", 2, 9, 9, 16))
    pooled = ("n", "2", "5", "5", "16")
    assert shape_of(nn.max_pool2d(x, 3, 2, padding=1, layout="NCHW16c")) == pooled
    assert shape_of(nn.avg_pool2d(x, 2, ceil_mode=True, layout="NCHW16c")) == pooled
    assert shape_of(nn.adaptive_avg_pool2d(x, 1, layout="NCHW16c")) == ("n", "2", "1", "1", "16")
    unknown = Var("u", TensorStructInfo(None, "float32", 5))
    assert infer(nn.max_pool2d(unknown, 2, layout="NCHW8c")).ndim == 5
    with pytest.raises(DiagnosticError, match="max_pool2d expects a 5-D input, got rank 4"):
        infer(nn.max_pool2d(tensor("y", (1, 32, 4, 4)), 2, layout="NCHW16c"))
    message = 'expects \\(N, C/16, H, W, 16\\) for layout "NCHW16c", got \\(1, 2, 4, 4, 8\\)'
    with pytest.raises(DiagnosticError, match=message):
        infer(nn.avg_pool2d(tensor("y", (1, 2, 4, 4, 8)), 2, layout="NCHW16c"))


def test_activations_and_softmax():
    x = tensor("x", ("n", 10))
    for fn in (nn.relu, nn.gelu, nn.silu):
        assert shape_of(fn(x)) == ("n", "10")
    assert shape_of(nn.softmax(x, axis=1)) == ("n", "10")
    assert shape_of(nn.log_softmax(x)) == ("n", "10")
    with pytest.raises(DiagnosticError, match="softmax axis 2 is out of range for a tensor of rank 2"):
        infer(nn.softmax(x, axis=2))
    drop = infer(nn.dropout(x, 0.1))
    assert isinstance(drop, TupleStructInfo) and len(drop.fields) == 2


def test_batch_norm_layer_norm_group_norm():
    x, c = tensor("x", ("n", 8, 4, 4)), tensor("c", (8,))
    bn = infer(nn.batch_norm(x, c, c, c, c))
    assert isinstance(bn, TupleStructInfo) and tuple(map(str, bn.fields[0].shape)) == ("n", "8", "4", "4")
    with pytest.raises(DiagnosticError, match=r"batch_norm expects gamma of shape \(8,\), got \(3,\)"):
        infer(nn.batch_norm(x, tensor("g", (3,)), c, c, c))
    assert shape_of(nn.layer_norm(x, tensor("g", (4, 4)), tensor("b", (4, 4)), axes=[-2, -1])) == ("n", "8", "4", "4")
    with pytest.raises(DiagnosticError, match="layer_norm expects gamma of shape"):
        infer(nn.layer_norm(x, c, c, axes=-1))
    assert shape_of(nn.group_norm(x, c, c, num_groups=4)) == ("n", "8", "4", "4")
    with pytest.raises(DiagnosticError, match="divisible by num_groups=3"):
        infer(nn.group_norm(x, c, c, num_groups=3))


def test_pad():
    x = tensor("x", ("n", 3, 8, 8))
    assert shape_of(nn.pad(x, [0, 0, 0, 0, 1, 1, 2, 0])) == ("n", "3", "10", "10")
    with pytest.raises(DiagnosticError, match="pad expects 8 pad widths for rank 4, got 2"):
        infer(nn.pad(x, [1, 1]))
