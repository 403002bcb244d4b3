"""The embedded default model: the light ResNet-50 that ships inside the `onnx` package.

The light models compute their weights with `ConstantOfShape` (every weight the same
value); `default_model()` replaces each such weight with a seeded random initializer
(He-scaled for convolution and dense weights, positive near the original value for
1-D parameters such as batch-norm statistics) so the model computes something
non-trivial, and removes the now-dead nodes.

Example:
    >>> model = default_model()                # doctest: +SKIP
    >>> model.graph.input[0].name              # doctest: +SKIP
    'gpu_0/data_0'
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from unity.cli.errors import CliError

DEFAULT_NAME = "light_resnet50"
"""Name of the embedded default model (a file in onnx's backend test data)."""


def light_model_path(name: str) -> Path:
    """Path of `onnx/backend/test/data/light/<name>.onnx` in the installed onnx package.

    Example:
        >>> light_model_path("light_resnet50").name
        'light_resnet50.onnx'
    """
    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"{name}.onnx"
    if not path.is_file():
        raise CliError(f"the installed onnx package has no {path.name} (looked in {path.parent})")
    return path


def with_random_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """Replace weights made by `ConstantOfShape` of a constant shape with seeded random ones.

    Example:
        >>> m = with_random_weights(onnx.load(light_model_path("light_resnet50")))  # doctest: +SKIP
    """
    rng = np.random.default_rng(seed)
    graph = model.graph
    consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    new_weights: dict[str, np.ndarray] = {}
    keep_nodes = []
    for node in graph.node:
        if node.op_type != "ConstantOfShape" or node.input[0] not in consts:
            keep_nodes.append(node)
            continue
        shape = tuple(int(d) for d in consts[node.input[0]])
        value = _fill_value(node)
        new_weights[node.output[0]] = _random_weight(shape, value, rng)
    used = {name for node in keep_nodes for name in node.input}
    initializers = [t for t in graph.initializer if t.name in used and t.name not in new_weights]
    initializers += [numpy_helper.from_array(a, name) for name, a in new_weights.items()]
    kept = {t.name for t in initializers}
    inputs = [i for i in graph.input if i.name in used and i.name not in new_weights or i.name in kept]
    del graph.node[:]
    graph.node.extend(keep_nodes)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    del graph.input[:]
    graph.input.extend(inputs)
    return model


def _fill_value(node: onnx.NodeProto) -> np.ndarray:
    for attr in node.attribute:
        if attr.name == "value":
            return numpy_helper.to_array(attr.t).reshape(())
    return np.zeros((), np.float32)  # ONNX's default: float32 zero


def _random_weight(shape: tuple[int, ...], value: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if len(shape) >= 2:
        fan_in = int(np.prod(shape[1:]))
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(value.dtype)
    scale = float(value) if float(value) != 0.0 else 1.0
    return (scale * rng.uniform(0.5, 1.5, size=shape)).astype(value.dtype)


def default_model(seed: int = 0) -> onnx.ModelProto:
    """The light ResNet-50 from the installed onnx package, with seeded random weights.

    Example:
        >>> [i.name for i in default_model().graph.input]  # doctest: +SKIP
        ['gpu_0/data_0']
    """
    model = onnx.load(str(light_model_path(DEFAULT_NAME)))
    return with_random_weights(model, seed)
