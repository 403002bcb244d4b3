"""The three commands: `compile` an ONNX model, `run` a compiled one, `bench` against onnxruntime.

Example:
    >>> from unity.cli.main import main
    >>> main(["bench", "--repeat", "3"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from unity.cli.errors import CliError
from unity.cli.inputs import load_inputs, parse_shapes, random_input, resolve_dims
from unity.cli.progress import PassProgress, Stage
from unity.cli.timing import alternate_latencies


def load_onnx(path: str | None, shapes: dict[str, tuple[int, ...]]) -> tuple[Any, str]:
    """Load `path` (or the embedded default model) as an `onnx.ModelProto` and its label.

    Example:
        >>> load_onnx("missing.onnx", {})
        Traceback (most recent call last):
            ...
        unity.cli.errors.CliError: no such file: missing.onnx
        >>> load_onnx(None, {})[1]  # the embedded default model
        'light_resnet50 (embedded default, random weights)'
    """
    import onnx

    from unity.cli.default_model import DEFAULT_NAME, default_model

    if path is None:
        return default_model(), f"{DEFAULT_NAME} (embedded default, random weights)"
    file = Path(path)
    if not file.is_file():
        raise CliError(f"no such file: {path}")
    try:
        model = onnx.load(str(file))
    except Exception as err:  # noqa: BLE001 - protobuf raises several types
        raise CliError(f"{path} is not an ONNX model ({type(err).__name__}: {err})") from None
    if not model.graph.node:
        raise CliError(f"{path} is not an ONNX model (it has no graph nodes)")
    return model, path


def compile_model(model: Any, args: argparse.Namespace, shapes: dict[str, tuple[int, ...]]) -> Any:
    """Import and compile an ONNX model with a progress display; returns the Executable.

    Example:
        >>> args = argparse.Namespace(target="llvm", opt_level=2, dump_ir=None)  # doctest: +SKIP
        >>> ex = compile_model(load_onnx("model.onnx", {})[0], args, {})  # doctest: +SKIP
    """
    import unity
    from unity.ir.transform import PassContext
    from unity.relax.frontend.onnx import from_onnx

    inputs = _graph_inputs(model)
    shape_dict = {name: shapes[name] for name in inputs if name in shapes}
    with Stage("import ONNX"):
        mod = from_onnx(model, shape_dict=shape_dict or None)
    if args.dump_ir:
        Path(args.dump_ir).mkdir(parents=True, exist_ok=True)
        (Path(args.dump_ir) / "00_imported.py").write_text(mod.script())
    with Stage(f"compile for {args.target} (opt level {args.opt_level})"):
        jobs = {"build.jobs": getattr(args, "jobs", 0)}
        with PassContext(opt_level=args.opt_level, instruments=[PassProgress()], config=jobs):
            ex = unity.compile(mod, target=args.target)
    return ex


def _graph_inputs(model: Any) -> list[str]:
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def _onnx_input_specs(model: Any) -> list[tuple[str, list[int | str | None], str]]:
    from onnx import helper

    initializers = {t.name for t in model.graph.initializer}
    specs = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        dims: list[int | str | None] = [
            d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tensor.shape.dim
        ]
        specs.append((value.name, dims, str(np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type)))))
    return specs


def _executable_input_specs(ex: Any) -> list[tuple[str, list[int | str | None], str]]:
    fn = ex.program["functions"].get("main")
    if fn is None:
        raise CliError("the compiled model has no 'main' function")
    slot_names = [s[0] for s in fn.get("slots", [])]
    specs = []
    for param in fn["params"]:
        spec = param["spec"]
        if spec[0] != "tensor" or spec[3] is None:
            raise CliError(f"input {param['name']!r} is not a tensor of known rank; give --input")
        dims = [_dim_name(d, slot_names) for d in spec[3]]
        specs.append((param["name"], dims, spec[1] or "float32"))
    return specs


def _dim_name(dim: Any, slot_names: list[str]) -> int | str | None:
    if isinstance(dim, int):
        return dim
    if isinstance(dim, list) and dim and dim[0] == "bind":
        return slot_names[dim[1]]
    return None


def make_inputs(
    specs: Sequence[tuple[str, list[int | str | None], str]],
    given: dict[str, np.ndarray],
    shapes: dict[str, tuple[int, ...]],
    seed: int = 0,
) -> list[np.ndarray]:
    """The inputs in order: given arrays, else random arrays of the resolved shape.

    Example:
        >>> specs = [("x", [2, "n"], "float32"), ("y", [3], "int64")]
        >>> x, y = make_inputs(specs, {"y": np.arange(3)}, {"x": (2, 5)})
        >>> x.shape, y
        ((2, 5), array([0, 1, 2]))
    """
    rng = np.random.default_rng(seed)
    unknown = sorted(set(given) - {name for name, _, _ in specs})
    if unknown:
        raise CliError(f"--input names no model input: {', '.join(unknown)}")
    out = []
    for name, dims, dtype in specs:
        if name in given:
            out.append(given[name])
        else:
            out.append(random_input(resolve_dims(dims, name, shapes), dtype, rng))
    return out


def cmd_compile(args: argparse.Namespace) -> int:
    """`unity compile [model.onnx] -o model.so`.

    Example:
        >>> from unity.cli.main import main
        >>> main(["compile", "model.onnx", "-o", "model.so"])  # runs cmd_compile  # doctest: +SKIP
        0
    """
    shapes = parse_shapes(args.shape)
    model, label = load_onnx(args.model, shapes)
    print(f"[unity] model: {label}")
    ex = compile_model(model, args, shapes)
    output = args.output or (Path(args.model).with_suffix(".so").name if args.model else "model.so")
    with Stage(f"export {output}"):
        ex.export_library(str(output))
    print(f"[unity] wrote {output}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """`unity run model.so --input x=file.npy [--output out.npz]`.

    Example:
        >>> from unity.cli.main import main
        >>> main(["run", "model.so", "--input", "x=x.npy"])  # runs cmd_run  # doctest: +SKIP
        0
    """
    from unity import runtime

    path = args.model
    if path is None:
        raise CliError("unity run needs a compiled model (.so); make one with unity compile")
    if not Path(path).is_file():
        raise CliError(f"no such file: {path}")
    try:
        ex = runtime.load_module(path)
    except Exception as err:  # noqa: BLE001 - any loader failure is a bad file for the user
        raise CliError(f"{path} is not a model compiled by unity ({err})") from None
    if not hasattr(ex, "program"):
        raise CliError(f"{path} is a kernel library, not a compiled model: use unity.runtime")
    shapes = parse_shapes(args.shape)
    inputs = make_inputs(_executable_input_specs(ex), load_inputs(args.input), shapes)
    vm = _virtual_machine(ex)
    result = _as_arrays(vm["main"](*inputs))
    for i, array in enumerate(result):
        print(f"output {i}: shape {array.shape} dtype {array.dtype} "
              f"min {array.min() if array.size else 0:.6g} max {array.max() if array.size else 0:.6g}")
    if args.output:
        np.savez(args.output, **{f"output_{i}": a for i, a in enumerate(result)})
        print(f"[unity] wrote {args.output}")
    return 0


def _virtual_machine(ex: Any) -> Any:
    """A VM for `ex` on its device: the CPU, or CUDA GPU 0 for a `--target cuda` build."""
    from unity.runtime.cuda import CudaUnavailableError
    from unity.runtime.device import cpu, cuda
    from unity.runtime.vm import VirtualMachine

    if not _for_cuda(ex):
        return VirtualMachine(ex, cpu())
    try:
        return VirtualMachine(ex, cuda())
    except CudaUnavailableError as err:
        raise CliError(f"this model is compiled for cuda, and {err}; compile it with --target llvm "
                       "to run on the CPU") from None


def _for_cuda(ex: Any) -> bool:
    from unity.runtime.cuda.kernels import CudaKernels

    return isinstance(getattr(ex, "kernels", None), CudaKernels)


def _as_arrays(value: Any) -> list[np.ndarray]:
    if isinstance(value, (tuple, list)):
        return [a for item in value for a in _as_arrays(item)]
    return [value.numpy() if hasattr(value, "numpy") else np.asarray(value)]


def cmd_bench(args: argparse.Namespace) -> int:
    """`unity bench [model.onnx]`: unity's latency next to onnxruntime's, and the ratio.

    Example:
        >>> from unity.cli.main import main
        >>> main(["bench", "model.onnx"])  # runs cmd_bench  # doctest: +SKIP
        0
    """
    import onnxruntime as ort

    shapes = parse_shapes(args.shape)
    model, label = load_onnx(args.model, shapes)
    print(f"[unity] model: {label}")
    inputs = make_inputs(_onnx_input_specs(model), {}, shapes)
    start = time.perf_counter()
    ex = compile_model(model, args, shapes)
    compile_s = time.perf_counter() - start
    vm = _virtual_machine(ex)
    provider = "CPUExecutionProvider"
    if _for_cuda(ex) and "CUDAExecutionProvider" in ort.get_available_providers():
        provider = "CUDAExecutionProvider"  # the GPU against the GPU
    print(f"[unity] onnxruntime on {provider.replace('ExecutionProvider', '')}")
    session = ort.InferenceSession(model.SerializeToString(), providers=[provider])
    feed = dict(zip((name for name, _, _ in _onnx_input_specs(model)), inputs))
    ours = _as_arrays(vm["main"](*inputs))
    theirs = session.run(None, feed)
    diff = max(float(np.max(np.abs(a.astype(np.float64) - b))) if a.size else 0.0
               for a, b in zip(ours, theirs))
    with Stage(f"time {args.repeat} runs each"):
        t_unity, t_ort = alternate_latencies(  # outputs back on the host, as onnxruntime's are
            [lambda: _as_arrays(vm["main"](*inputs)), lambda: session.run(None, feed)], args.repeat
        )
    _report(compile_s, t_unity, t_ort, diff)
    return 0


def _report(compile_s: float, t_unity: np.ndarray, t_ort: np.ndarray, diff: float) -> None:
    print(f"compile time: {compile_s:.2f} s")
    print(f"{'':14}{'median ms':>12}{'p90 ms':>12}")
    for name, t in (("unity", t_unity), ("onnxruntime", t_ort)):
        print(f"{name:14}{np.median(t):12.3f}{np.percentile(t, 90):12.3f}")
    ratio = float(np.median(t_unity) / np.median(t_ort))
    print(f"ratio unity/onnxruntime (median latency): {ratio:.2f}x "
          f"({'slower' if ratio > 1 else 'faster'})")
    print(f"max |unity - onnxruntime| over outputs: {diff:.3g}")
