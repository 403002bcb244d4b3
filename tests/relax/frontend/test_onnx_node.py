"""The ONNX backend node tests shipped with `onnx`, through `from_onnx` (and the VM).

Every collected case is imported and the struct info of `main`'s result must match
the expected outputs; a representative subset also runs numerically in the default
suite, and all of them in the `slow` suite.  The cases expected to fail are listed,
with a reason each, in `onnx_node_expected_failures.py`; they are strict xfails, so
the suite passes exactly when those (and only those) fail.
"""

from __future__ import annotations

import pytest

from unity.runtime.cuda import is_available

from .onnx_node_expected_failures import GPU_FAILURES, IMPORT_FAILURES, NUMERIC_FAILURES
from .onnx_node_runner import (
    check_struct_info, expected_outputs, import_case, in_child, node_cases, run_case,
)  # fmt: skip

NAMES = sorted(node_cases())

FAST_NUMERIC = [
    "test_abs", "test_add_bcast", "test_argmax_keepdims_example", "test_averagepool_2d_pads",
    "test_averagepool_2d_same_upper", "test_basic_conv_with_padding", "test_batchnorm_example",
    "test_cast_FLOAT_to_DOUBLE", "test_clip_default_min", "test_concat_3d_axis_negative_1",
    "test_conv_with_strides_and_asymmetric_padding", "test_convtranspose_pads", "test_cumsum_1d_reverse_exclusive",
    "test_depthtospace_crd_mode_example", "test_div_bcast", "test_einsum_batch_matmul", "test_elu",
    "test_expand_dim_changed", "test_flatten_axis2", "test_gather_negative_indices",
    "test_gather_elements_negative_indices", "test_gelu_tanh_2", "test_gemm_all_attributes",
    "test_globalaveragepool", "test_group_normalization_example", "test_gru_defaults", "test_hardmax_axis_1",
    "test_hardswish", "test_instancenorm_example", "test_layer_normalization_4d_axis_negative_2",
    "test_leakyrelu", "test_logsoftmax_axis_1", "test_lrn", "test_lstm_with_peepholes",
    "test_matmul_4d", "test_max_example", "test_maxpool_2d_ceil", "test_maxpool_2d_same_lower",
    "test_mean_example", "test_mod_mixed_sign_int32", "test_onehot_negative_indices", "test_constant_pad", "test_edge_pad",
    "test_pow_types_float32_int64", "test_prelu_broadcast", "test_reduce_log_sum_desc_axes",
    "test_reduce_mean_default_axes_keepdims_example", "test_reshape_negative_extended_dims",
    "test_resize_upsample_scales_linear", "test_selu", "test_shape_start_1", "test_slice_negative_axes",
    "test_softmax_axis_0", "test_spacetodepth_example", "test_split_variable_parts_2d_opset18",
    "test_squeeze_negative_axes", "test_sum_example", "test_tile", "test_top_k", "test_transpose_all_permutations_3",
    "test_tril_neg", "test_unsqueeze_two_axes", "test_where_long_example", "test_attention_4d_causal",
    "test_dequantizelinear_axis", "test_qlinearmatmul_2D_uint8_float32",
]  # fmt: skip
"""A spread of op families run numerically in the default suite (a few seconds each at most)."""


def _params(names: list[str], *failure_lists: dict[str, str]) -> list[object]:
    params = []
    for name in names:
        reason = next((f[name] for f in failure_lists if name in f), None)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


def test_failure_lists_name_only_collected_cases():
    unknown = sorted((IMPORT_FAILURES.keys() | NUMERIC_FAILURES.keys() | GPU_FAILURES.keys()) - set(NAMES))
    assert not unknown, f"expected-failure entries for cases that do not exist: {unknown}"
    assert not IMPORT_FAILURES.keys() & NUMERIC_FAILURES.keys()
    assert all(reason.strip() for reason in (*IMPORT_FAILURES.values(), *NUMERIC_FAILURES.values()))


@pytest.mark.parametrize("name", _params(NAMES, IMPORT_FAILURES))
def test_node_imports_with_expected_struct_info(name: str):
    case = node_cases()[name]
    check_struct_info(import_case(case), expected_outputs(case))


@pytest.mark.parametrize("name", _params(FAST_NUMERIC, IMPORT_FAILURES, NUMERIC_FAILURES))
def test_node_runs_numerically_fast_subset(name: str):
    _run(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", _params(NAMES, IMPORT_FAILURES, NUMERIC_FAILURES))
def test_node_runs_numerically(name: str):
    _run(name)


def _gpu_names(names: list[str]) -> list[object]:
    """The cases to run on the emulated GPU: those the CPU runs (a CPU numeric failure is
    about LLVM's semantics, which the emulator's numpy does not share)."""
    return _params([n for n in names if n not in NUMERIC_FAILURES], IMPORT_FAILURES, GPU_FAILURES)


@pytest.mark.parametrize("name", _gpu_names(FAST_NUMERIC))
def test_node_runs_on_the_emulated_gpu_fast_subset(name: str):
    _run(name, "cuda")


@pytest.mark.slow
@pytest.mark.parametrize("name", _gpu_names(NAMES))
def test_node_runs_on_the_emulated_gpu(name: str):
    """Every case compiled for cuda (the default GPU schedules) and run in the GPU
    emulator: any model that runs on the CPU must run on the GPU."""
    _run(name, "cuda")


@pytest.mark.gpu
@pytest.mark.skipif(not is_available(), reason="needs a CUDA GPU and pycuda or cuda-python")
@pytest.mark.parametrize("name", _gpu_names(FAST_NUMERIC))
def test_node_runs_on_the_gpu_fast_subset(name: str):
    """The fast subset on a real GPU (the kernels compiled by nvcc, run by the driver)."""
    failure = run_case_or_error(name, "cuda", on_gpu=True)
    assert failure is None, failure


def run_case_or_error(name: str, target: str, on_gpu: bool = False) -> str | None:
    try:
        run_case(name, target, on_gpu)
    except Exception as err:  # noqa: BLE001 - reported as the case's failure
        return f"{type(err).__name__}: {err}"[:600]
    return None


def _run(name: str, target: str = "llvm") -> None:
    failure = in_child(lambda: run_case(name, target))  # a crashing kernel fails this case only
    assert failure is None, failure
