"""Optimize an LLVM module for the target CPU, JIT it, and export it as a shared library.

Optimization: LLVM's new pass manager at O3 (`PassBuilder` with loop and SLP
vectorization on) for a target machine made from the target's CPU and features.

Each module of kernels is optimized and compiled to an object file on its own
(`compile_module`, possibly in a worker process); `load_compiled` loads the objects
into one MCJIT engine beside the library's globals.

Example:
    >>> part = compile_module(cg.module, Target("llvm"))          # doctest: +SKIP
    >>> lib = load_compiled([part], Target("llvm"), metadata)     # doctest: +SKIP
"""

from __future__ import annotations

import ctypes.util
import functools
import os
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any

import llvmlite.binding as llvm
from llvmlite import ir

from unity.codegen.llvm import globals_module
from unity.runtime.module import Module
from unity.runtime.thread_pool import gomp_library
from unity.target import Target


LLVM_MIN = (17, 0)
"""The oldest LLVM our IR parses on: we emit opaque pointers (`ptr`), which LLVM 17 made
the only kind (llvmlite 0.45 and later ship LLVM 20; 0.44 ships LLVM 15)."""


def check_llvm_version(found: tuple[int, ...]) -> None:
    """Raise a clear error when llvmlite's LLVM is older than `LLVM_MIN`.

    Example:
        >>> check_llvm_version((20, 1, 8))
        >>> check_llvm_version((15, 0, 7))
        Traceback (most recent call last):
        ...
        RuntimeError: unity needs llvmlite >= 0.45 (LLVM >= 17, opaque pointers); this llvmlite has LLVM 15.0.7: pip install -U llvmlite
    """
    if tuple(found[:2]) < LLVM_MIN:
        have = ".".join(map(str, found))
        raise RuntimeError(f"unity needs llvmlite >= 0.45 (LLVM >= 17, opaque pointers); this "
                           f"llvmlite has LLVM {have}: pip install -U llvmlite")


@functools.cache
def _init() -> None:
    check_llvm_version(llvm.llvm_version_info)
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.load_library_permanently(gomp_library())  # GOMP_parallel for JIT code
    # LLVM lowers some conversions to compiler-rt/libgcc helpers (float64 -> float16 is
    # `__truncdfhf2`); a shared library linked by `cc` gets them from libgcc, the JIT from here.
    libgcc = ctypes.util.find_library("gcc_s")
    if libgcc:
        llvm.load_library_permanently(libgcc)


@functools.lru_cache(maxsize=16)
def target_machine(target: Target, jit: bool) -> llvm.TargetMachine:
    """A shared target machine for `target`: for the JIT, or position-independent for a `.so`.

    Example:
        >>> target_machine(Target("llvm"), jit=True).triple  # doctest: +SKIP
        'x86_64-unknown-linux-gnu'
    """
    return new_target_machine(target, jit)


def new_target_machine(target: Target, jit: bool) -> llvm.TargetMachine:
    """A fresh target machine (an execution engine takes ownership of the one it gets).

    Example:
        >>> new_target_machine(Target("llvm"), jit=True).triple  # doctest: +SKIP
        'x86_64-unknown-linux-gnu'
    """
    _init()
    llvm_target = llvm.Target.from_triple(target.triple)
    opt = min(target.opt_level, 3)
    if jit:
        return llvm_target.create_target_machine(
            cpu=target.mcpu, features=target.features, opt=opt, jit=True
        )
    return llvm_target.create_target_machine(
        cpu=target.mcpu, features=target.features, opt=opt, reloc="pic", codemodel="default"
    )


def optimize(module: ir.Module, target: Target) -> llvm.ModuleRef:
    """Parse, verify and optimize `module` (O3 by default) for `target`.

    Example:
        >>> str(optimize(ir_module, Target("llvm")))  # doctest: +SKIP
    """
    tm = target_machine(target, jit=True)
    module.data_layout = str(tm.target_data)
    ref = llvm.parse_assembly(str(module))
    ref.verify()
    if target.opt_level > 0:
        tuning = llvm.create_pipeline_tuning_options(speed_level=min(target.opt_level, 3))
        tuning.loop_vectorization = True
        tuning.slp_vectorization = True
        builder = llvm.create_pass_builder(tm, tuning)
        builder.getModulePassManager().run(ref, builder)
    return ref


@dataclass(frozen=True)
class CompiledModule:
    """One LLVM module after `compile_module`: its optimized IR as bitcode (for
    `get_source` and `export_library`) and its machine code for the JIT (an object file
    of the large code model, which the JIT can load at any address).

    Example:
        >>> part = CompiledModule(bitcode=b"BC...", obj=b"\\x7fELF...")
        >>> len(part.obj)
        7
    """

    bitcode: bytes
    obj: bytes


def compile_module(module: ir.Module, target: Target) -> CompiledModule:
    """Optimize `module` (`optimize`) and compile it to JIT-loadable machine code.

    Both halves are plain bytes, so a worker process can do this and send the result
    back (`unity.codegen.build_jobs`).

    Example:
        >>> part = compile_module(cg.module, Target("llvm"))  # doctest: +SKIP
        >>> part.obj[:4]                                      # doctest: +SKIP
        b'\\x7fELF'
    """
    ref = optimize(module, target)
    return CompiledModule(ref.as_bitcode(), target_machine(target, jit=True).emit_object(ref))


def load_compiled(
    parts: list[CompiledModule], target: Target, metadata: dict[str, Any]
) -> Module:
    """Load compiled kernel modules into the JIT beside `globals_module(metadata)`;
    return the runtime `Module` over them.

    Example:
        >>> lib = load_compiled([compile_module(cg.module, target)], target, metadata)  # doctest: +SKIP
    """
    base = optimize(globals_module(target, metadata), target)
    bitcodes = [base.as_bitcode(), *(part.bitcode for part in parts)]
    # the engine takes ownership of (and frees) its target machine: give it a fresh one
    engine = llvm.create_mcjit_compiler(base, new_target_machine(target, jit=True))
    for part in parts:
        engine.add_object_file(llvm.ObjectFileRef.from_data(part.obj))
    engine.finalize_object()

    def address_of(symbol: str) -> int:
        return engine.get_function_address(symbol) or engine.get_global_value_address(symbol)

    @functools.cache
    def optimized() -> str:
        return str(_link(bitcodes))

    def source(fmt: str) -> str:
        if fmt == "ll":
            return optimized()
        if fmt in ("asm", "s"):
            return target_machine(target, jit=False).emit_assembly(_link(bitcodes))
        raise ValueError(f"get_source: unknown format {fmt!r}; use 'll' or 'asm'")

    def exporter(path: str) -> None:
        export_shared_library(optimized(), target, path)

    return Module(metadata, address_of, sources=source, exporter=exporter, keepalive=engine)


def _link(bitcodes: list[bytes]) -> llvm.ModuleRef:
    """One module holding every module of `bitcodes` (their symbols are distinct)."""
    linked = llvm.parse_bitcode(bitcodes[0])
    for code in bitcodes[1:]:
        linked.link_in(llvm.parse_bitcode(code))
    return linked


def export_shared_library(llvm_ir: str, target: Target, path: str) -> None:
    """Compile `llvm_ir` to object code and link it with `cc -shared` into `path`.

    Example:
        >>> export_shared_library(ll_text, Target("llvm"), "/tmp/k.so")  # doctest: +SKIP
    """
    obj = target_machine(target, jit=False).emit_object(llvm.parse_assembly(llvm_ir))
    with tempfile.TemporaryDirectory(prefix="unity_export_") as tmp:
        obj_path = os.path.join(tmp, "kernels.o")
        with open(obj_path, "wb") as f:
            f.write(obj)
        cmd = ["cc", "-shared", "-o", os.path.abspath(path), obj_path, "-lgomp", "-lm"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"export_library: linking failed ({' '.join(cmd)}):\n{done.stderr}")
