"""The tensor-core intrinsics `tensorize` maps 16 x 16 (x 16) loop nests onto.

Registered on import (`TensorIntrin.get(name)`), for `float16` operands and a
`float16` or `float32` accumulator (`acc`):

- ``wmma_load_{a,b}_16x16_f16``: ``F[i, j] = A[i, j]``, a tile of memory into an
  operand fragment (scope `wmma.matrix_a` or `wmma.matrix_b`);
- ``wmma_fill_16x16_{acc}``: ``C[i, j] = 0``, an accumulator cleared;
- ``wmma_mma_16x16x16_{acc}``: ``C[i, j] += A[i, k] * B[k, j]`` (with `float32` casts
  of the operands for ``f32``); ``..._ba`` the same written ``B[k, j] * A[i, k]``;
- ``wmma_store_16x16_{acc}``: ``C[i, j] = F[i, j]``, an accumulator into memory.

Each `impl` is one warp-collective call of `unity.tir.transform.gpu.wmma`.

Example:
    >>> TensorIntrin.get(mma_intrin("float32")).name
    'wmma_mma_16x16x16_f32'
    >>> sch.tensorize(ii, mma_intrin("float16"))  # doctest: +SKIP
"""

from __future__ import annotations

from unity import te
from unity.schedule.tensor_intrin import TensorIntrin
from unity.schedule.tree import replace_stmts
from unity.tir import stmt as S
from unity.tir.buffer import Buffer, decl_buffer
from unity.tir.expr import const
from unity.tir.function import PrimFunc
from unity.tir.functor import post_order_visit
from unity.tir.transform.gpu import wmma

ACCUMULATORS = ("float16", "float32")
"""Accumulator dtypes of the registered intrinsics (the operands are float16)."""

_SHORT = {"float16": "f16", "float32": "f32"}


def load_intrin(operand: str = "a") -> str:
    """The name of the intrinsic loading operand `operand` ("a" or "b") into its fragment.

    Example:
        >>> load_intrin(), load_intrin("b")
        ('wmma_load_a_16x16_f16', 'wmma_load_b_16x16_f16')
    """
    return f"wmma_load_{operand}_16x16_f16"


def fill_intrin(acc: str) -> str:
    """The name of the accumulator-fill intrinsic for accumulator dtype `acc`.

    Example:
        >>> fill_intrin("float32")
        'wmma_fill_16x16_f32'
    """
    return f"wmma_fill_16x16_{_SHORT[acc]}"


def mma_intrin(acc: str, swapped: bool = False) -> str:
    """The name of the multiply-accumulate intrinsic for accumulator dtype `acc` (its
    desc multiplying ``B * A`` when `swapped`).

    Example:
        >>> mma_intrin("float16"), mma_intrin("float32", swapped=True)
        ('wmma_mma_16x16x16_f16', 'wmma_mma_16x16x16_f32_ba')
    """
    return f"wmma_mma_16x16x16_{_SHORT[acc]}" + ("_ba" if swapped else "")


def store_intrin(acc: str) -> str:
    """The name of the accumulator-store intrinsic for accumulator dtype `acc`.

    Example:
        >>> store_intrin("float16")
        'wmma_store_16x16_f16'
    """
    return f"wmma_store_16x16_{_SHORT[acc]}"


def _without_init(func: PrimFunc) -> PrimFunc:
    """`func` with its reduction block's init dropped (the update of a decomposed block)."""
    found: list[S.Block] = []
    post_order_visit(func.body, lambda n: found.append(n)
                     if isinstance(n, S.Block) and n.init is not None else None)
    if not found:
        return func
    return func.replace(body=replace_stmts(func.body, {found[0]: found[0].replace(init=None)}))


def _impl(buffers: list[Buffer], call: S.Evaluate) -> PrimFunc:
    return PrimFunc(tuple(buffers), call)


def _twin(buf: Buffer, scope: str) -> Buffer:
    """A parameter buffer like `buf` (the desc's) for the impl, in `scope`."""
    return decl_buffer(buf.shape, buf.dtype, buf.name.lower(), scope=scope)


def _mma_desc(acc: str, swapped: bool) -> PrimFunc:
    """``C[i, j] += A[i, k] * B[k, j]`` (``B[k, j] * A[i, k]`` when `swapped`), the
    operands cast to a float32 `acc`; parameters (A, B, C)."""
    n = wmma.TILE
    a = te.placeholder((n, n), "float16", name="A")
    b = te.placeholder((n, n), "float16", name="B")
    k = te.reduce_axis((0, n), name="k")

    def term(i, j):
        x, y = a[i, k], b[k, j]
        if acc != "float16":
            x, y = x.astype(acc), y.astype(acc)
        return y * x if swapped else x * y

    c = te.compute((n, n), lambda i, j: te.sum(term(i, j), axis=k), name="C")
    return _without_init(te.create_prim_func([a, b, c]))


def _register() -> None:
    n = wmma.TILE
    a = te.placeholder((n, n), "float16", name="A")
    f = te.compute((n, n), lambda i, j: a[i, j], name="F")
    desc = te.create_prim_func([a, f])
    src, frag = desc.buffer_params()
    for operand in ("a", "b"):
        i_src, i_frag = _twin(src, "shared"), _twin(frag, f"wmma.matrix_{operand}")
        call = wmma.load(i_frag[0, 0], i_src[0, 0])
        TensorIntrin.register(load_intrin(operand), desc, _impl([i_src, i_frag], call), override=True)
    for acc in ACCUMULATORS:
        c = te.compute((n, n), lambda i, j: const(0, acc), name="C")
        desc = te.create_prim_func([c])
        (out,) = desc.buffer_params()
        i_out = _twin(out, "wmma.accumulator")
        TensorIntrin.register(fill_intrin(acc), desc, _impl([i_out], wmma.fill(i_out[0, 0], 0.0)),
                              override=True)

        for swapped in (False, True):
            desc = _mma_desc(acc, swapped)
            da, db, dc = desc.buffer_params()
            ia, ib = _twin(da, "wmma.matrix_a"), _twin(db, "wmma.matrix_b")
            ic = _twin(dc, "wmma.accumulator")
            call = wmma.mma(ic[0, 0], ia[0, 0], ib[0, 0], ic[0, 0])
            TensorIntrin.register(mma_intrin(acc, swapped), desc, _impl([ia, ib, ic], call), override=True)

        f = te.placeholder((n, n), acc, name="F")
        out = te.compute((n, n), lambda i, j: f[i, j], name="C")
        desc = te.create_prim_func([f, out])
        dfrag, dout = desc.buffer_params()
        i_frag, i_out = _twin(dfrag, "wmma.accumulator"), _twin(dout, "global")
        TensorIntrin.register(store_intrin(acc), desc,
                              _impl([i_frag, i_out], wmma.store(i_out[0, 0], i_frag[0, 0])), override=True)


_register()
