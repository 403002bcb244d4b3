"""Small helpers for the ONNX frontend tests: build a model, run it in unity and onnxruntime."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64


def tensor(name: str, elem: int, shape: Sequence[int | str | None]) -> onnx.ValueInfoProto:
    """A graph input/output declaration (None: an unnamed dynamic axis)."""
    return helper.make_tensor_value_info(name, elem, list(shape))


def model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto],
          outputs: Sequence[onnx.ValueInfoProto], initializers: dict[str, np.ndarray] | None = None,
          opset: int = 17) -> onnx.ModelProto:  # fmt: skip
    """A checked single-graph model."""
    inits = [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()]
    graph = helper.make_graph(list(nodes), "test", list(inputs), list(outputs), inits)
    out = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    out.ir_version = 8
    onnx.checker.check_model(out)
    return out


def run_unity(mod: object, *inputs: np.ndarray) -> list[np.ndarray]:
    """Compile `mod` for the CPU and run `main`; outputs as numpy arrays."""
    import unity
    from unity import relax

    ex = unity.compile(mod, target="llvm")  # type: ignore[attr-defined]
    vm = relax.VirtualMachine(ex, unity.cpu())  # type: ignore[attr-defined]
    result = vm["main"](*inputs)
    outs = list(result) if isinstance(result, tuple | list) else [result]
    return [o.numpy() if hasattr(o, "numpy") else np.asarray(o) for o in outs]


def run_ort(proto: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Run the model with onnxruntime on the CPU."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return [np.asarray(o) for o in session.run(None, feeds)]
