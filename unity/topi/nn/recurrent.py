"""The recurrence of ONNX's RNN, GRU and LSTM as one scheduled TIR kernel over a whole
sequence (symbolic length and batch).

A recurrence cannot be a tensor expression (each step reads the one before), so this
builds the kernel's TIR directly, already scheduled: the input projection ``x @ W^T + Wb``
of every step (one large matmul) is computed before, and the kernel runs the steps in
turn.  In each step the hidden units are split into blocks of `vector_width` lanes, run
in parallel: a block accumulates its units' columns of ``h @ R^T`` for every gate (one
vector accumulator per gate), then applies the gate arithmetic and writes the new
``h`` (and ``c``) of its units.  The previous ``h`` is read from one half of a two-step
buffer while the new one goes to the other, so no block overwrites what another still
reads.  GRU without ``linear_before_reset`` needs the whole ``r * h`` before its third
gate: its step is two parallel loops.

Gate order and formulas are ONNX's (``iofc`` for LSTM, ``zrh`` for GRU), activations
any of `ACTIVATIONS`, with `clip` applied to every activation's input but the cell's.

Example:
    >>> func = recurrent_kernel("LSTM", hidden=32, dtype="float32")
    >>> [b.name for b in func.buffer_params()]
    ['xw', 'rt', 'bias', 'h0', 'c0', 'peep', 'Y', 'Hn', 'C']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from unity import tir
from unity.tir.buffer import Buffer
from unity.tir.expr import PrimExpr, Var, const, max_value_of, min_value_of, select
from unity.tir.stmt import Allocate, BufferStore, For, ForKind, IfThenElse, LetStmt, Stmt, seq
from unity.topi.nn.activation import softplus_value

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
"""Gates per kind: the columns of ``W`` and ``R`` are `GATES[kind] * hidden`."""

DEFAULT_ACTIVATIONS = {"RNN": ("Tanh",), "GRU": ("Sigmoid", "Tanh"),
                       "LSTM": ("Sigmoid", "Tanh", "Tanh")}  # fmt: skip
"""ONNX's default activations per kind (f, g, h)."""

Activation = tuple[str, float | None, float | None]
"""An activation's ONNX name and its optional alpha and beta."""

ROWS = 4
"""Batch rows a block steps together (each weight vector loaded once for all of them: 16
accumulators for an LSTM's four gates)."""

_Fn = Callable[[PrimExpr, float | None, float | None], PrimExpr]


def _k(x: PrimExpr, value: float) -> PrimExpr:
    return const(value, x.dtype)


ACTIVATIONS: dict[str, _Fn] = {
    "Sigmoid": lambda x, a, b: tir.sigmoid(x),
    "Tanh": lambda x, a, b: tir.tanh(x),
    "Relu": lambda x, a, b: max_value_of(x, _k(x, 0.0)),
    "Softsign": lambda x, a, b: x / (_k(x, 1.0) + tir.abs(x)),
    "Softplus": lambda x, a, b: softplus_value(x),
    "Affine": lambda x, a, b: x * _k(x, 1.0 if a is None else a) + _k(x, 0.0 if b is None else b),
    "LeakyRelu": lambda x, a, b: select(x < _k(x, 0.0), x * _k(x, 0.01 if a is None else a), x),
    "ScaledTanh": lambda x, a, b: tir.tanh(x * _k(x, 1.0 if b is None else b))
    * _k(x, 1.0 if a is None else a),
    "HardSigmoid": lambda x, a, b: min_value_of(
        max_value_of(x * _k(x, 0.2 if a is None else a) + _k(x, 0.5 if b is None else b),
                     _k(x, 0.0)), _k(x, 1.0)),  # fmt: skip
}
"""ONNX's recurrent activations as TIR, by name (alpha and beta default as ONNX says)."""


def vector_width(hidden: int, most: int = 16) -> int:
    """The lanes of one block of hidden units: the largest power of two up to `most`
    that divides `hidden` (so the blocks tile the units exactly).

    Example:
        >>> vector_width(256), vector_width(20), vector_width(5)
        (16, 4, 1)
    """
    width = most
    while hidden % width:
        width //= 2
    return width


def recurrent_kernel(
    kind: str,
    hidden: int,
    dtype: str,
    activations: Sequence[Activation] | None = None,
    clip: float | None = None,
    input_forget: bool = False,
    linear_before_reset: bool = False,
    reverse: bool = False,
    width: int | None = None,
    gpu: bool = False,
    lengths: bool = False,
) -> tir.PrimFunc:
    """The scheduled kernel of one direction of an RNN / GRU / LSTM over a whole sequence.

    Parameters (``seq`` and ``batch`` symbolic, ``G = GATES[kind]``, ``H = hidden``):
    ``xw (seq, batch, G*H)`` the input projections with ``W``'s bias, ``rt (H/V, H, G, V)``
    the recurrent weights packed by blocks of `width` (``V``, by default `vector_width`)
    units (``rt[blk, k, g, v] = R[g*H + blk*V + v, k]``), ``bias (G*H,)`` ``R``'s bias,
    ``h0`` and ``c0 (batch, H)`` the initial states, ``peep (3*H,)`` the LSTM peepholes
    (``i, o, f``); outputs ``Y (seq, batch, H)`` every step's ``h`` (in input order when
    `reverse`), ``Hn (batch, H)`` the last ``h`` and ``C (batch, H)`` the last ``c`` (LSTM)
    or the last ``h``.  With `lengths`, a parameter ``lens (batch,)`` (int64) after ``peep``
    gives each row's length: a row runs its first ``lens[b]`` inputs (backwards from
    ``lens[b] - 1`` when `reverse`), its ``Y`` beyond them is zero and its last states are
    those of its last step, as ONNX's ``sequence_lens``.

    With `gpu`, each step is a kernel launch (the host loops over the steps): a thread
    block per block of units, a thread per unit.  The CPU kernel carries its arguments in
    the attribute ``unity.recurrent``, from which `DefaultGPUSchedules` builds this one.

    Example:
        >>> func = recurrent_kernel("GRU", hidden=8, dtype="float32")
        >>> func.attrs["tir.is_scheduled"]
        True
    """
    if kind not in GATES:
        raise ValueError(f"recurrent_kernel: unknown kind {kind!r} (RNN, GRU or LSTM)")
    names = tuple(activations or [(n, None, None) for n in DEFAULT_ACTIVATIONS[kind]])
    if len(names) != len(DEFAULT_ACTIVATIONS[kind]):
        raise ValueError(f"recurrent_kernel: {kind} takes {len(DEFAULT_ACTIVATIONS[kind])} "
                         f"activations, got {len(names)}")  # fmt: skip
    for name, _, _ in names:
        if name not in ACTIVATIONS:
            raise ValueError(f"recurrent_kernel: no activation {name!r} (supported: "
                             f"{', '.join(sorted(ACTIVATIONS))})")  # fmt: skip
    width = width or vector_width(hidden)
    if hidden % width:
        raise ValueError(f"recurrent_kernel: {width} lanes do not divide {hidden} hidden units")
    func = _Builder(kind, hidden, dtype, names, clip, input_forget, linear_before_reset,
                    reverse, width, gpu, lengths).func()  # fmt: skip
    spec = {"kind": kind, "hidden": hidden, "dtype": dtype, "activations": names, "clip": clip,
            "input_forget": input_forget, "linear_before_reset": linear_before_reset,
            "reverse": reverse, "width": width, "lengths": lengths}  # fmt: skip
    return func.with_attr("unity.recurrent", spec)


class _Builder:
    def __init__(self, kind: str, hidden: int, dtype: str, acts: tuple[Activation, ...],
                 clip: float | None, input_forget: bool, linear_before_reset: bool,
                 reverse: bool, width: int, gpu: bool, lengths: bool) -> None:  # fmt: skip
        self.kind, self.hidden, self.dtype = kind, hidden, dtype
        self.acts, self.clip = acts, clip
        self.input_forget, self.lbr, self.reverse = input_forget, linear_before_reset, reverse
        self.gates = GATES[kind]
        self.width, self.gpu = width, gpu
        self.lane: Var | None = None  # on the GPU: the thread's lane
        self.seq, self.batch = Var("seq", "int64"), Var("batch", "int64")
        gh = self.gates * hidden
        self.xw = tir.decl_buffer((self.seq, self.batch, gh), dtype, "xw")
        self.rt = tir.decl_buffer((hidden // self.width, hidden, self.gates, self.width), dtype,
                                  "rt")
        self.bias = tir.decl_buffer((gh,), dtype, "bias")
        self.h0 = tir.decl_buffer((self.batch, hidden), dtype, "h0")
        self.c0 = tir.decl_buffer((self.batch, hidden), dtype, "c0")
        self.peep = tir.decl_buffer((3 * hidden,), dtype, "peep")
        self.y = tir.decl_buffer((self.seq, self.batch, hidden), dtype, "Y")
        self.c = tir.decl_buffer((self.batch, hidden), dtype, "C")
        self.hn = tir.decl_buffer((self.batch, hidden), dtype, "Hn")
        self.lens = tir.decl_buffer((self.batch,), "int64", "lens") if lengths else None
        self.hbuf = tir.decl_buffer((2, self.batch, hidden), dtype, "h_state")
        self.zbuf = tir.decl_buffer((self.batch, hidden), dtype, "z_gate")
        self.rhbuf = tir.decl_buffer((self.batch, hidden), dtype, "r_times_h")

    # -- helpers ------------------------------------------------------------------------
    def act(self, index: int, x: PrimExpr, clipped: bool = True) -> PrimExpr:
        name, alpha, beta = self.acts[index]
        if clipped and self.clip is not None:
            x = min_value_of(max_value_of(x, _k(x, -self.clip)), _k(x, self.clip))
        return ACTIVATIONS[name](x, alpha, beta)

    @staticmethod
    def loop(extent: PrimExpr | int, kind: ForKind, body: Callable[[Var], Stmt],
             name: str) -> Stmt:  # fmt: skip
        var = Var(name, "int64")
        return For(var, const(0, "int64"), const(extent, "int64") if isinstance(extent, int)
                   else extent, kind, body(var))  # fmt: skip

    def matmul(self, state: Buffer, rows: Sequence[Sequence[PrimExpr]], acc: Buffer,
               gates: Sequence[int], u0: PrimExpr) -> Stmt:  # fmt: skip
        """``acc[r, g, lane] = sum_k state[rows[r]..., k] * R[gate_g * H + u0 + lane, k]``
        (``rt[u0 / V, k, gate_g, lane]``) for each row index `rows[r]` of `state`: a weight
        vector loaded once for them all."""
        width, zero = self.width, const(0.0, self.dtype)
        block = tir.floordiv(u0, const(width, "int64"))
        init = self.loop(len(gates) * len(rows), ForKind.UNROLLED, lambda g: self.lanes(
            lambda v: BufferStore(acc, zero, (g * width + v,))), "g")

        def update(k: Var) -> Stmt:
            hs = [state[(*row, k)] for row in rows]
            stores = []
            for g, gate in enumerate(gates):
                for r, h in enumerate(hs):
                    slot = r * len(gates) + g
                    stores.append(self.lanes(lambda v, slot=slot, gate=gate, h=h: BufferStore(
                        acc, acc[slot * width + v] + h * self.rt[block, k, gate, v],
                        (slot * width + v,))))  # fmt: skip
            return seq(*stores)

        return seq(init, self.loop(self.hidden, ForKind.SERIAL, update, "k"))

    def groups(self, body: Callable[[PrimExpr, list[PrimExpr]], Stmt]) -> Stmt:
        """``for block in parallel(H / width)``: `body` (the block's first unit, rows) over
        groups of `ROWS` batch rows, then the rows left one by one, so each weight vector a
        block loads serves several rows.  On the GPU the blocks are thread blocks, each
        thread one lane (`lanes`), and a group one row."""
        rows, batch, blocks = ROWS, self.batch, self.hidden // self.width
        if self.gpu:
            blk, self.lane = Var("block", "int64"), Var("lane", "int64")
            inner = self.loop(batch, ForKind.SERIAL, lambda b: body(blk * self.width, [b]), "b")
            lanes = For(self.lane, const(0, "int64"), const(self.width, "int64"),
                        ForKind.THREAD_BINDING, inner, thread_binding="threadIdx.x")  # fmt: skip
            self.lane = None
            return For(blk, const(0, "int64"), const(blocks, "int64"), ForKind.THREAD_BINDING,
                       lanes, thread_binding="blockIdx.x")  # fmt: skip
        whole = tir.floordiv(batch, const(rows, "int64"))

        def block(blk: Var) -> Stmt:
            u0 = blk * self.width
            grouped = self.loop(whole, ForKind.SERIAL, lambda g: body(
                u0, [g * rows + r for r in range(rows)]), "g")  # fmt: skip
            rest = self.loop(batch - whole * rows, ForKind.SERIAL, lambda i: body(
                u0, [whole * rows + i]), "b")  # fmt: skip
            return seq(grouped, rest)

        return self.loop(blocks, ForKind.PARALLEL, block, "block")

    def each_row(self, body: Callable[[PrimExpr, PrimExpr], Stmt]) -> Stmt:
        """`groups` of ``body(u, b)`` for each unit ``u`` (a lane) of each row ``b``."""
        return self.groups(lambda u0, rows: seq(*(self.lanes(lambda v, b=b: body(u0 + v, b))
                                                  for b in rows)))  # fmt: skip

    def lanes(self, body: Callable[[Var], Stmt]) -> Stmt:
        """`body` for each lane of a block: a vector loop, or the GPU thread's own lane."""
        if self.lane is not None:
            return body(self.lane)
        return self.loop(self.width, ForKind.VECTORIZED, body, "v")

    def local(self, slots: int, body: Callable[[Buffer], Stmt]) -> Stmt:
        acc = tir.decl_buffer((slots * self.width,), self.dtype, "acc", scope="local")
        return Allocate(acc, body(acc))

    # -- the kernel ---------------------------------------------------------------------
    def func(self) -> tir.PrimFunc:
        def start(u: PrimExpr, b: PrimExpr) -> Stmt:
            return seq(BufferStore(self.hbuf, self.h0[b, u], (const(0, "int64"), b, u)),
                       BufferStore(self.c, (self.c0 if self.kind == "LSTM" else self.h0)[b, u],
                                   (b, u)))  # fmt: skip

        init = self.each_row(start)
        body = self.loop(self.seq, ForKind.SERIAL, self.step, "s")
        last = tir.floormod(self.seq, const(2, "int64"))
        final = self.each_row(lambda u, b: BufferStore(self.hn, self.hbuf[last, b, u], (b, u)))
        scratch: list[Buffer] = [self.hbuf]
        if self.kind == "GRU" and not self.lbr:
            scratch += [self.zbuf, self.rhbuf]
        stmt = seq(init, body, final)
        for buf in reversed(scratch):
            stmt = Allocate(buf, stmt)
        params = (self.xw, self.rt, self.bias, self.h0, self.c0, self.peep,
                  *([self.lens] if self.lens is not None else []), self.y, self.hn, self.c)
        return tir.PrimFunc(params, stmt).with_attr("tir.is_scheduled", True).with_attr(
            "tir.noalias", True)

    def step(self, s: Var) -> Stmt:
        cur, nxt = tir.floormod(s, const(2, "int64")), tir.floormod(s + 1, const(2, "int64"))

        def carry(u0: PrimExpr, b: PrimExpr) -> Stmt:
            return self.carry(s, cur, nxt, u0, b)

        if self.kind == "GRU" and not self.lbr:  # r * h of every unit before the candidate
            return seq(
                self.rows_step(s, self.hbuf, lambda b: (cur, b), [0, 1], lambda t, u0, b, v, acc,
                               base: self.gru_gates(t, cur, u0, b, v, acc, base)),
                self.rows_step(s, self.rhbuf, lambda b: (b,), [2], lambda t, u0, b, v, acc,
                               base: self.gru_candidate(t, cur, nxt, u0, b, v, acc, base),
                               carry))  # fmt: skip
        return self.rows_step(s, self.hbuf, lambda b: (cur, b), list(range(self.gates)),
                              lambda t, u0, b, v, acc, base: self.update(
                                  t, cur, nxt, u0, b, v, acc, base), carry)  # fmt: skip

    def rows_step(self, s: Var, state: Buffer, index: Callable[[PrimExpr], tuple[PrimExpr, ...]],
                  gates: list[int], value: Callable[..., Stmt],
                  rest: Callable[[PrimExpr, PrimExpr], Stmt] | None = None) -> Stmt:  # fmt: skip
        """One parallel pass of step `s` over groups of rows (`groups`): the `gates`'
        columns of ``state[index(b)] @ R^T`` for the group, then ``value(t, u0, b, v, acc,
        base)`` for each lane of each row still running (its gates at ``acc[base...]``),
        `rest` for a row that has ended."""

        def group(u0: PrimExpr, rows: list[PrimExpr]) -> Stmt:
            def body(acc: Buffer) -> Stmt:
                parts = [self.matmul(state, [index(b) for b in rows], acc, gates, u0)]
                for r, b in enumerate(rows):
                    def run(t: PrimExpr, b: PrimExpr = b, base: int = r * len(gates)) -> Stmt:
                        return self.lanes(lambda v: value(t, u0, b, v, acc, base))

                    parts.append(self.active(s, b, run, rest(u0, b) if rest else None))
                return seq(*parts)

            return self.local(len(gates) * len(rows), body)

        return self.groups(group)

    def active(self, s: Var, b: PrimExpr, run: Callable[[PrimExpr], Stmt],
               rest: Stmt | None = None) -> Stmt:  # fmt: skip
        """`run(t)` for step `s` of row `b` (``t`` its input), or `rest` where the row has
        ended (`lengths`)."""
        if self.lens is None:
            return run(self.seq - 1 - s if self.reverse else s)
        length = self.lens[b]
        stmt = run(length - 1 - s if self.reverse else s)
        return IfThenElse(s < length, stmt, rest)

    def carry(self, s: Var, cur: PrimExpr, nxt: PrimExpr, u0: PrimExpr, b: PrimExpr) -> Stmt:
        """A row that has ended: its ``h`` carried to the next step, its output zero."""
        return self.lanes(lambda v: seq(
            BufferStore(self.hbuf, self.hbuf[cur, b, u0 + v], (nxt, b, u0 + v)),
            BufferStore(self.y, const(0.0, self.dtype), (s, b, u0 + v))))  # fmt: skip

    def pre(self, t: PrimExpr, b: PrimExpr, gate: int, u: PrimExpr, acc: Buffer | None,
            slot: int, v: PrimExpr) -> PrimExpr:  # fmt: skip
        """``xw + h @ R^T + Rb`` of one unit and gate (without the matmul when `acc` is None)."""
        col = gate * self.hidden + u
        x = self.xw[t, b, col]
        if acc is None:
            return x
        return x + (acc[slot * self.width + v] + self.bias[col])

    def write_h(self, t: PrimExpr, nxt: PrimExpr, b: PrimExpr, u: PrimExpr,
                h: PrimExpr | Callable[[PrimExpr], PrimExpr],
                c: PrimExpr | None = None) -> Stmt:  # fmt: skip
        """Store the new ``h`` and ``C`` (`c`, and then `h` is ``h(c)``; or ``h`` itself),
        each computed once."""

        def stores(hv: PrimExpr, cv: PrimExpr) -> Stmt:
            return seq(BufferStore(self.hbuf, hv, (nxt, b, u)), BufferStore(self.y, hv, (t, b, u)),
                       BufferStore(self.c, cv, (b, u)))  # fmt: skip

        if c is None:
            assert not callable(h)
            return self.let(h, "h", lambda hv: stores(hv, hv))
        assert callable(h)
        return self.let(c, "c", lambda cv: self.let(h(cv), "h", lambda hv: stores(hv, cv)))

    def let(self, value: PrimExpr, name: str, body: Callable[[Var], Stmt]) -> Stmt:
        """`body` of a variable bound to `value` (computed once, not at each use: a store
        in between would keep LLVM from sharing the loads it reads)."""
        var = Var(name, self.dtype)
        return LetStmt(var, value, body(var))

    def update(self, t: PrimExpr, cur: PrimExpr, nxt: PrimExpr, u0: PrimExpr, b: PrimExpr,
               v: Var, acc: Buffer, base: int = 0) -> Stmt:  # fmt: skip
        """The new state of unit ``u0 + v`` of row `b`, its gates in ``acc[base...]``."""
        u = u0 + v
        one, hidden = const(1.0, self.dtype), self.hidden
        if self.kind == "RNN":
            return self.write_h(t, nxt, b, u, self.act(0, self.pre(t, b, 0, u, acc, base, v)))
        if self.kind == "GRU":  # linear_before_reset: r * (h @ Rh^T + Rbh) inside the step
            r = self.act(0, self.pre(t, b, 1, u, acc, base + 1, v))
            rec = acc[(base + 2) * self.width + v] + self.bias[2 * hidden + u]
            cand = self.act(1, self.xw[t, b, 2 * hidden + u] + r * rec)
            return self.let(self.act(0, self.pre(t, b, 0, u, acc, base, v)), "z", lambda z:
                            self.write_h(t, nxt, b, u, (one - z) * cand + z * self.hbuf[
                                cur, b, u]))  # fmt: skip
        c_prev = self.c[b, u]
        i = self.pre(t, b, 0, u, acc, base, v) + self.peep[u] * c_prev
        f = self.pre(t, b, 2, u, acc, base + 2, v) + self.peep[2 * hidden + u] * c_prev
        i, f = self.act(0, i), self.act(0, f)
        if self.input_forget:
            f = one - i
        c_new = f * c_prev + i * self.act(1, self.pre(t, b, 3, u, acc, base + 3, v))

        def h(c: PrimExpr) -> PrimExpr:
            o = self.pre(t, b, 1, u, acc, base + 1, v) + self.peep[hidden + u] * c
            return self.act(0, o) * self.act(2, c, clipped=False)

        return self.write_h(t, nxt, b, u, h, c_new)

    def gru_gates(self, t: PrimExpr, cur: PrimExpr, u0: PrimExpr, b: PrimExpr, v: Var,
                  acc: Buffer, base: int) -> Stmt:  # fmt: skip
        """GRU's first half: ``z`` and ``r * h`` of unit ``u0 + v`` of row `b`."""
        u = u0 + v
        z = self.act(0, self.pre(t, b, 0, u, acc, base, v))
        r = self.act(0, self.pre(t, b, 1, u, acc, base + 1, v))
        return seq(BufferStore(self.zbuf, z, (b, u)),
                   BufferStore(self.rhbuf, r * self.hbuf[cur, b, u], (b, u)))

    def gru_candidate(self, t: PrimExpr, cur: PrimExpr, nxt: PrimExpr, u0: PrimExpr,
                      b: PrimExpr, v: Var, acc: Buffer, base: int) -> Stmt:  # fmt: skip
        """GRU's second half: from ``(r * h) @ Rh^T``, the candidate and the new ``h``."""
        u = u0 + v
        cand = self.act(1, self.pre(t, b, 2, u, acc, base, v))
        z = self.zbuf[b, u]
        return self.write_h(t, nxt, b, u, (const(1.0, self.dtype) - z) * cand
                            + z * self.hbuf[cur, b, u])  # fmt: skip
