"""`PackedFunc`: one compiled kernel, called with numpy arrays or `Tensor`s.

Calling convention of the machine code (written by `unity.codegen.llvm`)::

    i32 name(ptr p0, ..., ptr pk, <scalar params>, <i64 shape vars>)

Buffer parameters come first as data pointers (in parameter order), then scalar
parameters (bool as i8, float16/bfloat16/float32 as float, float64 as double, integers
as themselves), then one i64 per symbolic shape variable in `PrimFunc.shape_vars()`
order.  The result is 0, or `k + 1` when the k-th `AssertStmt` message failed.

Each function also has a packed entry, ``i32 <packed_symbol>(ptr args)``, which reads
the same arguments from consecutive 8-byte slots (pointers and integers as int64,
floats as double, bool as one byte): the VM packs a call's arguments with one
`struct.pack_into` (`packed_format`) and makes a ctypes call of one argument.

The metadata a function is built from is plain JSON (so a loaded library needs no
compiler)::

    {"name": "f", "symbol": "f", "packed_symbol": "__unity_packed_f",
     "shape_vars": ["n"], "asserts": ["..."],
     "params": [{"name": "A", "kind": "buffer", "dtype": "float32",
                 "shape": [4, "n", ["*", "n", 2]], "strides": null, "written": true},
                {"name": "alpha", "kind": "scalar", "dtype": "float32"}]}

A dim is an int, a shape variable's key, or an expression tree `[op, a, b]`.  A buffer
the function stores into (``"written"``) must be a writable array.

Example:
    >>> meta = {"name": "f", "symbol": "f", "shape_vars": [], "asserts": [], "params": []}
    >>> PackedFunc(meta, 0).param_names
    ()
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from unity.runtime.tensor import Tensor, numpy_dtype

Dim = int | str | list[Any]

_SCALAR_CTYPES = {
    "bool": ctypes.c_int8,
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "float16": ctypes.c_float,
    "bfloat16": ctypes.c_float,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
    "handle": ctypes.c_void_p,
}
"""The C type each scalar parameter dtype is passed as."""

_DIM_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "min": min,
    "max": max,
}


def data_pointer(arr: np.ndarray) -> int:
    """Address of `arr`'s first element (`from_buffer` is 3x faster than `arr.ctypes.data`,
    but needs a writable, non-empty array; others take the slow way).

    Example:
        >>> a = np.zeros(4, "float32")
        >>> data_pointer(a) == a.ctypes.data, data_pointer(a[1:]) - data_pointer(a)
        (True, 4)
    """
    try:
        return ctypes.addressof(_BYTE.from_buffer(arr))
    except (TypeError, ValueError):
        return arr.ctypes.data


_BYTE = ctypes.c_char


_PACKED_ENTRY = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)


def _slot_format(dtype: str) -> str:
    """The `struct` format of a scalar parameter's 8-byte slot in the packed entry."""
    if dtype.startswith(("float", "bfloat")):
        return "d"
    if dtype == "bool":
        return "?7x"
    return "Q" if dtype in ("uint64", "handle") else "q"


def scalar_ctype(dtype: str) -> type:
    """The ctypes type a scalar parameter of `dtype` is passed as.

    Example:
        >>> scalar_ctype("float16").__name__
        'c_float'
    """
    try:
        return _SCALAR_CTYPES[dtype]
    except KeyError:
        raise ValueError(f"scalar parameters of dtype {dtype} are not supported") from None


def eval_dim(dim: Dim, env: dict[str, int]) -> int | None:
    """Value of a shape dim under the bindings `env` (None when a variable is unbound).

    Example:
        >>> eval_dim(["*", "n", 2], {"n": 3})
        6
    """
    if isinstance(dim, int):
        return dim
    if isinstance(dim, str):
        return env.get(dim)
    a, b = eval_dim(dim[1], env), eval_dim(dim[2], env)
    return None if a is None or b is None else _DIM_OPS[dim[0]](a, b)


def dim_str(dim: Dim, names: dict[str, str]) -> str:
    """Script spelling of a dim (`n * 2`), with variable keys shown by their names.

    Example:
        >>> dim_str(["*", "v0", 2], {"v0": "n"}), dim_str(8, {})
        ('(n * 2)', '8')
    """
    if isinstance(dim, int):
        return str(dim)
    if isinstance(dim, str):
        return names.get(dim, dim)
    op = dim[0]
    a, b = dim_str(dim[1], names), dim_str(dim[2], names)
    return f"{op}({a}, {b})" if op in ("min", "max") else f"({a} {op} {b})"


class _BufferArg:
    """Checks one buffer argument and returns its data pointer."""

    def __init__(self, fn: str, index: int, spec: dict[str, Any], names: dict[str, str]) -> None:
        self.spec = spec
        self.where = f"{fn}: parameter {index} '{spec['name']}'"
        self.dtype = numpy_dtype(spec["dtype"])
        self.shape: list[Dim] = list(spec["shape"])
        self.strides: list[Dim] | None = spec.get("strides")
        self.written: bool = spec.get("written", False)
        self.ndim = len(self.shape)
        self.names = names
        self.const_dims = [(i, d) for i, d in enumerate(self.shape) if isinstance(d, int)]
        self.var_dims = [(i, d) for i, d in enumerate(self.shape) if isinstance(d, str)]
        self.expr_dims = [(i, d) for i, d in enumerate(self.shape) if isinstance(d, list)]

    def expected(self) -> str:
        dims = ", ".join(dim_str(d, self.names) for d in self.shape)
        return f"a {self.spec['dtype']} array of shape ({dims}{',' if self.ndim == 1 else ''})"

    def convert(self, arg: object, env: dict[str, int]) -> int:
        arr = arg._array if type(arg) is Tensor else arg
        if type(arr) is not np.ndarray:
            raise ValueError(f"{self.where}: expected {self.expected()}, got {type(arg).__name__}")
        if arr.dtype != self.dtype:
            raise ValueError(
                f"{self.where}: expected dtype {self.spec['dtype']}, got {arr.dtype.name}"
            )
        shape = arr.shape
        if len(shape) != self.ndim:
            raise ValueError(
                f"{self.where}: expected rank {self.ndim} ({self.expected()}), "
                f"got rank {len(shape)} with shape {shape}"
            )
        for axis, dim in self.const_dims:
            if shape[axis] != dim:
                self._shape_error(shape, env)
        for axis, key in self.var_dims:
            bound = env.setdefault(key, shape[axis])
            if bound != shape[axis]:
                self._shape_error(shape, env)
        if self.written and not arr.flags.writeable:
            raise ValueError(
                f"{self.where}: the function writes this array, but it is read-only "
                "(flags.writeable is False); pass a writable array, e.g. arr.copy()"
            )
        if self.strides is None and not arr.flags.c_contiguous:
            raise ValueError(
                f"{self.where}: expected a C-contiguous array, got strides "
                f"{arr.strides} for shape {shape}; use np.ascontiguousarray"
            )
        if self.strides is not None:
            self._bind_strides(arr, env)
        return data_pointer(arr)

    def check_exprs(self, arr_shape: tuple[int, ...], env: dict[str, int]) -> None:
        for axis, dim in self.expr_dims:
            value = eval_dim(dim, env)
            if value is None:
                raise ValueError(
                    f"{self.where}: cannot bind the shape {dim_str(dim, self.names)} "
                    "(a symbolic variable appears only inside an expression)"
                )
            if value != arr_shape[axis]:
                self._shape_error(arr_shape, env)

    def _bind_strides(self, arr: np.ndarray, env: dict[str, int]) -> None:
        assert self.strides is not None
        actual = tuple(s // arr.itemsize for s in arr.strides)
        for axis, dim in enumerate(self.strides):
            if isinstance(dim, str):
                env.setdefault(dim, actual[axis])
            if eval_dim(dim, env) not in (actual[axis], None) or arr.strides[axis] % arr.itemsize:
                raise ValueError(
                    f"{self.where}: expected element strides "
                    f"({', '.join(dim_str(d, self.names) for d in self.strides)}), "
                    f"got {actual}"
                )

    def _shape_error(self, shape: tuple[int, ...], env: dict[str, int]) -> None:
        bound = [
            f"{self.names.get(k, k)} = {v}"
            for k, v in env.items()
            if any(d == k for _, d in self.var_dims)
        ]
        note = f" (bound by earlier arguments: {', '.join(bound)})" if bound else ""
        raise ValueError(f"{self.where}: expected {self.expected()}{note}, got shape {shape}")


class _ScalarArg:
    """Converts one scalar argument to its C type."""

    def __init__(self, fn: str, index: int, spec: dict[str, Any]) -> None:
        self.where = f"{fn}: parameter {index} '{spec['name']}'"
        self.dtype: str = spec["dtype"]
        self.ctype = scalar_ctype(self.dtype)
        self.is_float = self.dtype.startswith(("float", "bfloat"))
        self.shape_var: str | None = spec.get("shape_var")

    def convert(self, arg: object, env: dict[str, int]) -> object:
        ok = isinstance(arg, (int, float, np.number, np.bool_)) and not isinstance(arg, complex)
        if not ok or (not self.is_float and isinstance(arg, (float, np.floating))):
            raise ValueError(
                f"{self.where}: expected a {self.dtype} scalar, got {type(arg).__name__}"
            )
        if self.is_float:
            return float(arg)  # type: ignore[arg-type]  # checked
        value = int(arg)  # type: ignore[arg-type]  # checked
        if self.dtype.startswith(("int", "uint")):
            info = np.iinfo(self.dtype)
            if not info.min <= value <= info.max:
                raise ValueError(
                    f"{self.where}: {value} is out of range for {self.dtype} "
                    f"[{info.min}, {info.max}]"
                )
        if self.shape_var is not None:  # a shape variable too: bind it (or check it)
            if env.setdefault(self.shape_var, value) != value:
                raise ValueError(
                    f"{self.where}: {value} disagrees with the shapes of earlier arguments "
                    f"({self.shape_var} = {env[self.shape_var]})"
                )
        return value


class PackedFunc:
    """A compiled function at `address`; `__call__` checks arguments, then runs it.

    Example:
        >>> lib["main"](a, b, c)  # doctest: +SKIP
    """

    def __init__(self, meta: dict[str, Any], address: int, packed_address: int = 0) -> None:
        self.meta = meta
        self.name: str = meta["name"]
        self.shape_var_keys: tuple[str, ...] = tuple(meta["shape_vars"])
        names: dict[str, str] = meta.get("shape_var_names", {})
        params: list[dict[str, Any]] = meta["params"]
        self.param_names = tuple(p["name"] for p in params)
        buffers = [(i, p) for i, p in enumerate(params) if p["kind"] == "buffer"]
        scalars = [(i, p) for i, p in enumerate(params) if p["kind"] == "scalar"]
        self._converters = [
            _BufferArg(self.name, i, p, names)
            if p["kind"] == "buffer"
            else _ScalarArg(self.name, i, p)
            for i, p in enumerate(params)
        ]
        # C argument order: buffers, then scalars, then shape vars
        self._c_order = [i for i, _ in buffers] + [i for i, _ in scalars]
        self._has_exprs = any(getattr(c, "expr_dims", None) for c in self._converters)
        argtypes = [ctypes.c_void_p] * len(buffers) + [scalar_ctype(p["dtype"]) for _, p in scalars]
        argtypes += [ctypes.c_int64] * len(self.shape_var_keys)
        self.c_function = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(address) if address else None
        self.packed_function = _PACKED_ENTRY(packed_address) if packed_address else None
        """The packed entry: its one argument is the address of the slots (or None: a
        library exported before packed entries existed)."""
        self.packed_address = packed_address
        """The packed entry's machine address (0: none), for `kernel_runs`."""
        self.packed_format = "".join(
            ["Q"] * len(buffers) + [_slot_format(p["dtype"]) for _, p in scalars]
            + ["q"] * len(self.shape_var_keys)
        )  # fmt: skip
        """`struct` format of the packed entry's slots, in C argument order."""
        self._nparams = len(params)

    def convert_args(self, args: Sequence[object]) -> list[object]:
        """Check `args` and return the C arguments (raises ValueError naming the bad one).

        Example:
            >>> a = np.zeros(6, "float32")
            >>> meta = {"name": "scale", "shape_vars": ["n"], "asserts": [], "params": [
            ...     {"name": "A", "kind": "buffer", "dtype": "float32", "shape": ["n"]},
            ...     {"name": "k", "kind": "scalar", "dtype": "int32"}]}
            >>> f = PackedFunc(meta, 0)  # address 0: arguments are checked, nothing runs
            >>> c_args = f.convert_args([a, 3])  # buffers, scalars, then shape vars
            >>> c_args[0] == a.ctypes.data, c_args[1:]
            (True, [3, 6])
        """
        if len(args) != self._nparams:
            raise ValueError(
                f"{self.name}: expected {self._nparams} arguments "
                f"({', '.join(self.param_names)}), got {len(args)}"
            )
        env: dict[str, int] = {}
        converted = [conv.convert(arg, env) for conv, arg in zip(self._converters, args)]
        if self._has_exprs:
            for conv, arg in zip(self._converters, args):
                if isinstance(conv, _BufferArg) and conv.expr_dims:
                    conv.check_exprs(np.shape(arg._array if type(arg) is Tensor else arg), env)
        c_args = [converted[i] for i in self._c_order]
        try:
            c_args += [env[key] for key in self.shape_var_keys]
        except KeyError as err:
            raise ValueError(
                f"{self.name}: symbolic shape {err.args[0]} is not bound by any argument"
            ) from None
        return c_args

    def call_converted(self, c_args: Sequence[object]) -> None:
        """Run the machine code on already-checked arguments; raise on a failed assert.

        Example:
            >>> f = lib["main"]  # doctest: +SKIP
            >>> f.call_converted(f.convert_args([a, b, c]))  # doctest: +SKIP
        """
        assert self.c_function is not None
        status = self.c_function(*c_args)
        if status:
            self._raise_status(status)

    def _raise_status(self, status: int) -> None:
        messages: list[str] = self.meta["asserts"]
        if 0 < status <= len(messages):
            raise RuntimeError(f"{self.name}: {messages[status - 1]}")
        raise RuntimeError(f"{self.name}: failed with status {status}")

    def __call__(self, *args: object) -> None:
        assert self.c_function is not None
        status = self.c_function(*self.convert_args(args))
        if status:
            self._raise_status(status)
