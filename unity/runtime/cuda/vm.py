"""`CudaVM`: the relax VM on a CUDA device (``relax.VirtualMachine(ex, unity.cuda())``).

It runs the same bytecode as the CPU VM (`unity.runtime.vm`) for an executable
compiled with ``target="cuda"``: tensors are `CUDATensor`s in device memory (numpy
inputs are copied to the device; results stay there until ``.numpy()``), constants
are copied once when the VM is made, ``alloc`` / ``storage`` / ``view`` allocate and
place device memory as memory planning decided, and each ``kernel`` instruction runs
the kernel's host launch plan with the symbolic dims bound from the tensors' shapes,
so grid sizes follow the input shapes.  The bytecode is interpreted (a launch costs
far more than an instruction), and memory is freed when its last register drops it.

Example:
    >>> ex = unity.compile(mod, target="cuda")               # doctest: +SKIP
    >>> vm = relax.VirtualMachine(ex, unity.cuda())          # doctest: +SKIP
    >>> vm["main"](np.ones((2, 4), "float32")).numpy()       # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from unity.runtime.cuda.device_api import active_driver, alloc, to_device
from unity.runtime.cuda.host_plan import PlanRunner
from unity.runtime.cuda.kernels import CudaKernels
from unity.runtime.cuda.tensor import CUDATensor, cuda_tensor
from unity.runtime.host_functions import host_function
from unity.runtime.vm import tail_calls
from unity.runtime.device import Device
from unity.runtime.module import ProfileResult
from unity.runtime.vm_profile import ProfileReport, ProfileRow
from unity.runtime.narrow import held_as
from unity.runtime.tensor import Tensor, numpy_dtype
from unity.runtime.vm_checks import (
    _dim_checks,
    _dims_plan,
    compile_tree,
    make_checker,
    run_pending,
)  # fmt: skip


class CudaVM:
    """Runs the relax functions of a cuda `Executable` on CUDA device `device`.

    Example:
        >>> vm = CudaVM(ex, unity.cuda(0))   # doctest: +SKIP
        >>> vm["main"](x).device             # doctest: +SKIP
        cuda(0)
    """

    def __init__(self, exe: Any, device: Device) -> None:
        if not isinstance(exe.kernels, CudaKernels):
            raise ValueError(  # noqa: TRY004 - a wrong executable, as the CPU VM says
                f"VirtualMachine: device {device} needs an executable compiled for cuda "
                f"(unity.compile(mod, target=\"cuda\")); this one holds "
                f"{type(exe.kernels).__name__} kernels (for the CPU: unity.cpu())"
            )
        self.exe, self.device = exe, device
        self.drv = active_driver(device.device_id)
        self.constants = [
            CUDATensor(to_device(device.device_id, c), c.shape, c.dtype.name, device)
            for c in exe.constants
        ]
        self._trees: dict[str, Callable[[list[int]], int]] = {}
        self._tails: dict[str, set[int]] = {}  # ids of each function's tail self-calls, found once
        self._checkers: dict[int, Any] = {}
        self._timings: dict[str, list[float]] | None = None
        """While profiling: seconds and calls by kernel name."""

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return self.get_function(name)

    def get_function(self, name: str) -> Callable[..., Any]:
        """The function `name` as a Python callable returning device tensors.

        Example:
            >>> vm.get_function("main")  # doctest: +SKIP
        """
        functions = self.exe.program["functions"]
        if name not in functions:
            raise KeyError(f"VirtualMachine: no function {name!r}; it has {list(functions)}")
        fn = functions[name]
        names = [p["name"] for p in fn["params"]]

        def call(*args: object) -> object:
            if len(args) != len(names):
                raise ValueError(
                    f"{name}: expected {len(names)} inputs ({', '.join(names)}), got {len(args)}"
                )
            return self._run(name, list(args))

        call.__name__ = name
        return call

    def invoke(self, name: str, *args: object) -> object:
        """Call function `name` (same as ``vm[name](*args)``).

        Example:
            >>> vm.invoke("main", x)  # doctest: +SKIP
        """
        return self.get_function(name)(*args)

    def time_evaluator(self, name: str, dev: Device | None = None, number: int = 10,
                       repeat: int = 1) -> Callable[..., ProfileResult]:
        """A function timing `name` (inputs copied to the device once; synchronized).

        Example:
            >>> vm.time_evaluator("main", number=5)(x).mean  # doctest: +SKIP
        """
        func = self.get_function(name)

        def evaluate(*args: object) -> ProfileResult:
            args = tuple(self._upload(a) for a in args)
            func(*args)
            self.drv.synchronize()
            results = []
            for _ in range(repeat):
                start = time.perf_counter()
                for _ in range(number):
                    func(*args)
                self.drv.synchronize()
                results.append((time.perf_counter() - start) / number)
            return ProfileResult(tuple(results))

        return evaluate

    def profile(self, *inputs: object, func_name: str = "main", repeat: int = 1) -> ProfileReport:
        """Time every kernel launch of `func_name` on `inputs` with CUDA events (each launch
        then waits for the previous one): a `vm_profile.ProfileReport`, one row per kernel,
        slowest first; its total is the wall time of a run while profiled.

        Example:
            >>> print(vm.profile(x).table(top=10))  # doctest: +SKIP
        """
        if inputs and type(inputs[0]) is str and inputs[0] in self.exe.program["functions"]:
            func_name, inputs = inputs[0], inputs[1:]
        func = self.get_function(func_name)
        args = tuple(self._upload(a) for a in inputs)
        func(*args)  # warm up: the PTX loaded, the storage pool filled
        self.drv.synchronize()
        self._timings = {}
        try:
            start = time.perf_counter()
            for _ in range(repeat):
                func(*args)
            self.drv.synchronize()
            total = (time.perf_counter() - start) / repeat
            timings = self._timings
        finally:
            self._timings = None
        rows = sorted(((name, calls / repeat, seconds / repeat) for name, (seconds, calls) in timings.items()),
                      key=lambda row: -row[2])
        return ProfileReport(tuple(ProfileRow(name, "", int(calls), seconds, seconds / total)
                                   for name, calls, seconds in rows), total)

    # -- interpretation -------------------------------------------------------------
    def _upload(self, value: object) -> object:
        if isinstance(value, np.ndarray) or (isinstance(value, Tensor) and
                                             not isinstance(value, CUDATensor)):
            data = value.numpy() if isinstance(value, Tensor) else value
            return cuda_tensor(data, self.device)
        return value

    def _run(self, name: str, args: list[object]) -> object:
        fn = self.exe.program["functions"][name]
        slots = fn["slots"]
        tail = self._tails.get(name)  # self-calls that loop instead
        if tail is None:
            tail = self._tails[name] = tail_calls(name, fn["code"], fn["ret"])
        while True:
            S = [0] * len(slots)
            pending: list[Any] = []
            regs: list[Any] = [None] * (fn["num_regs"] + 1)  # the last: a tail call's arguments
            for i, p in enumerate(fn["params"]):
                check = self._checker(p["spec"], f"{name}: parameter {i} '{p['name']}'", slots)
                regs[i] = check(args[i], S, pending)
            if pending:
                run_pending(pending, S)
            self._block(name, fn["code"], regs, S)
            if regs[-1] is None:
                return regs[fn["ret"]]
            args = regs[-1]

    def _to_device(self, value: object) -> object:
        """A host function's result on the device: arrays copied there; a shape (ints, as
        `tensor_to_shape` gives) stays on the host, where match_casts read it."""
        return cuda_tensor(value, self.device) if isinstance(value, np.ndarray | np.generic) else value

    def _tree(self, tree: Any, S: list[int]) -> int:
        if type(tree) is int:
            return tree
        key = json.dumps(tree)
        fn = self._trees.get(key)
        if fn is None:
            fn = self._trees[key] = compile_tree(tree)
        return int(fn(S))

    def _checker(self, spec: list[Any], where: str, slots: list[Any]) -> Any:
        key = id(spec)
        hit = self._checkers.get(key)
        if hit is None or hit[0] is not spec:
            hit = self._checkers[key] = (spec, _device_checker(self, spec, where, slots))
        return hit[1]

    def _block(self, fname: str, code: list[Any], regs: list[Any], S: list[int]) -> None:
        for ins in code:
            op = ins[0]
            if op == "kernel":
                self._kernel(fname, ins[1], ins[2], regs, S)
            elif op == "alloc":
                _, dst, dtype, shape, _ = ins
                dims = [self._tree(t, S) for t in shape]
                nbytes = math.prod(dims) * numpy_dtype(dtype).itemsize
                regs[dst] = CUDATensor(alloc(self.device.device_id, nbytes), dims, dtype,
                                       self.device)
            elif op == "storage":
                regs[ins[1]] = alloc(self.device.device_id, self._tree(ins[2], S))
            elif op == "view":
                _, dst, storage, offset, dtype, shape, _ = ins
                dims = [self._tree(t, S) for t in shape]
                nbytes = math.prod(dims) * numpy_dtype(dtype).itemsize
                off = self._tree(offset, S)
                where = f"{fname}: a {dtype} tensor placed in storage r{storage}"
                if off + nbytes > regs[storage].nbytes:
                    raise RuntimeError(
                        f"{where} at byte offset {off} needs bytes up to {off + nbytes}, but "
                        f"the storage has {regs[storage].nbytes}: a symbolic dim exceeds the "
                        "upper bound memory planning assumed (tir_var_upper_bound)"
                    )
                regs[dst] = CUDATensor(regs[storage].at(off, nbytes), dims, dtype, self.device)
            elif op in ("free", "kill"):
                regs[ins[1]] = None
            elif op == "const":
                regs[ins[1]] = self.constants[ins[2]]
            elif op == "lit":
                regs[ins[1]] = ins[2]
            elif op == "tuple":
                regs[ins[1]] = tuple(regs[r] for r in ins[2])
            elif op == "item":
                regs[ins[1]] = regs[ins[2]][int(ins[3])]
            elif op == "shape":
                regs[ins[1]] = tuple(self._tree(t, S) for t in ins[2])
            elif op == "prim":
                regs[ins[1]] = self._tree(ins[2], S)
            elif op == "match":
                check = self._checker(ins[2], ins[3], self.exe.program["functions"][fname]["slots"])
                pending: list[Any] = []
                regs[ins[1]] = check(regs[ins[1]], S, pending)
                if pending:
                    run_pending(pending, S)
            elif op == "host":  # on the host: inputs copied there, the results back
                args = [r.numpy() if isinstance(r, CUDATensor) else r for r in (regs[k] for k in ins[3])]
                out = host_function(ins[2])(*args)
                regs[ins[1]] = (tuple(self._to_device(o) for o in out) if isinstance(out, tuple)
                                else self._to_device(out))  # fmt: skip
            elif op == "call" and id(ins) in self._tails[fname]:
                regs[-1] = [regs[r] for r in ins[3]]  # `_run` goes round again with these
            elif op == "call":
                regs[ins[1]] = self._run(ins[2], [regs[r] for r in ins[3]])
            elif op == "if":
                _, dst, cond, then_code, then_reg, else_code, else_reg = ins
                value = regs[cond]
                if isinstance(value, CUDATensor):
                    value = value.numpy()
                if bool(value):
                    self._block(fname, then_code, regs, S)
                    regs[dst] = regs[then_reg]
                else:
                    self._block(fname, else_code, regs, S)
                    regs[dst] = regs[else_reg]
            else:
                raise ValueError(f"vm: malformed instruction {json.dumps(ins)[:80]} in @{fname}")

    def _kernel(self, fname: str, kname: str, args: list[Any], regs: list[Any],
                S: list[int]) -> None:
        kernels: CudaKernels = self.exe.kernels
        plan = kernels.plans.get(kname)
        if plan is None:
            raise ValueError(f"vm: @{fname} calls kernel {kname!r}, which the library does not have")
        buffers = [p for p in plan["params"] if p["kind"] == "buffer"]
        scalars = [p for p in plan["params"] if p["kind"] == "scalar"]
        tensors = [a for a in args if a[0] == "t"]
        values = [a for a in args if a[0] != "t"]
        if len(tensors) != len(buffers) or len(values) != len(scalars):
            raise ValueError(
                f"vm: @{fname} calls kernel {kname} with {len(tensors)} tensors and "
                f"{len(values)} scalars; it takes {len(buffers)} buffers and {len(scalars)} scalars"
            )
        env: dict[int, Any] = {}
        for param, (_, reg, dims) in zip(buffers, tensors, strict=True):
            t = regs[reg]
            if not isinstance(t, CUDATensor):
                raise TypeError(f"vm: @{fname}: kernel {kname} argument r{reg} is not a device "
                                f"tensor ({type(t).__name__})")
            shape = [self._tree(d, S) for d in dims] if dims is not None else list(t.shape)
            env[param["data"]] = t.ptr
            for decl, size in zip(param["shape"], shape):
                if isinstance(decl, list) and decl[0] == "v" and decl[1] not in env:
                    env[decl[1]] = int(size)
        for param, a in zip(scalars, values, strict=True):
            env[param["var"]] = self._tree(a[1], S) if a[0] == "i" else regs[a[1]]
        module = kernels.module_for(self.drv)
        drv = self.drv

        timings = self._timings

        def launch(name: str, grid: Any, block: Any, kargs: list[Any]) -> None:
            if timings is None:
                drv.launch(module.get_function(name), grid, block, kargs)
                return
            seconds = drv.time_launches(lambda: drv.launch(module.get_function(name), grid, block, kargs), 1)
            entry = timings.setdefault(name, [0.0, 0])
            entry[0] += seconds
            entry[1] += 1

        PlanRunner(plan, lambda n: alloc(self.device.device_id, n), launch, kname).run(env)


def _device_checker(vm: CudaVM, spec: list[Any], where: str, slots: list[Any]) -> Any:
    """Like `vm_checks.make_checker`, with tensors moved to (or kept on) the device."""
    kind = spec[0]
    if kind == "tuple":
        fields = [_device_checker(vm, f, f"{where} field {i}", slots)
                  for i, f in enumerate(spec[1])]

        def check_tuple(value: object, S: list[int], pending: list[Any]) -> object:
            if not isinstance(value, tuple | list) or len(value) != len(fields):
                raise ValueError(f"{where}: expected a tuple of {len(fields)} fields, got {value!r}")
            return tuple(f(v, S, pending) for f, v in zip(fields, value, strict=True))

        return check_tuple
    if kind != "tensor":
        host = make_checker(spec, where, slots)

        def check_host(value: object, S: list[int], pending: list[Any]) -> object:
            if isinstance(value, CUDATensor):
                value = value.numpy()
            return host(value, S, pending)

        return check_host
    _, dtype, ndim, dims, text = spec
    consts, binds, checks = _dims_plan(dims)
    what = f"a {dtype or ''} tensor of shape".replace("a  ", "a ")

    def check(value: object, S: list[int], pending: list[Any]) -> object:
        if not isinstance(value, CUDATensor):
            if isinstance(value, np.generic):  # a numpy scalar: a 0-d array
                value = np.asarray(value)
            if not isinstance(value, np.ndarray | Tensor):
                raise ValueError(  # noqa: TRY004 - as the CPU VM input checks
                    f"{where}: expected {what} {text}, got {type(value).__name__}"
                )
            held = held_as(value.numpy() if isinstance(value, Tensor) else value, dtype)  # a narrow type
            value = vm._upload(value if held is None else held)
        elif value.device != vm.device:
            raise ValueError(f"{where}: the tensor is on {value.device}, the VM on {vm.device}")
        if dtype not in (None, "void") and value.dtype != numpy_dtype(dtype).name:
            raise ValueError(f"{where}: expected dtype {dtype}, got {value.dtype}")
        shape = value.shape
        if ndim >= 0 and len(shape) != ndim:
            raise ValueError(f"{where}: expected rank {ndim} ({what} {text}), got rank "
                             f"{len(shape)} with shape {shape}")
        _dim_checks(shape, text, what, where, consts, binds, checks, S, pending, slots)
        return value

    return check
