"""The relax virtual machine: runs an `Executable`'s bytecode on the CPU.

Bytecode (written by `unity.relax.vm.codegen`; plain JSON, no IR objects, no sympy)::

    {"version": 1, "functions": {"main": {
        "params": [{"name": "x", "spec": SPEC}],      # registers 0..k-1, checked on entry
        "slots": [["batch", "parameter 0 'x' dim 0"]],  # symbolic dims, bound per call
        "num_regs": 7, "code": [INSTR, ...], "ret": 6}}}

SPEC and shape trees are described in `unity.runtime.vm_checks`.  Instructions::

    ["kernel", name, [arg, ...]]   # arg: ["t", reg, dims | null] | ["i", tree] | ["r", reg]
    ["alloc", dst, dtype, [tree, ...], pooled]     # pooled: 1 = storage from the pool
    ["free", reg]                  # give a pooled tensor's (or storage's) memory back
    ["storage", dst, tree, pooled]  # R.memory.alloc_storage: `tree` bytes (raw uint8)
    ["view", dst, storage, offset, dtype, [tree, ...], shaped]  # R.memory.alloc_tensor
    ["kill", reg]                  # drop a register's reference (R.memory.kill_*)
    ["const", dst, index]          ["lit", dst, value]
    ["tuple", dst, [reg, ...]]     ["item", dst, reg, index]
    ["shape", dst, [tree, ...]]    ["prim", dst, tree]
    ["match", reg, SPEC, where]    # match_cast: check and bind new symbols
    ["call", dst, function, [reg, ...]]
    ["host", dst, name, [reg, ...]]  # a host function (`unity.runtime.host_functions`) on numpy
    ["if", dst, cond, then_code, then_reg, else_code, else_reg]

When a `VirtualMachine` is made, each function's bytecode becomes one Python
function (source generated from the instructions, registers as locals).  Consecutive
kernel calls form a run, ended only by what reads their results or runs other code
(``match``, ``host``, ``call``, ``if``): the run's cached data pointers and the symbolic
dims it needs (computed from the slots) go into the call's argument slots with one
`struct.pack_into`, and one ctypes call of the library's run loop calls each kernel's
packed entry in turn (see `unity.runtime.kernel_runs`); ``kill`` and ``free`` wait for
the run.  On a 2-core Sapphire Rapids this took MobileNet v3-small from 0.95 to 0.92 ms
back to back and from 1.94 to 1.79 ms after 100 ms pauses (75 kernels; the VM's own
time with no-op kernels 52 -> 30 us back to back, 0.24 -> 0.17 ms after a pause),
SqueezeNet 1.1 2.87 -> 2.77 ms after pauses.  Intermediate tensors come from a storage
pool that is reused across calls.

Example:
    >>> vm = VirtualMachine(unity.compile(mod), unity.cpu())  # doctest: +SKIP
    >>> vm["main"](np.zeros((2, 4), "float32")).numpy()       # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import json
import math
import struct
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from unity.runtime.device import Device, cpu
from unity.runtime.function import data_pointer
from unity.runtime.host_functions import host_function
from unity.runtime.kernel_runs import Plan, failed_kernel
from unity.runtime.module import ProfileResult
from unity.runtime.tensor import Tensor, numpy_dtype
from unity.runtime.vm_checks import TREE_OPERATORS, make_checker, run_pending, tree_code
from unity.runtime.vm_executable import Executable
from unity.runtime.vm_pool import StoragePool


class VirtualMachine:
    """Runs the relax functions of `exe`: ``vm["main"](*inputs)``.

    Inputs are numpy arrays or `Tensor`s (Python ints for shape/scalar params);
    results are `Tensor`s, or tuples of them.

    Example:
        >>> vm = VirtualMachine(ex, unity.cpu())  # doctest: +SKIP
        >>> vm["main"](np.ones((3, 4), "float32"))  # doctest: +SKIP
    """

    def __new__(cls, exe: Executable, device: Device | None = None) -> Any:
        if device is not None and not isinstance(device, Device):
            raise TypeError(
                f"VirtualMachine: device must be a Device such as unity.cpu() or unity.cuda(), "
                f"got {type(device).__name__} {device!r}"
            )
        if device is not None and device.device_type == "cuda":  # the VM on a CUDA device
            from unity.runtime.cuda.vm import CudaVM

            if not isinstance(exe, Executable):
                raise TypeError(f"VirtualMachine: expected an Executable, got {type(exe).__name__}")
            return CudaVM(exe, device)
        from unity.runtime.cuda.kernels import CudaKernels

        if isinstance(exe, Executable) and isinstance(exe.kernels, CudaKernels):
            raise ValueError(  # noqa: TRY004 - a wrong executable
                f"VirtualMachine: this executable was compiled for cuda; run it on unity.cuda(), "
                f"not {device if device is not None else cpu()} (or compile with target=\"llvm\")"
            )
        return super().__new__(cls)

    def __init__(self, exe: Executable, device: Device | None = None) -> None:
        if not isinstance(exe, Executable):
            raise TypeError(
                f"VirtualMachine: expected an Executable (unity.compile, or load_module of an "
                f"exported model), got {type(exe).__name__}"
            )
        device = device if device is not None else cpu()
        if device.device_type != "cpu":
            raise ValueError(
                f"VirtualMachine: device {device} is not supported yet; use unity.cpu()"
            )
        self.exe = exe
        self.device = device
        self.pool = StoragePool()
        self._namespace = _Loader(exe, self.pool).namespace
        self._public: dict[str, Callable[..., Any]] = {}

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return self.get_function(name)

    def get_function(self, name: str) -> Callable[..., Any]:
        """The function `name` as a Python callable returning Tensors.

        Example:
            >>> vm.get_function("main")  # doctest: +SKIP
        """
        func = self._public.get(name)
        if func is None:
            if name not in self.exe.program["functions"]:
                raise KeyError(
                    f"VirtualMachine: no function {name!r}; it has {self.exe.function_names}"
                )
            func = _public_function(
                name,
                self.exe.program["functions"][name],
                self._namespace[_fn_symbol(self.exe, name)],
            )
            self._public[name] = func
        return func

    def invoke(self, name: str, *args: object) -> object:
        """Call function `name` (same as ``vm[name](*args)``).

        Example:
            >>> vm.invoke("main", np.ones((3, 4), "float32"))  # doctest: +SKIP
        """
        return self.get_function(name)(*args)

    def profile(self, *inputs: object, func_name: str = "main", repeat: int = 1) -> Any:
        """Time every kernel call of `func_name` on `inputs`: a `vm_profile.ProfileReport`.

        As in TVM, the function name may also come first: ``vm.profile("main", x)``.

        Example:
            >>> print(vm.profile(x).table(top=10))  # doctest: +SKIP
        """
        from unity.runtime.vm_profile import profile

        if inputs and type(inputs[0]) is str and inputs[0] in self.exe.program["functions"]:
            func_name, inputs = inputs[0], inputs[1:]
        return profile(self, func_name, *inputs, repeat=repeat)

    def time_evaluator(
        self, name: str, dev: Device | None = None, number: int = 10, repeat: int = 1
    ) -> Callable[..., ProfileResult]:
        """A function that runs `name` `number` times per repeat and returns the timings.

        Example:
            >>> vm.time_evaluator("main", unity.cpu(), number=5)(x).mean  # doctest: +SKIP
        """
        func = self.get_function(name)
        dev = dev if dev is not None else self.device

        def evaluate(*args: object) -> ProfileResult:
            func(*args)  # warm up: checks the inputs and fills the storage pool
            results = []
            for _ in range(repeat):
                start = time.perf_counter()
                for _ in range(number):
                    func(*args)
                dev.sync()
                results.append((time.perf_counter() - start) / number)
            return ProfileResult(tuple(results))

        return evaluate


def _public_function(name: str, fn: dict[str, Any], impl: Callable[..., Any]) -> Callable[..., Any]:
    names = [p["name"] for p in fn["params"]]
    count = len(names)

    def call(*args: object) -> object:
        if len(args) != count:
            raise ValueError(
                f"{name}: expected {count} inputs ({', '.join(names)}), got {len(args)}"
            )
        return _to_tensors(impl(*args))

    call.__name__ = name
    return call


def _to_tensors(value: object) -> object:
    if type(value) is np.ndarray:
        return Tensor(value)
    if type(value) is tuple:
        return tuple(_to_tensors(v) for v in value)
    return value


_SCHEMA: dict[str, tuple[str, ...]] = {
    "kernel": ("str", "list"),
    "alloc": ("int", "str", "list", "int"),
    "free": ("int",),
    "storage": ("int", "any", "int"),
    "view": ("int", "int", "any", "str", "list", "int"),
    "kill": ("int",),
    "const": ("int", "int"),
    "lit": ("int", "any"),
    "tuple": ("int", "ints"),
    "item": ("int", "int", "int"),
    "shape": ("int", "list"),
    "prim": ("int", "any"),
    "match": ("int", "list", "str"),
    "call": ("int", "str", "ints"),
    "host": ("int", "str", "ints"),
    "if": ("int", "int", "list", "int", "list", "int"),
}
"""The operand kinds of each instruction (checked before any code is generated)."""

_KIND_OK: dict[str, Callable[[object], bool]] = {
    "int": lambda v: type(v) is int,
    "str": lambda v: type(v) is str,
    "list": lambda v: type(v) is list,
    "ints": lambda v: type(v) is list and all(type(i) is int for i in v),
    "any": lambda v: True,
}


def _validate(ins: object, fname: str) -> None:
    kinds = _SCHEMA.get(ins[0]) if type(ins) is list and ins else None  # type: ignore[index]
    if (
        kinds is None
        or len(ins) != len(kinds) + 1
        or not all(  # type: ignore[arg-type]
            _KIND_OK[k](v)
            for k, v in zip(kinds, ins[1:], strict=True)  # type: ignore[index]
        )
    ):
        raise ValueError(f"vm: malformed instruction {json.dumps(ins)[:80]} in @{fname}")
    if ins[0] == "kernel":  # type: ignore[index]
        for arg in ins[2]:  # type: ignore[index]
            if not (type(arg) is list and len(arg) in (2, 3) and arg[0] in ("t", "i", "r")):
                raise ValueError(
                    f"vm: malformed kernel argument {json.dumps(arg)[:60]} in @{fname}"
                )
            if arg[0] in ("t", "r") and type(arg[1]) is not int:
                raise ValueError(
                    f"vm: malformed kernel argument {json.dumps(arg)[:60]} in @{fname}"
                )


def tail_calls(name: str, code: list[Any], ret: int) -> set[int]:
    """The ids of the ``call`` instructions of function `name` that call it again in
    tail position (their result is the function's, through ``if`` branches): a loop
    imported as a recursive function, run as a jump instead of a deeper call.

    Example:
        >>> call = ["call", 3, "f", [2]]
        >>> tail_calls("f", [["if", 4, 1, [call], 3, [], 0]], 4) == {id(call)}
        True
    """
    last = _last(code)
    if last is None:
        return set()
    if last[0] == "call" and last[2] == name and last[1] == ret:
        return {id(last)}
    if last[0] == "if" and last[1] == ret:
        return tail_calls(name, last[3], last[4]) | tail_calls(name, last[5], last[6])
    return set()


def _last(code: list[Any]) -> list[Any] | None:
    """The last instruction of `code` that is not a ``free`` or ``kill``."""
    for ins in reversed(code):
        if ins[0] not in ("free", "kill"):
            return ins  # type: ignore[no-any-return]
    return None


def _fn_symbol(exe: Executable, name: str) -> str:
    """The Python name of relax function `name` in the generated code."""
    names = list(exe.program["functions"])
    if name not in names:
        raise ValueError(f"vm: call of unknown function {name!r}; the executable has {names}")
    return f"F{names.index(name)}"


def _view_failure(where: str) -> Callable[[int, int, int], None]:
    def fail(offset: int, end: int, size: int) -> None:
        raise RuntimeError(
            f"{where} {offset} needs bytes up to {end}, but the storage has {size}: a symbolic "
            "dim exceeds the upper bound memory planning assumed (tir_var_upper_bound)"
        )

    return fail


def _kernel_failure(name: str, asserts: list[str]) -> Callable[[int], None]:
    def fail(status: int) -> None:
        if 0 < status <= len(asserts):
            raise RuntimeError(f"{name}: {asserts[status - 1]}")
        raise RuntimeError(f"{name}: failed with status {status}")

    return fail


_ENDS_RUN = frozenset({"match", "host", "call", "if"})
"""Instructions that read what kernels wrote (tensor contents, shapes to match) or run
other code: the kernel calls gathered before them run first."""


class _Call(NamedTuple):
    """A kernel call waiting for its run: the kernel, its slot values' code, the name
    of its failure handler."""

    packed: Any
    args: list[str]
    fail: str


def _run_failure(fails: list[Callable[[int], None]]) -> Callable[[int], None]:
    def fail(code: int) -> None:
        index, status = failed_kernel(code)
        fails[index](status)

    return fail


class _Loader:
    """Turns the bytecode into Python functions sharing one namespace."""

    runs = True
    """Whether consecutive kernel calls run as one native run (`kernel_runs`)."""

    def __init__(self, exe: Executable, pool: StoragePool) -> None:
        self.exe = exe
        self.namespace: dict[str, Any] = {
            "__builtins__": {"min": min, "max": max, "bool": bool, "len": len},
            "TAKE": pool.take, "GIVE": pool.give, "EMPTY": np.empty, "RUN": run_pending,
            "PTR": data_pointer, "U8": np.dtype(np.uint8), "ADDR": ctypes.addressof,
            "__exe__": exe,  # the compiled kernels live as long as a function taken from a VM
        }  # fmt: skip
        self.kernels: dict[str, str] = {}
        self.storage_sizes: dict[int, Any] = {}  # storage register -> its size tree
        self.tuples: dict[int, list[int]] = {}  # tuple register -> its parts' registers
        self.tail: set[int] = set()  # ids of the self-calls of the function being loaded that jump
        self.lines: list[str] = []
        self.counter = 0
        self.scopes: list[dict[str, str]] = [{}]  # shape code -> the local holding it
        self.pending: list[_Call] = []  # kernel calls of the run being gathered
        self.deferred: list[str] = []  # kills and frees held until that run has run
        self.plans: list[Plan] = []  # the runs' plans, alive as long as the code
        self.runner = getattr(exe.kernels, "run_kernels", None) if self.runs else None
        for i, c in enumerate(exe.constants):
            self.namespace[f"C{i}"] = c
            self.namespace[f"CP{i}"] = c.ctypes.data
        for name, fn in exe.program["functions"].items():
            self._function(name, fn)
        source = "\n".join(self.lines)
        exec(compile(source, f"<unity vm {id(exe):x}>", "exec"), self.namespace)  # noqa: S102 - validated bytecode
        self.namespace["__source__"] = source
        self.namespace["__plans__"] = self.plans

    def _shape(self, tree: Any, ind: str) -> str:
        """Code for shape tree `tree`: a constant or a slot inline, a compound tree (and
        each compound subtree) a local computed once where the function first needs it
        and reused after (a symbolic model's sizes recur in every allocation and view)."""
        if not (isinstance(tree, list) and len(tree) == 3 and tree[0] in TREE_OPERATORS):
            return tree_code(tree)  # a constant or a slot (a malformed tree raises)
        op, a, b = tree
        a, b = self._shape(a, ind), self._shape(b, ind)
        return self._local(f"{op}({a}, {b})" if op in ("min", "max") else f"({a} {op} {b})", ind)

    def _local(self, code: str, ind: str) -> str:
        """The local holding `code` (a shape expression over `S` and earlier locals), emitted
        at `ind` the first time; branches see their enclosing scopes' locals only."""
        for scope in self.scopes:
            if code in scope:
                return scope[code]
        self.counter += 1
        name = f"v{self.counter}"
        self.lines.append(f"{ind}{name} = {code}")
        self.scopes[-1][code] = name
        return name

    def _name(self, prefix: str, value: object) -> str:
        self.counter += 1
        key = f"{prefix}{self.counter}"
        self.namespace[key] = value
        return key

    def _function(self, name: str, fn: dict[str, Any]) -> None:
        params = fn["params"]
        slots = fn["slots"]
        self.storage_sizes = {}
        self.tuples = {}
        self.scopes = [{}]
        self.arg_slots = 0
        args = ", ".join(f"a{i}" for i in range(len(params)))
        self.lines.append(f"def {_fn_symbol(self.exe, name)}({args}):")
        top = len(self.lines)
        self.tail = tail_calls(name, fn["code"], fn["ret"])
        ind = "    "
        if self.tail:  # a self-call in tail position jumps back to the top (loops)
            self.lines.append("    while True:")
            ind = "        "
        self.lines.append(f"{ind}S = [0] * {len(slots)}; P = []")
        for i, p in enumerate(params):
            where = f"{name}: parameter {i} '{p['name']}'"
            check = self._name("CHK", make_checker(p["spec"], where, slots))
            self.lines.append(f"{ind}r{i} = {check}(a{i}, S, P)")
        self.lines.append(f"{ind}if P: RUN(P, S)")
        self._block(name, fn["code"], ind, set())
        self.lines.append(f"{ind}return r{fn['ret']}")
        if self.arg_slots:  # each call's own slots for packed kernel arguments (reentrant)
            slots = self._name("SLOTS", ctypes.c_int64 * self.arg_slots)
            self.lines.insert(top, f"    A = {slots}(); AA = ADDR(A)")

    def _block(self, fname: str, code: list[Any], ind: str, has_ptr: set[int]) -> None:
        emit = self.lines.append
        if not code:
            emit(f"{ind}pass")
        for ins in code:
            _validate(ins, fname)
            op = ins[0]
            if op in _ENDS_RUN or (op in ("alloc", "storage") and ins[-1] and self.deferred):
                self._flush(ind)  # the run's kernels write what this reads, or a pool reuse
            if op in ("kill", "free") and self.pending:  # the run still uses the memory
                emit = self.deferred.append
            else:
                emit = self.lines.append
            if op == "kernel":
                self._kernel(fname, ins, ind, has_ptr)
            elif op == "alloc":
                _, dst, dtype, shape, pooled = ins
                dims = [self._shape(t, ind) for t in shape]
                if pooled:
                    size = " * ".join([str(numpy_dtype(dtype).itemsize), *dims])
                    emit(f"{ind}r{dst}, p{dst} = TAKE({size})")
                else:
                    dt = self._name("DT", numpy_dtype(dtype))
                    emit(f"{ind}r{dst} = EMPTY(({''.join(d + ', ' for d in dims)}), {dt})")
                    emit(f"{ind}p{dst} = PTR(r{dst})")
                has_ptr.add(dst)
            elif op == "free":
                emit(f"{ind}GIVE(r{ins[1]}, p{ins[1]})")
            elif op in ("storage", "view"):
                self._memory(fname, ins, ind)
                has_ptr.add(ins[1])
            elif op == "kill":
                emit(f"{ind}r{ins[1]} = None")
            elif op == "const":
                emit(f"{ind}r{ins[1]} = C{ins[2]}; p{ins[1]} = CP{ins[2]}")
                has_ptr.add(ins[1])
            elif op == "lit":
                emit(f"{ind}r{ins[1]} = {self._name('LIT', ins[2])}")
            elif op == "tuple":
                emit(f"{ind}r{ins[1]} = ({''.join(f'r{r}, ' for r in ins[2])})")
                self.tuples[ins[1]] = list(ins[2])
            elif op == "item":
                emit(f"{ind}r{ins[1]} = r{ins[2]}[{int(ins[3])}]")
                parts, index = self.tuples.get(ins[2], []), int(ins[3])
                if 0 <= index < len(parts) and parts[index] in has_ptr:  # its pointer
                    emit(f"{ind}p{ins[1]} = p{parts[index]}")
                    has_ptr.add(ins[1])
            elif op == "shape":
                emit(f"{ind}r{ins[1]} = ({''.join(self._shape(t, ind) + ', ' for t in ins[2])})")
            elif op == "prim":
                emit(f"{ind}r{ins[1]} = {self._shape(ins[2], ind)}")
            elif op == "match":
                check = self._name("MATCH", make_checker(ins[2], ins[3], self._slots(fname)))
                self.scopes = [{} for _ in self.scopes]  # its slots: recompute after it
                emit(f"{ind}P = []; r{ins[1]} = {check}(r{ins[1]}, S, P)")
                emit(f"{ind}if P: RUN(P, S)")
                has_ptr.discard(ins[1])
            elif op == "host":
                fn = self._name("HOST", host_function(ins[2]))
                emit(f"{ind}r{ins[1]} = {fn}({', '.join(f'r{r}' for r in ins[3])})")
                has_ptr.discard(ins[1])
            elif op == "call" and id(ins) in self.tail:  # the arguments of the next round
                emit(f"{ind}TC = ({''.join(f'r{r}, ' for r in ins[3])})")
            elif op == "call":
                callee = _fn_symbol(self.exe, ins[2])
                emit(f"{ind}r{ins[1]} = {callee}({', '.join(f'r{r}' for r in ins[3])})")
            elif op == "if":
                _, dst, cond, then_code, then_reg, else_code, else_reg = ins
                emit(f"{ind}if bool(r{cond}):")
                self._branch(fname, then_code, then_reg, dst, ind + "    ", has_ptr)
                emit(f"{ind}else:")
                self._branch(fname, else_code, else_reg, dst, ind + "    ", has_ptr)
        self._flush(ind)

    def _branch(self, fname: str, code: list[Any], reg: int, dst: int, ind: str,
                has_ptr: set[int]) -> None:  # fmt: skip
        self.scopes.append({})
        self._block(fname, code, ind, set(has_ptr))
        self.scopes.pop()
        last = _last(code)
        if last is not None and id(last) in self.tail:
            args = "".join(f"a{i}, " for i in range(len(last[3])))
            self.lines.append(f"{ind}{args}= TC; continue")
        else:
            self.lines.append(f"{ind}r{dst} = r{reg}")

    def _memory(self, fname: str, ins: list[Any], ind: str) -> None:
        emit = self.lines.append
        if ins[0] == "storage":
            _, dst, size, pooled = ins
            self.storage_sizes[dst] = size
            code = self._shape(size, ind)
            if pooled:
                emit(f"{ind}r{dst}, p{dst} = TAKE({code})")
            else:
                emit(f"{ind}r{dst} = EMPTY(({code},), U8); p{dst} = PTR(r{dst})")
            return
        _, dst, storage, offset, dtype, shape, shaped = ins
        dt = numpy_dtype(dtype)
        dims = [self._shape(t, ind) for t in shape]
        nbytes = " * ".join([str(dt.itemsize), *dims])
        off = self._shape(offset, ind)
        where = f"{fname}: a {dtype} tensor placed in storage r{storage} at byte offset"
        check = _view_failure(where)
        size = self.storage_sizes.get(storage)
        static = type(size) is int and all(type(t) is int for t in [offset, *shape])
        if shaped or not static:
            emit(f"{ind}e{dst} = {self._local(f'{off} + {nbytes}', ind)}")
        if not static:
            fail = self._name("VFAIL", check)
            emit(f"{ind}if e{dst} > r{storage}.size: {fail}({off}, e{dst}, r{storage}.size)")
        elif offset + dt.itemsize * math.prod(shape) > size:  # type: ignore[operator]
            check(offset, offset + dt.itemsize * math.prod(shape), size)  # refused when loading
        shift = f" + {off}" if off != "0" else ""
        if shaped:
            dtn = self._name("DT", dt)
            emit(f"{ind}r{dst} = r{storage}[{off}:e{dst}].view({dtn})"
                 f".reshape(({''.join(d + ', ' for d in dims)})); "
                 f"p{dst} = p{storage}{shift}")  # fmt: skip
        else:
            emit(f"{ind}r{dst} = r{storage}; p{dst} = p{storage}{shift}")

    def _slots(self, fname: str) -> list[list[str]]:
        return self.exe.program["functions"][fname]["slots"]

    def _kernel(self, fname: str, ins: list[Any], ind: str, has_ptr: set[int]) -> None:
        _, kname, args = ins
        if kname not in self.exe.kernels:
            raise ValueError(
                f"vm: @{fname} calls kernel {kname!r}, which the library does not have"
            )
        packed = self.exe.kernels.get_function(kname)
        meta = packed.meta
        buffers = [p for p in meta["params"] if p["kind"] == "buffer"]
        scalars = [p for p in meta["params"] if p["kind"] == "scalar"]
        tensors = [a for a in args if a[0] == "t"]
        values = [a for a in args if a[0] != "t"]
        if len(tensors) != len(buffers) or len(values) != len(scalars):
            raise ValueError(
                f"vm: @{fname} calls kernel {kname} with {len(tensors)} tensors and {len(values)} "
                f"scalars; it takes {len(buffers)} buffers and {len(scalars)} scalars"
            )
        for _, reg, _ in tensors:
            if reg not in has_ptr:
                self.lines.append(f"{ind}p{reg} = PTR(r{reg})")
                has_ptr.add(reg)
        c_args = [f"p{a[1]}" for a in tensors]
        c_args += [self._shape(a[1], ind) if a[0] == "i" else f"r{a[1]}" for a in values]
        for key in meta["shape_vars"]:
            c_args.append(self._shape_var(kname, key, buffers, scalars, tensors, c_args))
        fail = self._name("KFAIL", _kernel_failure(kname, meta["asserts"]))
        call = _Call(packed, c_args, fail)
        if self.runner is not None and packed.packed_function is not None:
            self.pending.append(call)  # called with the run it ends up in
            return
        self._flush(ind)
        if packed.packed_function is None:  # a library exported before packed entries
            k = self._name("K", packed.c_function)
            self.lines.append(f"{ind}st = {k}({', '.join(c_args)})")
            self.lines.append(f"{ind}if st: {fail}(st)")
        else:
            self._emit_calls(ind, [call])

    def _flush(self, ind: str) -> None:
        """Emit the pending run of kernel calls, then what waited for it."""
        if self.pending:
            self._emit_calls(ind, self.pending)
        self.lines.extend(self.deferred)
        self.pending, self.deferred = [], []

    def _emit_calls(self, ind: str, calls: list[_Call]) -> None:
        """Code calling the packed entries of `calls` in order: the slots of all of them
        packed at once, then one kernel called from Python or all of them by one native
        run."""
        fmt = "".join(c.packed.packed_format for c in calls)
        args = [a for c in calls for a in c.args]
        pack = self._name("PACK", struct.Struct(fmt).pack_into)
        self.arg_slots = max(self.arg_slots, len(args))
        self.lines.append(f"{ind}{pack}(A, 0, {', '.join(args)})")
        if len(calls) == 1:
            k = self._name("K", calls[0].packed.packed_function)
            self.lines.append(f"{ind}st = {k}(AA)")
            self.lines.append(f"{ind}if st: {calls[0].fail}(st)")
            return
        entries, offset = [], 0
        for c in calls:
            entries.append((c.packed.packed_address, offset))
            offset += 8 * len(c.args)
        plan = Plan(entries)
        self.plans.append(plan)
        run = self._name("KRUN", self.runner)
        fails = [self.namespace[c.fail] for c in calls]
        self.lines.append(f"{ind}st = {run}({plan.address}, AA)")
        self.lines.append(f"{ind}if st: {self._name('RFAIL', _run_failure(fails))}(st)")

    @staticmethod
    def _shape_var(
        kname: str,
        key: str,
        buffers: list[Any],
        scalars: list[Any],
        tensors: list[Any],
        c_args: list[str],
    ) -> str:
        for s, scalar in enumerate(scalars):
            if scalar["name"] == key:
                return c_args[len(buffers) + s]
        found = None
        for buf, (_, reg, dims) in zip(buffers, tensors, strict=True):
            for axis, dim in enumerate(buf["shape"]):
                value = tree_code(dims[axis]) if dims is not None else f"r{reg}.shape[{axis}]"
                code = _invert(dim, key, value)
                if code is not None and (found is None or dim == key):
                    found = code
        if found is None:
            raise ValueError(
                f"vm: kernel {kname}: its shape variable {key} is not the size of any buffer dim"
            )
        return found


def _invert(dim: Any, key: str, value: str) -> str | None:
    """Code for `key` given that `dim` (a kernel shape) equals `value`, when affine in `key`."""
    if dim == key:
        return value
    if not isinstance(dim, list) or dim[0] not in ("+", "-", "*"):
        return None
    op, a, b = dim
    if isinstance(b, int):
        inner, c, left = a, b, True
    elif isinstance(a, int):
        inner, c, left = b, a, False
    else:
        return None
    if op == "+":
        return _invert(inner, key, f"({value} - {c})")
    if op == "*":
        return _invert(inner, key, f"({value} // {c})") if c else None
    return _invert(inner, key, f"({value} + {c})" if left else f"({c} - {value})")
