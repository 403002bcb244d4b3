"""`Executable`: VM bytecode + compiled kernels + constants, exported as one shared library.

The file `export_library` writes is the kernels' shared library (as
`Module.export_library` writes it) with the VM's part appended after the ELF
image, where the dynamic loader never looks::

    <kernels .so> <program JSON> <constants .npz> <u64 json size> <u64 npz size> b"UNITYVM1"

`load_module` (``unity.runtime.module``) opens the library and, when the trailer is
there, returns an `Executable` built by `attach_vm`.  Nothing here imports the
compiler.

Example:
    >>> ex = unity.compile(mod)                         # doctest: +SKIP
    >>> ex.export_library("/tmp/model.so")              # doctest: +SKIP
    >>> ex2 = unity.runtime.load_module("/tmp/model.so")  # doctest: +SKIP
"""

from __future__ import annotations

import io
import json
import struct
from typing import Any

import numpy as np

from unity.runtime.module import Module

MAGIC = b"UNITYVM1"
_TRAILER = struct.Struct("<QQ8s")


class Executable:
    """A compiled relax module: `program` (bytecode), `constants`, `kernels` (a `Module`).

    Args:
        program: ``{"version": 1, "functions": {name: function bytecode}}`` (plain JSON;
            format in `unity.runtime.vm`).
        constants: The arrays the bytecode's ``const`` instructions load.
        kernels: The compiled PrimFuncs, by the names the bytecode calls them with.

    Example:
        >>> ex.function_names  # doctest: +SKIP
        ['main']
    """

    def __init__(
        self, program: dict[str, Any], constants: list[np.ndarray], kernels: Module
    ) -> None:
        if program.get("version") != 1:
            raise ValueError(f"Executable: unknown bytecode version {program.get('version')!r}")
        self.program = program
        self.constants = [np.asarray(c, order="C") for c in constants]
        self.kernels = kernels

    @property
    def function_names(self) -> list[str]:
        """Names of the relax functions the VM can call."""
        return list(self.program["functions"])

    def export_library(self, path: str) -> None:
        """Write one shared library holding the kernels, the bytecode and the constants.

        Example:
            >>> ex.export_library("/tmp/model.so")  # doctest: +SKIP
        """
        self.kernels.export_library(str(path))
        _strip_vm(str(path))  # re-exporting a loaded executable copies its old VM part
        text = json.dumps(self.program).encode()
        buf = io.BytesIO()
        np.savez(buf, *self.constants)
        blob = buf.getvalue()
        with open(path, "ab") as f:
            f.write(text)
            f.write(blob)
            f.write(_TRAILER.pack(len(text), len(blob), MAGIC))

    def as_text(self) -> str:
        """The bytecode, one instruction a line (for reading and debugging).

        Example:
            >>> print(ex.as_text())  # doctest: +SKIP
        """
        lines = []
        for name, fn in self.program["functions"].items():
            params = ", ".join(p["name"] for p in fn["params"])
            lines.append(
                f"@{name}({params}):  # {fn['num_regs']} registers, {len(fn['slots'])} slots"
            )
            lines.extend(_code_text(fn["code"], "    "))
            lines.append(f"    ret r{fn['ret']}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Executable functions={self.function_names} constants={len(self.constants)}>"


def _code_text(code: list[Any], indent: str) -> list[str]:
    out = []
    for ins in code:
        if ins[0] == "if":
            _, dst, cond, then_code, then_ret, else_code, else_ret = ins
            out.append(f"{indent}if r{cond}:")
            out += _code_text(then_code, indent + "    ") + [f"{indent}    r{dst} = r{then_ret}"]
            out.append(f"{indent}else:")
            out += _code_text(else_code, indent + "    ") + [f"{indent}    r{dst} = r{else_ret}"]
        else:
            out.append(f"{indent}{ins[0]} {json.dumps(ins[1:])[1:-1]}")
    return out


def _read_trailer(f: io.BufferedIOBase) -> tuple[int, int, int] | None:
    """(file size, program size, constants size) when the open file ends with a VM part."""
    f.seek(0, io.SEEK_END)
    size = f.tell()
    if size < _TRAILER.size:
        return None
    f.seek(size - _TRAILER.size)
    n_text, n_blob, magic = _TRAILER.unpack(f.read(_TRAILER.size))
    return (size, n_text, n_blob) if magic == MAGIC else None


def _strip_vm(path: str) -> None:
    with open(path, "r+b") as f:
        found = _read_trailer(f)
        if found is not None:
            size, n_text, n_blob = found
            f.truncate(size - _TRAILER.size - n_text - n_blob)


def attach_vm(path: str, kernels: Module) -> Module | Executable:
    """The `Executable` stored in library `path` (whose kernels are open), else `kernels`.

    Example:
        >>> attach_vm("/tmp/kernels_only.so", lib) is lib  # doctest: +SKIP
        True
    """
    with open(path, "rb") as f:
        found = _read_trailer(f)
        if found is None:
            return kernels
        size, n_text, n_blob = found
        f.seek(size - _TRAILER.size - n_blob - n_text)
        program = json.loads(f.read(n_text).decode())
        blob = f.read(n_blob)
    with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
        constants = [npz[f"arr_{i}"] for i in range(len(npz.files))]
    return Executable(program, constants, kernels)
