"""Per-kernel profiling of the relax VM: where a model's time goes (TVM's `vm.profile`).

`profile(vm, name, *inputs)` builds a second copy of the VM's generated code in which
every kernel call site is wrapped by two clock reads, runs the function once to warm
up, then `repeat` more times, and returns a `ProfileReport`: one row per call site
(the kernel, its buffers' shapes), sorted by time, with its share of the total, plus a
row for what is not in any kernel (the VM's own Python work, allocation).

Example:
    >>> report = vm.profile(np.ones((1, 3, 224, 224), "float32"))  # doctest: +SKIP
    >>> print(report.table(top=10))                                # doctest: +SKIP
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from unity.runtime.vm_pool import StoragePool


@dataclass(frozen=True, slots=True)
class ProfileRow:
    """One kernel call site: seconds per run (summed over its calls in one run).

    Example:
        >>> row = ProfileRow("fused_matmul_add", "(1, 64) (64, 64) -> (1, 64)", 2, 3e-4, 0.75)
        >>> row.calls, row.share
        (2, 0.75)
    """

    name: str
    shapes: str
    calls: int
    seconds: float
    share: float


@dataclass(frozen=True, slots=True)
class ProfileReport:
    """The kernel call sites of one function, slowest first, and the run's total.

    Example:
        >>> r = ProfileReport((ProfileRow("add", "(4,) (4,) -> (4,)", 1, 1e-3, 0.5),), 2e-3)
        >>> r.kernel_seconds
        0.001
    """

    rows: tuple[ProfileRow, ...]
    total_seconds: float

    @property
    def kernel_seconds(self) -> float:
        """Seconds per run spent inside kernels."""
        return sum(r.seconds for r in self.rows)

    def by_kernel(self) -> list[tuple[str, int, float]]:
        """(kernel name, call count, seconds) summed over call sites, slowest first.

        Example:
            >>> ProfileReport((ProfileRow("k", "", 2, 1.0, 1.0),), 1.0).by_kernel()
            [('k', 2, 1.0)]
        """
        sums: dict[str, list[float]] = {}
        for r in self.rows:
            entry = sums.setdefault(r.name, [0, 0.0])
            entry[0] += r.calls
            entry[1] += r.seconds
        return sorted(((k, int(c), s) for k, (c, s) in sums.items()), key=lambda t: -t[2])

    def table(self, top: int | None = None) -> str:
        """The report as text: ms, share of the total, calls, kernel, shapes.

        Example:
            >>> print(ProfileReport((), 1e-3).table())  # doctest: +NORMALIZE_WHITESPACE
                ms  share calls  kernel  shapes
             1.000 100.0%        (outside kernels: VM, allocation)
             1.000 100.0%        total (per run)
        """
        lines = [f"{'ms':>6s}  share calls  kernel  shapes"]
        shown = self.rows if top is None else self.rows[:top]
        for r in shown:
            lines.append(f"{r.seconds * 1e3:6.3f} {100 * r.share:5.1f}% {r.calls:5d}  {r.name}  "
                         f"{r.shapes}")  # fmt: skip
        rest = self.rows[len(shown) :]
        if rest:
            sec = sum(r.seconds for r in rest)
            lines.append(f"{sec * 1e3:6.3f} {100 * sec / self.total_seconds:5.1f}%        "
                         f"({len(rest)} more call sites)")  # fmt: skip
        other = max(self.total_seconds - self.kernel_seconds, 0.0)
        lines.append(f"{other * 1e3:6.3f} {100 * other / self.total_seconds:5.1f}%        "
                     "(outside kernels: VM, allocation)")  # fmt: skip
        lines.append(f"{self.total_seconds * 1e3:6.3f} 100.0%        total (per run)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _dim_text(dim: Any) -> str:
    if isinstance(dim, list):
        return f"({_dim_text(dim[1])} {dim[0]} {_dim_text(dim[2])})"
    return str(dim)


def _shapes(meta: dict[str, Any]) -> str:
    """The kernel's buffer shapes as text, the last buffer (the output, by convention) after ->."""
    shapes = [
        f"({', '.join(_dim_text(d) for d in p['shape'])}{',' if len(p['shape']) == 1 else ''})"
        for p in meta["params"]
        if p["kind"] == "buffer"
    ]
    if len(shapes) < 2:
        return " ".join(shapes)
    return f"{' '.join(shapes[:-1])} -> {shapes[-1]}"


def _profiling_loader(exe: Any, pool: StoragePool) -> tuple[dict[str, Any], list[list[Any]]]:
    """The VM's generated code with each kernel call timed; returns (namespace, sites)."""
    from unity.runtime.vm import _Loader

    sites: list[list[Any]] = []  # [kernel name, shapes, seconds, calls]

    class _Timed(_Loader):
        runs = False  # each kernel called (and timed) on its own

        def _kernel(self, fname: str, ins: list[Any], ind: str, has_ptr: set[int]) -> None:
            super()._kernel(fname, ins, ind, has_ptr)
            call = self.lines.pop(-2)  # "st = K(...)"; the last line checks the status
            site = [ins[1], _shapes(self.exe.kernels.get_function(ins[1]).meta), 0.0, 0]
            sites.append(site)
            rec = self._name("SITE", site)
            self.lines.insert(-1, f"{ind}T0 = CLK()")
            self.lines.insert(-1, call)
            self.lines.insert(-1, f"{ind}{rec}[2] += CLK() - T0; {rec}[3] += 1")

    # `_Loader.__init__` compiles the code right away; the generated lines only look
    # up CLK when they run, so adding it to the namespace afterwards is enough.
    loader = _Timed(exe, pool)
    loader.namespace["CLK"] = time.perf_counter
    return loader.namespace, sites


def profile(vm: Any, name: str, *inputs: object, repeat: int = 1) -> ProfileReport:
    """Run `name` once to warm up, then `repeat` times with every kernel call timed.

    Example:
        >>> print(profile(vm, "main", x).table(top=5))  # doctest: +SKIP
    """
    from unity.runtime.vm import _fn_symbol

    if name not in vm.exe.program["functions"]:
        raise KeyError(f"VirtualMachine.profile: no function {name!r}; it has {vm.exe.function_names}")
    params = vm.exe.program["functions"][name]["params"]
    if len(inputs) != len(params):
        raise ValueError(
            f"VirtualMachine.profile: {name} takes {len(params)} inputs "
            f"({', '.join(p['name'] for p in params)}), got {len(inputs)}"
        )
    if repeat < 1:
        raise ValueError(f"VirtualMachine.profile: repeat must be at least 1, got {repeat}")
    namespace, sites = _profiling_loader(vm.exe, StoragePool())
    impl = namespace[_fn_symbol(vm.exe, name)]
    impl(*inputs)  # warm up: checks, storage pool, first-touch of memory
    for site in sites:
        site[2], site[3] = 0.0, 0
    start = time.perf_counter()
    for _ in range(repeat):
        impl(*inputs)
    vm.device.sync()
    total = (time.perf_counter() - start) / repeat
    rows = [
        ProfileRow(kname, shapes, calls // repeat, sec / repeat, sec / repeat / total)
        for kname, shapes, sec, calls in sites
        if calls
    ]
    rows.sort(key=lambda r: -r.seconds)
    return ProfileReport(tuple(rows), total)
