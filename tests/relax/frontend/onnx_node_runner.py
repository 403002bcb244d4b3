"""Run one ONNX backend node test through `from_onnx` (shared by the tests and the summary script).

`import_case` imports the model; graph inputs that feed slots which must be known at
import time (a `Reshape` shape, `Pad` pads, `TopK`'s k...) are frozen into
initializers from the test's data and the import is retried, as long as some
input stays a run-time input.  `check_struct_info` compares the struct info of
`main`'s result with the expected outputs; `check_numeric` runs the module.

Run as a script to print the outcome of every case:
``python tests/relax/frontend/onnx_node_runner.py [name-substring]``.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import numpy_helper

from unity.relax.frontend.onnx import ConstantInputRequired, from_onnx
from unity.relax.struct_info import TensorStructInfo, TupleStructInfo
from unity.runtime.narrow import widened


@functools.cache
def node_cases() -> dict[str, object]:
    """Every node test case shipped with onnx, by name (collected once per process)."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases(None)
    return {c.name: c for c in cases if c.kind == "node"}


@dataclass
class Imported:
    """A node test imported: the module, and the inputs still given at run time."""

    mod: object
    inputs: list[np.ndarray]
    frozen: list[str]


def import_case(case: object) -> Imported:
    """Import `case.model`, freezing shape-like inputs into initializers when needed (and
    possible: a node whose every input is shape-like runs on the host, `host_nodes`)."""
    model: onnx.ModelProto = case.model  # type: ignore[attr-defined]
    inputs = [_array(v) for v in case.data_sets[0][0]]  # type: ignore[attr-defined]
    names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    values = dict(zip(names, inputs, strict=False))
    frozen: list[str] = []
    while True:  # the converters first: shape-like inputs become constants
        try:
            mod = from_onnx(_freeze(model, {n: values[n] for n in frozen}), host_nodes=False)
            break
        except ConstantInputRequired as err:
            new = [n for n in err.input_names if n in values and n not in frozen]
            if not new or len(frozen) + len(new) >= len(names):  # nothing would be left to
                mod = from_onnx(_freeze(model, {n: values[n] for n in frozen}))  # run: the host
                break
            frozen.extend(new)
    runtime = [values[n] for n in names if n not in frozen]
    return Imported(mod, runtime, frozen)


def _freeze(model: onnx.ModelProto, values: dict[str, np.ndarray]) -> onnx.ModelProto:
    if not values:
        return model
    out = onnx.ModelProto()
    out.CopyFrom(model)
    keep = [i for i in out.graph.input if i.name not in values]
    del out.graph.input[:]
    out.graph.input.extend(keep)
    for name, value in values.items():
        out.graph.initializer.append(numpy_helper.from_array(np.asarray(value), name))
    return out


def expected_outputs(case: object) -> list[np.ndarray]:
    """The expected outputs of data set 0 (narrow types widened, as unity returns them)."""
    return [_widened(_array(v)) for v in case.data_sets[0][1]]  # type: ignore[attr-defined]


def _widened(value: np.ndarray | list) -> np.ndarray | list:
    return [_widened(v) for v in value] if isinstance(value, list) else widened(value)


def _array(value: object) -> np.ndarray | list:
    """A tensor's data as an array; a sequence's as a list of arrays."""
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, list | onnx.SequenceProto):
        items = numpy_helper.to_list(value) if isinstance(value, onnx.SequenceProto) else value
        return [_array(v) for v in items]
    return np.asarray(value)


def check_struct_info(imported: Imported, expected: list[np.ndarray]) -> None:
    """Assert `main` returns tensors of the expected shapes and dtypes."""
    main = imported.mod["main"]  # type: ignore[index]
    ret = main.ret_struct_info
    infos = list(ret.fields) if isinstance(ret, TupleStructInfo) and len(expected) > 1 else [ret]
    assert len(infos) == len(expected), f"{len(infos)} outputs, expected {len(expected)}"
    given = {s for p in main.params if isinstance(p.struct_info, TensorStructInfo) and p.struct_info.shape
             for d in p.struct_info.shape for s in d.free_symbols}  # fmt: skip
    for i, (sinfo, want) in _flat_outputs(infos, expected):
        assert isinstance(sinfo, TensorStructInfo), f"output {i} is {type(sinfo).__name__}"
        assert sinfo.shape is not None, f"output {i} has an unknown shape"
        got = tuple(int(d) if d.is_number else d for d in sinfo.shape)
        # a symbol no input shape holds is a data-dependent size (NonZero's count): any value
        want_shape = tuple(g if not isinstance(g, int) and not (g.free_symbols & given) else w
                           for g, w in zip(got, want.shape))  # fmt: skip
        assert len(got) == len(want.shape) and got == want_shape, f"output {i} has shape {got}, expected {want.shape}"
        assert sinfo.dtype == str(want.dtype), f"output {i} has dtype {sinfo.dtype}, expected {want.dtype}"


def check_numeric(imported: Imported, expected: list[np.ndarray], case: object, target: str = "llvm",
                  on_gpu: bool = False) -> None:
    """Run `main` with the VM (opt_level 0: no fusion) and compare with the expected outputs.

    Fusion is tested by its own suite and by the light models; here it would only add
    compile time and make the reviewed failure list depend on another pass.  With
    target "cuda" the kernels get the default GPU schedules and run in the GPU emulator
    (`EmulatedDriver`: every thread of every block, with race and bounds checks), or with
    `on_gpu` on the real device.
    """
    import unity
    from unity import relax
    from unity.ir.transform import PassContext

    with PassContext(opt_level=0):
        ex = unity.compile(imported.mod, target=target)  # type: ignore[attr-defined]
    if target == "cuda" and not on_gpu:
        from unity.runtime.cuda.device_api import use_driver
        from unity.runtime.cuda.emulated import EmulatedDriver

        with use_driver(EmulatedDriver()):
            result = relax.VirtualMachine(ex, unity.cuda())["main"](*imported.inputs)  # type: ignore[attr-defined]
            _compare(result, expected)
        return
    if target == "cuda":  # the real device
        _compare(relax.VirtualMachine(ex, unity.cuda())["main"](*imported.inputs), expected)  # type: ignore[attr-defined]
        return
    vm = relax.VirtualMachine(ex, unity.cpu())  # type: ignore[attr-defined]
    _compare(vm["main"](*imported.inputs), expected)


def _flat_outputs(outs: list, expected: list) -> list[tuple[str, tuple]]:
    """`(name, (output, expected))` for each tensor, a sequence output's tensors named
    ``i.j`` (its tuple's fields against the expected list)."""
    pairs = []
    for i, (out, want) in enumerate(zip(outs, expected, strict=True)):
        if not isinstance(want, list):
            pairs.append((str(i), (out, want)))
            continue
        fields = list(out.fields) if isinstance(out, TupleStructInfo) else list(out)
        assert len(fields) == len(want), f"output {i} is a sequence of {len(fields)}, expected {len(want)}"
        pairs.extend((f"{i}.{j}", pair) for j, pair in enumerate(zip(fields, want, strict=True)))
    return pairs


def _compare(result: object, expected: list[np.ndarray]) -> None:
    outs = list(result) if isinstance(result, tuple | list) and len(expected) > 1 else [result]
    for _, (got, want) in _flat_outputs(outs, expected):
        got_np = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
        rtol, atol = TOLERANCES.get(str(want.dtype), (1e-3, 1e-4))
        if want.dtype.kind not in "fc" and str(want.dtype) != "bfloat16":
            np.testing.assert_array_equal(got_np, want)
            continue
        np.testing.assert_allclose(got_np.astype("float64"), want.astype("float64"), rtol=rtol, atol=atol)


TOLERANCES = {"float16": (1e-2, 1e-3), "bfloat16": (5e-2, 1e-2)}
"""(rtol, atol) for outputs whose dtype cannot meet the default rtol 1e-3, atol 1e-4."""


@functools.cache
def _preload() -> None:
    """Import the compiler once in the parent, so children share it (and fork fast)."""
    import unity.codegen
    import unity.relax.vm_build  # noqa: F401


def in_child(fn: Callable[[], None]) -> str | None:
    """Run `fn` in a forked child: None when it returns, else its error (a crash included).

    Compiled kernels run in the process; a codegen bug that crashes must fail one case,
    not the whole session.
    """
    _preload()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running any cleanup of the parent
        os.close(read)
        message = b""
        try:
            fn()
        except BaseException as err:  # noqa: BLE001 - the parent reports every kind of failure
            text = str(err).strip().splitlines() or [""]
            message = f"{type(err).__name__}: {' | '.join(text[:3])[:400]}".encode() or b"error"
        os.write(write, message)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return f"crashed with signal {os.WTERMSIG(status)} ({signal.Signals(os.WTERMSIG(status)).name})"
    return message.decode() or None


def outcome(name: str) -> str:
    """'ok', or the first line of the failure (for the summary script)."""
    case = node_cases()[name]
    try:
        imported = import_case(case)
        check_struct_info(imported, expected_outputs(case))
    except Exception as err:  # noqa: BLE001 - the summary reports every kind of failure
        return f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"
    return "ok"


def run_case(name: str, target: str = "llvm", on_gpu: bool = False) -> None:
    """Import, check struct info, compile and compare one case (raises on any failure)."""
    case = node_cases()[name]
    imported = import_case(case)
    expected = expected_outputs(case)
    check_struct_info(imported, expected)
    check_numeric(imported, expected, case, target, on_gpu)


def numeric_outcome(name: str) -> str:
    """'ok', or the first line of the failure of import, struct info or the numeric run."""
    return in_child(lambda: run_case(name)) or "ok"


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    pattern = args[0] if args else ""
    first, last = (args[1], args[2]) if len(args) > 2 else ("", "~")  # a name range [first, last)
    check = numeric_outcome if "--numeric" in sys.argv else outcome
    listed = None
    if "--names" in sys.argv:  # names read from stdin, one a line
        listed = {line.strip() for line in sys.stdin if line.strip()}
    results = {}
    for n in sorted(node_cases()):
        if pattern in n and first <= n < last and (listed is None or n in listed):
            results[n] = check(n)
            print(f"{n}\t{results[n]}", flush=True)
    ok = sum(r == "ok" for r in results.values())
    print(f"# {ok} / {len(results)} ok", file=sys.stderr)
