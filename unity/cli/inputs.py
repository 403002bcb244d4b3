"""Parse `--shape NAME=1,3,224,224` / `--input NAME=file.npy` and make random inputs.

Example:
    >>> parse_shapes(["x=1,3,224,224", "batch=4"])
    {'x': (1, 3, 224, 224), 'batch': (4,)}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from unity.cli.errors import CliError


def parse_shapes(items: Sequence[str] | None) -> dict[str, tuple[int, ...]]:
    """`["x=1,3,224,224"]` -> `{"x": (1, 3, 224, 224)}`; a bad item is a `CliError`.

    A name with one value may also name a symbolic dimension (`--shape batch=8`).

    Example:
        >>> parse_shapes(["n=8"])
        {'n': (8,)}
    """
    shapes: dict[str, tuple[int, ...]] = {}
    for item in items or ():
        name, sep, dims = item.partition("=")
        if not sep or not name or not dims:
            raise CliError(f"bad --shape {item!r}: expected NAME=D0,D1,... (e.g. x=1,3,224,224)")
        try:
            shape = tuple(int(d) for d in dims.split(","))
        except ValueError:
            raise CliError(f"bad --shape {item!r}: dimensions must be integers") from None
        if any(d < 0 for d in shape):
            raise CliError(f"bad --shape {item!r}: dimensions must be non-negative")
        shapes[name] = shape
    return shapes


def load_inputs(items: Sequence[str] | None) -> dict[str, np.ndarray]:
    """`["x=in.npy"]` -> `{"x": array}`; a missing or unreadable file is a `CliError`.

    Example:
        >>> load_inputs([])
        {}
    """
    arrays: dict[str, np.ndarray] = {}
    for item in items or ():
        name, sep, file = item.partition("=")
        if not sep or not name or not file:
            raise CliError(f"bad --input {item!r}: expected NAME=FILE.npy")
        path = Path(file)
        if not path.is_file():
            raise CliError(f"--input {name}: no such file: {file}")
        try:
            arrays[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as err:
            raise CliError(f"--input {name}: cannot read {file} as .npy ({err})") from None
    return arrays


def random_input(shape: Sequence[int], dtype: str, rng: np.random.Generator) -> np.ndarray:
    """A random array: floats in [0, 1), integers in [0, 10), bools at random.

    Example:
        >>> random_input((2,), "int64", np.random.default_rng(0)).dtype
        dtype('int64')
    """
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(0, 10, size=shape).astype(dtype)
    return rng.random(shape, dtype=np.float32).astype(dtype)


def resolve_dims(
    dims: Sequence[int | str | None], name: str, shapes: Mapping[str, tuple[int, ...]]
) -> tuple[int, ...]:
    """Concrete dims of input `name`: its own `--shape`, else each symbol's `--shape SYM=N`.

    Example:
        >>> resolve_dims([None, 3], "x", {"x": (2, 3)})
        (2, 3)
        >>> resolve_dims(["batch", 3], "x", {"batch": (5,)})
        (5, 3)
    """
    if name in shapes:
        given = shapes[name]
        if len(given) != len(dims):
            raise CliError(f"--shape {name}: the input has rank {len(dims)}, got {len(given)} dims")
        return given
    out = []
    for d in dims:
        if isinstance(d, int):
            out.append(d)
        elif isinstance(d, str) and d in shapes and len(shapes[d]) == 1:
            out.append(shapes[d][0])
        else:
            what = f"dimension {d!r}" if isinstance(d, str) else "an unnamed dimension"
            raise CliError(f"input {name!r} has {what} of unknown size: give --shape {name}=D0,D1,...")
    return tuple(out)
