"""The `unity` command line: user errors, compile -> run round trip, bench."""

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from unity.cli.main import main


def _mlp_model(path) -> np.ndarray:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 4)).astype("float32")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Relu", ["h"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))
    return w


def test_missing_file_is_one_line_and_exit_code_2(capsys):
    assert main(["compile", "no_such_model.onnx"]) == 2
    err = capsys.readouterr().err
    assert err == "unity: error: no such file: no_such_model.onnx\n"


def test_not_an_onnx_model(tmp_path, capsys):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not protobuf")
    assert main(["bench", str(bad)]) == 2
    assert "is not an ONNX model" in capsys.readouterr().err


@pytest.mark.parametrize("item", ["x", "x=", "x=1,a", "x=-1"])
def test_bad_shape_argument(item, tmp_path, capsys):
    model = tmp_path / "m.onnx"
    _mlp_model(model)
    assert main(["compile", str(model), "--shape", item]) == 2
    assert "bad --shape" in capsys.readouterr().err


def test_compile_then_run_with_input_file(tmp_path, capsys):
    model = tmp_path / "mlp.onnx"
    w = _mlp_model(model)
    lib = tmp_path / "mlp.so"
    assert main(["compile", str(model), "-o", str(lib)]) == 0
    x = np.random.default_rng(1).standard_normal((3, 8)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out.npz"
    assert main(["run", str(lib), "--input", f"x={tmp_path / 'x.npy'}", "--output", str(out)]) == 0
    np.testing.assert_allclose(np.load(out)["output_0"], np.maximum(x @ w, 0), rtol=1e-5, atol=1e-6)


def test_run_with_random_inputs_needs_the_symbolic_dim(tmp_path, capsys):
    model = tmp_path / "mlp.onnx"
    _mlp_model(model)
    lib = tmp_path / "mlp.so"
    assert main(["compile", str(model), "-o", str(lib)]) == 0
    capsys.readouterr()
    assert main(["run", str(lib)]) == 2
    assert "dimension 'batch' of unknown size" in capsys.readouterr().err
    assert main(["run", str(lib), "--shape", "batch=5"]) == 0
    assert "output 0: shape (5, 4) dtype float32" in capsys.readouterr().out


def test_run_rejects_a_file_that_is_not_a_model(tmp_path, capsys):
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"\x7fELF garbage")
    assert main(["run", str(junk)]) == 2
    assert "is not a model compiled by unity" in capsys.readouterr().err


def test_bench_prints_both_latencies_and_the_ratio(tmp_path, capsys):
    model = tmp_path / "mlp.onnx"
    _mlp_model(model)
    assert main(["bench", str(model), "--shape", "x=2,8", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert "unity" in out and "onnxruntime" in out and "ratio unity/onnxruntime" in out
    diff = float(out.split("max |unity - onnxruntime| over outputs:")[1].split()[0])
    assert diff < 1e-4


def test_a_cuda_build_without_a_gpu_is_a_one_line_error(tmp_path, capsys):
    from unity.runtime.cuda import is_available

    if is_available():
        pytest.skip("a GPU is here")
    model = tmp_path / "mlp.onnx"
    _mlp_model(model)
    assert main(["bench", str(model), "--shape", "x=2,8", "--target", "cuda", "--repeat", "1"]) == 2
    err = capsys.readouterr().err
    assert "\nunity: error: this model is compiled for cuda, and CUDA is not available: " in err
    assert "compile it with --target llvm" in err and "Traceback" not in err
    lib = tmp_path / "mlp.so"
    assert main(["compile", str(model), "--target", "cuda", "-o", str(lib)]) == 0
    assert main(["run", str(lib), "--shape", "batch=2"]) == 2
    assert "this model is compiled for cuda" in capsys.readouterr().err


def test_bench_of_a_cuda_build_runs_on_the_device(tmp_path, capsys):
    """On a (here: emulated) CUDA device, bench times the GPU build against onnxruntime."""
    from unity.runtime.cuda.device_api import use_driver
    from unity.runtime.cuda.emulated import EmulatedDriver

    model = tmp_path / "mlp.onnx"
    _mlp_model(model)
    with use_driver(EmulatedDriver()) as drv:
        assert main(["bench", str(model), "--shape", "x=2,8", "--target", "cuda", "--repeat", "2"]) == 0
        assert drv.launches >= 1 + 2
    out = capsys.readouterr().out
    assert "[unity] onnxruntime on CPU" in out and "ratio unity/onnxruntime" in out
    assert float(out.split("max |unity - onnxruntime| over outputs:")[1].split()[0]) < 1e-4


def test_console_script_is_installed():
    result = subprocess.run(
        [sys.executable, "-m", "unity.cli.main", "--version"], capture_output=True, text=True
    )
    assert result.returncode == 0 and "unity 0.1.0" in result.stdout


@pytest.mark.slow
def test_bench_on_the_embedded_default_model(capsys):
    assert main(["bench", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    diff = float(out.split("max |unity - onnxruntime| over outputs:")[1].split()[0])
    assert diff < 1e-4


def test_jobs_reach_the_build_and_must_not_be_negative(tmp_path, capsys, monkeypatch):
    import unity.codegen.build_jobs as build_jobs
    from unity.ir.transform import PassContext

    seen = []
    split = build_jobs.split_jobs

    def spy(costs):
        seen.append(PassContext.current().get_config("build.jobs"))
        return split(costs)

    monkeypatch.setattr(sys.modules["unity.codegen.build"], "split_jobs", spy)
    model = tmp_path / "mlp.onnx"
    _mlp_model(model)
    assert main(["compile", str(model), "-j", "1", "-o", str(tmp_path / "mlp.so")]) == 0
    assert seen == [1]
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(["compile", str(model), "--jobs", "-1"])
    assert exit_.value.code == 2
    assert "argument -j/--jobs: must be >= 0, got -1" in capsys.readouterr().err
