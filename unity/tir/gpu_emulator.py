"""`emulate`: run CUDA-lowered TIR (host functions + kernels) on the CPU, checking races.

The GPU's execution model, emulated: every block of the grid runs in turn; inside a
block every thread is a Python generator compiled from the kernel (the reference
interpreter's compiler, `interpreter_compile`, extended), and all threads run each phase
between two `__syncthreads()` before any goes on.  Warp shuffles exchange values between
the 32 lanes of a warp when all of them reach the shuffle.  `shared` buffers exist once
per block, `local` ones once per thread.

It reports, naming the buffer and the statement:
- out-of-bounds accesses (any scope);
- data races on shared memory: an element written by one thread and read or written by
  another with no barrier between them (in either order within one phase);
- divergence: a `__syncthreads()` or a full-mask shuffle that some threads of the block
  (lanes of the warp) never reach.

Example:
    >>> from unity.tir.transform.gpu import lower_cuda
    >>> emulate(lower_cuda(sch.mod), a, b, c)   # doctest: +SKIP
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from unity.ir import dtype as dt
from unity.ir.module import IRModule
from unity.ir.printer import script
from unity.tir import expr as E
from unity.tir import stmt as S
from unity.tir.buffer import Buffer
from unity.tir.function import PrimFunc
from unity.tir.interpreter import _bind, _evaluate
from unity.tir.interpreter_compile import InterpretError, _Compiler
from unity.tir.transform.gpu.intrinsics import launch_op, shfl_down_op, shfl_idx_op, syncthreads_op
from unity.tir.transform.gpu.lower_thread_binding_gpu import launch_nest
from unity.tir.transform.gpu.wmma import FRAGMENT_SCOPES, TILE, is_wmma


class EmulatorError(InterpretError):
    """A fault found while emulating a GPU kernel (race, out-of-bounds, divergent barrier).

    Example:
        >>> isinstance(EmulatorError("race on A[0]"), InterpretError)
        True
    """


def emulate(mod: IRModule, *args: Any, func_name: str = "main") -> None:
    """Run host function `func_name` of a `lower_cuda` module on numpy arrays, in place.

    Args:
        mod: the output of `unity.tir.transform.gpu.lower_cuda`.
        *args: one numpy array per buffer parameter, a number per scalar parameter.
        func_name: the host function to run.

    Raises:
        EmulatorError: a data race, an out-of-bounds access or a divergent barrier.

    Example:
        >>> emulate(lower_cuda(func), a, b)  # doctest: +SKIP
    """
    host = mod[func_name]
    if not isinstance(host, PrimFunc):
        raise EmulatorError(f"emulate: {func_name} is not a PrimFunc")
    if len(args) != len(host.params):
        raise EmulatorError(f"emulate: {func_name} takes {len(host.params)} arguments, got {len(args)}")
    env, copies = _bind(host, args)
    with np.errstate(all="ignore"):
        HostRunner(mod, env, _emulate_launch).run(host.body)
    for original, copy in copies:
        original[...] = copy.reshape(original.shape)


Launcher = Callable[[str, PrimFunc, list[int], list[int], list[Any]], None]
"""`launch(name, kernel, grid, block, args)`: runs one kernel (emulated or on a GPU)."""


class HostRunner:
    """Walk a host body: loops, lets, asserts, ifs, global allocations and kernel launches.

    `env` maps the host's variables (buffer data vars to device or numpy memory, shape
    vars to ints); `launcher` runs each kernel; `alloc(size, dtype)` makes a host-level
    global buffer (numpy zeros by default).

    Example:
        >>> HostRunner(mod, env, launcher).run(mod["main"].body)  # doctest: +SKIP
    """

    def __init__(self, mod: IRModule, env: dict[E.Var, Any], launcher: Launcher,
                 alloc: Callable[[int, str], Any] | None = None) -> None:
        self.mod, self.env, self.launcher = mod, env, launcher
        self.alloc = alloc or (lambda size, dtype: np.zeros(size, dt.numpy_name(dtype)))

    def run(self, stmt: S.Stmt) -> None:
        """Run one host statement.

        Example:
            >>> from unity import tir
            >>> n = E.Var("n")
            >>> runner = HostRunner(IRModule(), {n: 3}, lambda *a: None)
            >>> runner.run(S.AssertStmt(n < 4, "n too large", S.Evaluate(E.const(0))))
            >>> runner.run(S.AssertStmt(n < 2, "n too large", S.Evaluate(E.const(0))))
            Traceback (most recent call last):
                ...
            unity.tir.gpu_emulator.EmulatorError: n too large
        """
        if isinstance(stmt, S.SeqStmt):
            for s in stmt.seq:
                self.run(s)
        elif isinstance(stmt, S.For):
            lo = self.value(stmt.min)
            for i in range(lo, lo + self.value(stmt.extent)):
                self.env[stmt.loop_var] = i
                self.run(stmt.body)
        elif isinstance(stmt, S.LetStmt):
            self.env[stmt.var] = self.value(stmt.value)
            self.run(stmt.body)
        elif isinstance(stmt, S.AssertStmt):
            if not self.value(stmt.condition):
                raise EmulatorError(stmt.message)
            self.run(stmt.body)
        elif isinstance(stmt, S.IfThenElse):  # a kernel's int32 twin or itself
            if self.value(stmt.condition):
                self.run(stmt.then_case)
            elif stmt.else_case is not None:
                self.run(stmt.else_case)
        elif isinstance(stmt, S.Allocate):
            size = int(np.prod([self.value(d) for d in stmt.buffer.shape]))
            self.env[stmt.buffer.data] = self.alloc(size, stmt.buffer.dtype)
            self.run(stmt.body)
        elif _is_launch(stmt):
            self.launch(stmt.value)  # type: ignore[attr-defined]  # an Evaluate of a Call
        elif not (isinstance(stmt, S.Evaluate) and isinstance(stmt.value, E.IntImm)):
            raise EmulatorError(
                f"host code may only launch kernels; found `{_first_line(stmt)}` outside "
                "any thread-bound loop (bind its loops to blockIdx/threadIdx)"
            )

    def value(self, expr: E.PrimExpr) -> Any:
        """Evaluate a host expression (a variable's value, or an integer expression).

        Example:
            >>> n = E.Var("n")
            >>> HostRunner(IRModule(), {n: 5}, lambda *a: None).value(n * 2 + 1)
            11
        """
        if isinstance(expr, E.Var):
            return self.env[expr]
        return _evaluate(expr, self.env)

    def launch(self, call: E.Call) -> None:
        """Evaluate a launch's sizes and arguments and run the kernel.

        Example:
            >>> from unity.tir.buffer import decl_buffer
            >>> A = decl_buffer((4,), "float32", "A")
            >>> kernel = PrimFunc((A,), S.Evaluate(E.const(0)))
            >>> sizes = E.as_exprs((2, 1, 1, 32, 1, 1))  # grid, then block
            >>> call = E.Call("int32", launch_op, (E.StringImm("k"),) + sizes)
            >>> seen = []
            >>> HostRunner(IRModule({"k": kernel}), {}, lambda *a: seen.append(a[2:4])).launch(call)
            >>> seen
            [([2, 1, 1], [32, 1, 1])]
        """
        name = call.args[0].value  # type: ignore[attr-defined]  # a StringImm
        kernel = self.mod[name]
        assert isinstance(kernel, PrimFunc)
        grid = [int(self.value(a)) for a in call.args[1:4]]
        block = [int(self.value(a)) for a in call.args[4:7]]
        values = [self.value(a) for a in call.args[7:]]
        self.launcher(name, kernel, grid, block, values)


def _is_launch(stmt: S.Stmt) -> bool:
    return isinstance(stmt, S.Evaluate) and isinstance(stmt.value, E.Call) and stmt.value.op is launch_op


def _emulate_launch(name: str, kernel: PrimFunc, grid: list[int], block: list[int],
                    values: list[Any], sample: int | None = None) -> None:
    run_grid(_compiled(kernel), name, values, grid, block, sample)


_CACHE: dict[int, tuple[PrimFunc, Any]] = {}


def _compiled(kernel: PrimFunc) -> Any:
    hit = _CACHE.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return hit[1]
    compiled = _KernelCompiler(kernel).compile_kernel()
    _CACHE[id(kernel)] = (kernel, compiled)
    return compiled


def run_grid(thread_fn: Any, name: str, args: list[Any], grid: list[int], block: list[int],
             sample: int | None = None) -> None:
    """Run every block of `grid`, each with all its threads (x fastest); with `sample`,
    only that many blocks, spread evenly from the first to the last (whose tiles are the
    ragged ones): a check for races and out-of-bounds accesses on kernels too big to run
    whole, whose outputs are then only partly written.

    Example:
        >>> run_grid(fn, "k", [a], [1, 1, 1], [32, 1, 1])  # doctest: +SKIP
    """
    blocks = list(itertools.product(range(grid[2]), range(grid[1]), range(grid[0])))
    if sample is not None and len(blocks) > sample:
        step = (len(blocks) - 1) / max(sample - 1, 1)
        blocks = [blocks[round(n * step)] for n in range(sample)]
    for bz, by, bx in blocks:
        _Block(thread_fn, name, args, (bx, by, bz), block).run()


class _Block:
    """One thread block: shared storage, race tracking, and the barrier scheduler."""

    def __init__(self, fn: Any, name: str, args: list[Any], bidx: tuple[int, int, int],
                 block: list[int]) -> None:
        self.name, self.epoch, self.shared = name, 0, {}
        self.fragments: dict[tuple[int, int], np.ndarray] = {}
        dims = list(itertools.product(range(block[2]), range(block[1]), range(block[0])))
        self.threads = [fn(*args, bidx, (tx, ty, tz), tid, self)
                        for tid, (tz, ty, tx) in enumerate(dims)]
        self.where = f"block {bidx}"

    def alloc_warp(self, key: int, warp: int, size: int, dtype: Any) -> np.ndarray:
        """Warp `warp`'s fragment buffer allocated by statement `key`."""
        got = self.fragments.get((key, warp))
        if got is None:
            got = self.fragments[(key, warp)] = np.zeros(size, dtype)
        return got

    def alloc(self, key: int, size: int, dtype: Any) -> tuple[np.ndarray, _Tracker]:
        got = self.shared.get(key)
        if got is None:
            got = (np.zeros(size, dtype), _Tracker(self, size))
            self.shared[key] = got
        return got

    def run(self) -> None:
        pending: dict[int, Any] = {}
        for tid in range(len(self.threads)):
            self._step(tid, None, pending)
        while pending:
            if self._warp_calls(pending):
                continue
            waiting = [t for t, ev in pending.items() if ev[0] == "sync"]
            if len(waiting) != len(pending):
                raise EmulatorError(f"kernel {self.name}, {self.where}: threads are stuck "
                                    "(a shuffle some lanes of the warp never reach)")
            if len(waiting) != len(self.threads):
                raise EmulatorError(
                    f"kernel {self.name}, {self.where}: __syncthreads() is reached by "
                    f"{len(waiting)} of {len(self.threads)} threads, the others exited (a "
                    "barrier under a thread-dependent condition)"
                )
            self.epoch += 1
            pending.clear()
            for tid in waiting:
                self._step(tid, None, pending)

    def _step(self, tid: int, value: Any, pending: dict[int, Any]) -> None:
        try:
            pending[tid] = self.threads[tid].send(value)
        except StopIteration:
            pending.pop(tid, None)
        except EmulatorError as err:
            if str(err).startswith("kernel "):
                raise
            raise EmulatorError(f"kernel {self.name}, {self.where}, thread {tid}: {err}") from None

    def _warp_calls(self, pending: dict[int, Any]) -> bool:
        """Run the warp-collective events (shuffles, tensor-core calls) whose warp has
        all its lanes there; True when one ran."""
        warps: dict[int, list[int]] = {}
        for tid, ev in pending.items():
            if ev[0] in ("shfl", "wmma"):
                warps.setdefault(tid // 32, []).append(tid)
        done = False
        for warp, lanes in warps.items():
            members = range(warp * 32, min(warp * 32 + 32, len(self.threads)))
            if any(t not in pending for t in members):
                gone = [t for t in members if t not in pending]
                what = "shuffle" if pending[lanes[0]][0] == "shfl" else f"wmma_{pending[lanes[0]][1]}"
                raise EmulatorError(
                    f"kernel {self.name}, {self.where}: a full-mask warp {what} is reached by "
                    f"{len(lanes)} of {len(members)} lanes; threads {gone[0]}..{gone[-1]} "
                    f"already exited (a {what} under a thread-dependent condition?)"
                )
            if len(lanes) != len(members):
                continue  # wait until every lane of the warp reaches the shuffle
            if any(pending[t][0] == "wmma" for t in lanes):
                _run_wmma([pending[t] for t in lanes], lanes[0], self)
                results = dict.fromkeys(lanes)
            else:
                values = {t: pending[t][2] for t in lanes}
                results = {t: _shuffle_value(pending[t], t, values) for t in lanes}
            for t in lanes:
                del pending[t]
            for t in lanes:
                self._step(t, results[t], pending)
            done = True
        return done


def _run_wmma(events: list[tuple[Any, ...]], tid: int, block: _Block) -> None:
    """One tensor-core call by a whole warp (`events`: each lane's), checked: the same
    call with the same arguments on every lane, tiles in bounds and 32-byte aligned."""
    _, op, args, where = events[0]
    t = TILE

    def fail(what: str) -> EmulatorError:
        return EmulatorError(f"kernel {block.name}, {block.where}, warp {tid // 32}: {what}\n  in: {where}")

    key = _wmma_key(events[0])
    if any(e[0] != "wmma" or _wmma_key(e) != key for e in events[1:]):
        raise fail(f"the lanes of the warp make different tensor-core calls (a wmma_{op} under a "
                   "lane-dependent condition or index?)")

    def frag(arg: tuple[Any, int]) -> np.ndarray:
        storage, index = arg
        if not 0 <= index < storage.size // (t * t):
            raise fail(f"fragment {index} of {storage.size // (t * t)}")
        return storage[index * t * t:(index + 1) * t * t].reshape(t, t)

    def tile(arg: tuple[Any, ...], write: bool) -> np.ndarray:
        """The flat indices of a memory tile, checked and (in shared memory) tracked."""
        storage, offset, tracker, name, stride = arg
        itemsize = storage.dtype.itemsize
        if (offset * itemsize) % 32 or (stride * itemsize) % 16:
            raise fail(f"the tile of {name} at element {offset} (row stride {stride}) is not "
                       "32-byte aligned with a 16-byte multiple stride")
        flat = offset + np.arange(t)[:, None] * stride + np.arange(t)[None, :]
        if offset < 0 or flat.max() >= storage.size:
            raise fail(f"out-of-bounds tile {name}[{offset}..{flat.max()}] (size {storage.size})")
        if tracker is not None:
            (tracker.write_lanes if write else tracker.read_lanes)(flat.ravel(), tid, name, where)
        return flat

    if op == "fill":
        frag(args[0])[...] = args[1]
    elif op == "load":
        frag(args[0])[...] = args[1][0][tile(args[1], False)]
    elif op == "mma":
        d, a, b, c = (frag(x) for x in args)
        d[...] = (a.astype(np.float32) @ b.astype(np.float32) + c.astype(np.float32)).astype(d.dtype)
    else:  # store
        args[0][0][tile(args[0], True)] = frag(args[1])


def _wmma_key(event: tuple[Any, ...]) -> tuple[Any, ...]:
    """What must agree between the lanes of one tensor-core call (arrays by identity)."""
    return (event[1], event[3], tuple(
        tuple(id(x) if isinstance(x, np.ndarray) else x for x in a) if isinstance(a, tuple) else a
        for a in event[2]))


def _shuffle_value(event: tuple[Any, ...], tid: int, values: dict[int, Any]) -> Any:
    _, kind, value, arg, width = event
    lane = tid % 32
    base = lane - lane % width
    src = lane + arg if kind == "down" else base + arg % width
    if src >= base + width or src >= 32:
        return value
    return values.get(tid - lane + src, value)


class _Tracker:
    """Who read and wrote each element of one shared buffer in the current phase."""

    def __init__(self, block: _Block, size: int) -> None:
        self.block = block
        self.size = size
        self.w_tid = [-1] * size
        self.w_ep = [-1] * size
        self.r_tid = [-1] * size
        self.r_ep = [-1] * size

    def read_lanes(self, i: np.ndarray, tid: int, buf: str, where: str) -> np.ndarray:
        for k in i.tolist():  # a vector access: each lane
            self.read(k, tid, buf, where)
        return i

    def write_lanes(self, i: np.ndarray, tid: int, buf: str, where: str) -> np.ndarray:
        for k in i.tolist():
            self.write(k, tid, buf, where)
        return i

    def read(self, i: int, tid: int, buf: str, where: str) -> int:
        if not 0 <= i < self.size:
            self._fail(f"out-of-bounds read {buf}[{i}] (size {self.size})", tid, where)
        ep = self.block.epoch
        if self.w_ep[i] == ep and self.w_tid[i] != tid:
            self._fail(f"data race on shared {buf}[{i}]: read after thread {self.w_tid[i]} wrote "
                       "it with no __syncthreads() between", tid, where)
        if self.r_ep[i] != ep:
            self.r_ep[i], self.r_tid[i] = ep, tid
        elif self.r_tid[i] != tid:
            self.r_tid[i] = -2  # read by several threads
        return i

    def write(self, i: int, tid: int, buf: str, where: str) -> int:
        if not 0 <= i < self.size:
            self._fail(f"out-of-bounds write {buf}[{i}] (size {self.size})", tid, where)
        ep = self.block.epoch
        if self.w_ep[i] == ep and self.w_tid[i] != tid:
            self._fail(f"data race on shared {buf}[{i}]: written by threads {self.w_tid[i]} "
                       f"and {tid} with no __syncthreads() between", tid, where)
        if self.r_ep[i] == ep and self.r_tid[i] != tid:
            who = "other threads" if self.r_tid[i] == -2 else f"thread {self.r_tid[i]}"
            self._fail(f"data race on shared {buf}[{i}]: written after {who} read it with no "
                       "__syncthreads() between", tid, where)
        self.w_ep[i], self.w_tid[i] = ep, tid
        return i

    def _fail(self, what: str, tid: int, where: str) -> None:
        raise EmulatorError(f"kernel {self.block.name}, {self.block.where}, thread {tid}: "
                            f"{what}\n  in: {where}")


def _oob_at(where: str, name: str, index: int) -> Any:
    raise EmulatorError(f"out-of-bounds access {name}[{index}] (flat index)\n  in: {where}")


def _first_line(node: Any) -> str:
    return script(node).strip().splitlines()[0]


class _KernelCompiler(_Compiler):
    """The interpreter's compiler, emitting one generator per thread of a kernel."""

    def __init__(self, func: PrimFunc) -> None:
        super().__init__(func)
        self.where = ""
        self.shared_trackers: dict[int, str] = {}
        self.ns.update(_oob_at=_oob_at)

    def compile_kernel(self) -> Any:
        loops, body = launch_nest(self.func.body)
        params = [p.data if isinstance(p, Buffer) else p for p in self.func.params]
        for buf in self.func.buffer_params():
            self.storages.add(id(buf.data))
        names = [self.name(v) for v in params]
        for loop in loops:
            tag = loop.thread_binding or ""
            axis = "xyz".index(tag[-1])
            source = "_bidx" if tag.startswith("blockIdx") else "_tidx"
            self.nonneg_vars.add(id(loop.loop_var))
            self.emit(f"{self.name(loop.loop_var)} = {source}[{axis}]")
        for buf in self.func.buffer_params():
            storage = self.name(buf.data)
            self.emit(f"n_{storage} = {storage}.shape[0]")
        self.emit("if False:")
        self.emit("    yield None")
        self.stmt(body)
        if any("def _outlined" in line for line in self.lines):  # its yields would be lost
            raise EmulatorError(f"emulate: kernel {self.func.attrs.get('global_symbol')} nests "
                                "loops too deeply for the emulator (more than 16)")
        header = f"def _thread({', '.join([*names, '_bidx', '_tidx', '_tid', '_blk'])}):"
        source = "\n".join(["# generated by unity.tir.gpu_emulator", header, *self.lines]) + "\n"
        exec(compile(source, f"<emulate {self.func.attrs.get('global_symbol')}>", "exec"), self.ns)  # noqa: S102
        fn = self.ns["_thread"]
        fn.source = source
        return fn

    def stmt(self, node: S.Stmt) -> None:
        if isinstance(node, (S.BufferStore, S.IfThenElse, S.Evaluate)):
            self.where = _first_line(node)
        super().stmt(node)

    def s_allocate_(self, node: S.Allocate) -> None:
        buf = node.buffer
        shared, fragment = buf.scope.startswith("shared"), buf.scope in FRAGMENT_SCOPES
        if not shared and not fragment:
            super().s_allocate_(node)
            return
        size = " * ".join(f"({self.expr(d)})" for d in buf.shape) or "1"
        t = self.hoist("t", buf.dtype, np.dtype(dt.numpy_name(buf.dtype)))
        storage = self.name(buf.data)
        self.storages.add(id(buf.data))
        if fragment:  # one per warp
            self.emit(f"{storage} = _blk.alloc_warp({id(node)}, _tid // 32, int({size}), {t})")
        else:
            self.shared_trackers[id(buf.data)] = f"tr_{storage}"
            self.emit(f"{storage}, tr_{storage} = _blk.alloc({id(node)}, int({size}), {t})")
        self.emit(f"n_{storage} = {storage}.shape[0]")
        self.stmt(node.body)

    def s_buffer_store_(self, node: S.BufferStore) -> None:
        tracker = self.shared_trackers.get(id(node.buffer.data))
        if tracker is None:
            super().s_buffer_store_(node)
            return
        value = self.expr(node.value)
        where = self.hoist("w", self.where, self.where)
        flat = self.flat_index(node.buffer, node.indices)
        storage = self.layout(node.buffer)[0]
        method = "write_lanes" if dt.lanes(node.value.dtype) > 1 else "write"
        self.emit(f"{storage}[{tracker}.{method}({flat}, _tid, {node.buffer.name!r}, {where})] = {value}")

    def load(self, node: E.BufferLoad) -> str:
        tracker = self.shared_trackers.get(id(node.buffer.data))
        if tracker is None:
            return super().load(node)
        where = self.hoist("w", self.where, self.where)
        flat = self.flat_index(node.buffer, node.indices)
        storage = self.layout(node.buffer)[0]
        method = "read_lanes" if dt.lanes(node.dtype) > 1 else "read"
        return f"{storage}[{tracker}.{method}({flat}, _tid, {node.buffer.name!r}, {where})]"

    def provably_in_range(self, buf: Buffer, indices: tuple[E.PrimExpr, ...]) -> bool:
        return False  # check both ends, so the error can name the statement

    def access(self, buf: Buffer, indices: tuple[E.PrimExpr, ...]) -> str:
        code = super().access(buf, indices)
        where = self.hoist("w", self.where, self.where)
        return code.replace("_oob(", f"_oob_at({where}, ")

    def e_call_(self, node: E.Call) -> str:
        if node.op is syncthreads_op:
            return "(yield ('sync',))"
        if node.op is shfl_down_op or node.op is shfl_idx_op:
            kind = "down" if node.op is shfl_down_op else "idx"
            value, arg, width = (self.expr(a) for a in node.args)
            return f"(yield ('shfl', {kind!r}, {value}, {arg}, {width}))"
        return super().e_call_(node)

    def s_evaluate_(self, node: S.Evaluate) -> None:
        if isinstance(node.value, E.Call) and node.value.op is syncthreads_op:
            self.emit("yield ('sync',)")
            return
        if is_wmma(node.value):
            self.emit(f"yield ('wmma', {self.wmma_args(node.value)})")
            return
        super().s_evaluate_(node)

    def wmma_args(self, call: E.Call) -> str:
        """The event of a tensor-core call (`LowerWmma` form): the op's name, then
        fragments as `(storage, index)` and memory tiles as `(storage, flat offset,
        tracker, name, stride)`, then the statement."""
        args, parts = call.args, []
        k = 0
        while k < len(args):
            arg = args[k]
            if isinstance(arg, E.BufferLoad):
                tracker = self.shared_trackers.get(id(arg.buffer.data), "None")
                storage = self.layout(arg.buffer)[0]
                flat = self.flat_index(arg.buffer, arg.indices)
                parts.append(f"({storage}, int({flat}), {tracker}, {arg.buffer.name!r}, "
                             f"int({self.expr(args[k + 1])}))")
                k += 2
            elif isinstance(arg, E.Var) and arg.dtype == "handle":
                parts.append(f"({self.name(arg)}, int({self.expr(args[k + 1])}))")
                k += 2
            else:
                parts.append(self.expr(arg))
                k += 1
        where = self.hoist("w", self.where, self.where)
        return f"{call.op.name.rsplit('_', 1)[1]!r}, ({', '.join(parts)},), {where}"
