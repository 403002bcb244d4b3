"""`build(mod, "cuda")`: lower for the GPU, print CUDA C, and compile kernels lazily.

The returned `CUDAModule` holds the CUDA C (`get_source("cuda")`), PTX on demand
(`get_source("ptx")`, with `nvcc -ptx`), and runs a host function on numpy arrays
(`lib["main"](a, b, c)`: copied to the GPU, kernels compiled to PTX and launched through
`unity.runtime.cuda.driver()`, results copied back) where a GPU and pycuda or
cuda-python exist.  `lib.emulate("main", ...)` runs
the same kernels in the CPU emulator (`unity.tir.gpu_emulator`).

Example:
    >>> lib = build(sch.mod, "cuda -arch=sm_90")     # doctest: +SKIP
    >>> print(lib.get_source("cuda"))                 # doctest: +SKIP
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

from unity.codegen.cuda import CodeGenCUDA
from unity.ir.module import IRModule
from unity.target import Target
from unity.tir.function import PrimFunc
from unity.tir.transform.gpu import lower_cuda
from unity.tir.transform.gpu.split_host_device import is_kernel


def nvcc_path() -> str | None:
    """Path of `nvcc` (PATH, then /usr/local/cuda/bin), or None.

    Example:
        >>> nvcc_path() is None or nvcc_path().endswith("nvcc")
        True
    """
    found = shutil.which("nvcc")
    if found:
        return found
    default = "/usr/local/cuda/bin/nvcc"
    return default if os.path.exists(default) else None


def compile_ptx(source: str, arch: str | None = "sm_90") -> str:
    """Compile CUDA C to PTX with `nvcc -ptx`; raise `RuntimeError` with nvcc's message.

    Example:
        >>> ptx = compile_ptx(lib.get_source("cuda"), "sm_90")  # doctest: +SKIP
    """
    nvcc = nvcc_path()
    if nvcc is None:
        raise RuntimeError("compile_ptx: nvcc was not found (install the CUDA toolkit)")
    with tempfile.TemporaryDirectory(prefix="unity_cuda_") as tmp:
        src, out = os.path.join(tmp, "kernels.cu"), os.path.join(tmp, "kernels.ptx")
        with open(src, "w") as f:
            f.write(source)
        cmd = [nvcc, "-ptx", "-std=c++17", src, "-o", out]
        if arch:
            cmd[2:2] = [f"-arch={arch}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"nvcc -ptx failed:\n{proc.stderr.strip()}")
        with open(out) as f:
            return f.read()


def build(mod_or_func: IRModule | PrimFunc, target: Target | str = "cuda") -> CUDAModule:
    """Lower (`lower_cuda`, unless already lowered) and print CUDA C for every kernel.

    Example:
        >>> lib = build(func, "cuda -arch=sm_80")  # doctest: +SKIP
    """
    target = Target(target)
    if target.kind != "cuda":
        raise ValueError(f"cuda_build.build: target {target} is not a cuda target")
    mod = IRModule({"main": mod_or_func}) if isinstance(mod_or_func, PrimFunc) else mod_or_func
    if not any(is_kernel(f) for _, f in mod.items()):
        mod = lower_cuda(mod)
    source = CodeGenCUDA().add_module(mod).finish()
    return CUDAModule(mod, source, target.arch or "sm_80")


class CUDAModule:
    """Host functions launching CUDA kernels: `lib["main"](*arrays)`, `get_source("cuda")`.

    Example:
        >>> from unity import te
        >>> from unity.schedule.default_gpu import apply_default_gpu_schedules
        >>> A = te.placeholder((1024,), name="A")
        >>> B = te.compute((1024,), lambda i: A[i] * 2.0, name="B")
        >>> mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([A, B])}))
        >>> lib = build(mod, "cuda")  # prints CUDA C; nvcc and a GPU are needed only to run it
        >>> lib.host_names, "__global__" in lib.get_source("cuda")
        (['main'], True)
    """

    def __init__(self, mod: IRModule, source: str, arch: str) -> None:
        self.mod, self.source, self.arch = mod, source, arch
        self._loaded: Any = None

    @property
    def host_names(self) -> list[str]:
        """Names of the host functions."""
        return [gv.name_hint for gv, f in self.mod.items() if isinstance(f, PrimFunc) and not is_kernel(f)]

    def get_source(self, fmt: str = "cuda") -> str:
        """`"cuda"`: the CUDA C; `"ptx"`: PTX from `nvcc -ptx`; `"tir"`: the lowered module.

        Example:
            >>> "__global__" in lib.get_source("cuda")  # doctest: +SKIP
            True
        """
        if fmt in ("cuda", "cu"):
            return self.source
        if fmt == "ptx":
            return compile_ptx(self.source, self.arch)
        if fmt == "tir":
            return self.mod.script()
        raise ValueError(f"CUDAModule.get_source: unknown format {fmt!r} (cuda, ptx, tir)")

    def __getitem__(self, name: str) -> Callable[..., None]:
        if name not in self.host_names:
            raise KeyError(f"CUDAModule: no host function {name!r}; have {self.host_names}")
        return lambda *args: self._run_gpu(name, args)

    def emulate(self, name: str, *args: Any) -> None:
        """Run host function `name` in the CPU emulator (numpy arrays, in place).

        Example:
            >>> lib.emulate("main", a, b, c)  # doctest: +SKIP
        """
        from unity.tir.gpu_emulator import emulate

        emulate(self.mod, *args, func_name=name)

    def time_evaluator(self, name: str, number: int = 10, repeat: int = 1) -> Callable[..., Any]:
        """A function timing `name` on the GPU with CUDA events: `ProfileResult` seconds per run.

        The arguments are copied to the device once; each repeat launches the host function
        `number` times between two events (after one warm-up run); outputs are copied back.

        Example:
            >>> lib.time_evaluator("main", number=20)(a, b, c).mean  # doctest: +SKIP
        """
        from unity.runtime.module import ProfileResult

        def evaluate(*args: Any) -> ProfileResult:
            call = _DeviceCall(self, name, args)
            call.launch()
            results = []
            for _ in range(repeat):
                results.append(call.drv.time_launches(call.launch, number) / number)
            call.finish()
            return ProfileResult(tuple(results))

        return evaluate

    def _run_gpu(self, name: str, args: tuple[Any, ...]) -> None:
        call = _DeviceCall(self, name, args)
        call.launch()
        call.finish()

    def _function(self, drv: Any, kname: str) -> Any:
        if self._loaded is None:
            self._loaded = drv.load_module(self.source, self.arch)
        return self._loaded.get_function(kname)


class _DeviceCall:
    """One call of a host function on the GPU: arguments on the device, launches, copy back."""

    def __init__(self, lib: CUDAModule, name: str, args: tuple[Any, ...]) -> None:
        from unity.runtime.cuda import driver
        from unity.tir.interpreter import _bind

        self.lib, self.drv = lib, driver()
        host = lib.mod[name]
        assert isinstance(host, PrimFunc)
        self.host = host
        self.env, self.copies = _bind(host, args)
        self.flats = {v: a for v, a in self.env.items() if isinstance(a, np.ndarray)}
        for var, arr in self.flats.items():
            self.env[var] = self.drv.to_device(arr)

    def launch(self) -> None:
        from unity.tir.gpu_emulator import HostRunner

        drv, lib = self.drv, self.lib

        def launcher(kname: str, kernel: PrimFunc, grid: list[int], block: list[int],
                     values: list[Any]) -> None:
            typed = [_typed(p, v) for p, v in zip(kernel.params, values)]
            drv.launch(lib._function(drv, kname), tuple(grid), tuple(block), typed)

        def alloc(size: int, dtype: str) -> Any:
            from unity.ir import dtype as dt

            return drv.alloc(size * np.dtype(dt.numpy_name(dtype)).itemsize)

        HostRunner(lib.mod, dict(self.env), launcher, alloc).run(self.host.body)

    def finish(self) -> None:
        self.drv.synchronize()
        for var, arr in self.flats.items():
            self.drv.to_host(self.env[var], arr)
        for original, copy in self.copies:
            original[...] = copy.reshape(original.shape)


def _typed(param: Any, value: Any) -> Any:
    from unity.ir import dtype as dt
    from unity.tir.buffer import Buffer

    if isinstance(param, Buffer):
        return value
    return np.dtype(dt.numpy_name(param.dtype)).type(value)
