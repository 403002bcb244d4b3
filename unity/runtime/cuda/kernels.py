"""`CudaKernels`: the kernels of a cuda `Executable` (CUDA C, PTX, host launch plans).

It is what ``unity.compile(mod, target="cuda")`` puts in `Executable.kernels`, and
what `export_library` writes: a small file (no shared library) that
`unity.runtime.load_module` recognises by its magic::

    b"UNITYCU1" <u64 json size> <json: arch, source, ptx, plans> [VM part, as for llvm]

The PTX is embedded when `nvcc` was there at export time; on a GPU the kernels are
loaded from PTX (the driver JIT-compiles it for the device at hand, so no compiler is
needed there when it is embedded; otherwise `nvcc -ptx` makes it).

Example:
    >>> ex = unity.compile(mod, target="cuda")              # doctest: +SKIP
    >>> "__global__" in ex.kernels.get_source("cuda")        # doctest: +SKIP
    True
"""

from __future__ import annotations

import json
import struct
from typing import Any

MAGIC = b"UNITYCU1"
_HEADER = struct.Struct("<8sQ")


class CudaKernels:
    """Host launch plans and the CUDA C / PTX of their kernels.

    Args:
        source: The CUDA C of every kernel.
        arch: The `sm_XX` the kernels are compiled for.
        plans: Host function name -> launch plan (`unity.codegen.cuda_host_plan`).
        ptx: PTX of `source`, when known.
        lowered: The lowered TIR module (this process only: the emulator runs it).

    Example:
        >>> CudaKernels("", "sm_80", {}).function_names
        []
    """

    def __init__(self, source: str, arch: str, plans: dict[str, Any], ptx: str | None = None,
                 lowered: Any = None) -> None:
        self.source, self.arch, self.plans, self.ptx = source, arch, plans, ptx
        self.lowered = lowered
        if lowered is not None:
            from unity.runtime.cuda.emulated import register_source

            register_source(source, lowered)
        self._modules: dict[int, Any] = {}

    @classmethod
    def from_module(cls, lib: Any) -> CudaKernels:
        """Wrap a `unity.build(..., "cuda")` module (the compiler is imported here).

        Example:
            >>> CudaKernels.from_module(unity.build(func, "cuda"))  # doctest: +SKIP
        """
        from unity.codegen.cuda_host_plan import host_plans

        return cls(lib.source, lib.arch, host_plans(lib.mod), lowered=lib.mod)

    @property
    def function_names(self) -> list[str]:
        """Names of the host functions."""
        return list(self.plans)

    def __contains__(self, name: object) -> bool:
        return name in self.plans

    def get_source(self, fmt: str = "cuda") -> str:
        """`"cuda"`: the CUDA C; `"ptx"`: PTX (embedded, else `nvcc -ptx`).

        Example:
            >>> ex.kernels.get_source("ptx")  # doctest: +SKIP
        """
        if fmt in ("cuda", "cu"):
            return self.source
        if fmt == "ptx":
            if self.ptx is None:
                from unity.codegen.cuda_build import compile_ptx

                self.ptx = compile_ptx(self.source, self.arch)
            return self.ptx
        raise ValueError(f"CudaKernels.get_source: unknown format {fmt!r} (cuda, ptx)")

    def module_for(self, drv: Any) -> Any:
        """The kernels loaded by driver `drv` (loaded once per driver).

        Example:
            >>> kernels.module_for(active_driver(0)).get_function("main_kernel")  # doctest: +SKIP
        """
        key = id(drv)
        loaded = self._modules.get(key)
        if loaded is None or loaded[0] is not drv:
            if getattr(drv, "emulated", False):
                module = drv.load_module(self.source, self.arch)
            else:  # PTX is JIT-compiled for the device at hand (a cubin fits one arch only)
                module = drv.load_ptx(self.get_source("ptx"))
            loaded = self._modules[key] = (drv, module)
        return loaded[1]

    def export_library(self, path: str) -> None:
        """Write the kernels (CUDA C, PTX when nvcc is there, plans) to `path`.

        Example:
            >>> ex.kernels.export_library("/tmp/kernels.cu.bin")  # doctest: +SKIP
        """
        ptx = self.ptx
        if ptx is None:
            from unity.codegen.cuda_build import nvcc_path

            if nvcc_path() is not None:
                ptx = self.get_source("ptx")
        text = json.dumps(
            {"arch": self.arch, "source": self.source, "ptx": ptx, "plans": self.plans}
        ).encode()
        with open(path, "wb") as f:
            f.write(_HEADER.pack(MAGIC, len(text)))
            f.write(text)

    def __repr__(self) -> str:
        return f"<CudaKernels {self.function_names} arch={self.arch}>"


def is_cuda_library(path: str) -> bool:
    """True when file `path` starts with the `CudaKernels` magic.

    Example:
        >>> is_cuda_library("/dev/null")
        False
    """
    with open(path, "rb") as f:
        return f.read(len(MAGIC)) == MAGIC


def load_cuda_library(path: str) -> CudaKernels:
    """The `CudaKernels` written by `export_library` to `path`.

    Example:
        >>> load_cuda_library("/tmp/model.cu.so")  # doctest: +SKIP
    """
    with open(path, "rb") as f:
        magic, size = _HEADER.unpack(f.read(_HEADER.size))
        if magic != MAGIC:
            raise ValueError(f"load_cuda_library: {path} is not an exported cuda module")
        data = json.loads(f.read(size).decode())
    return CudaKernels(data["source"], data["arch"], data["plans"], data.get("ptx"))
