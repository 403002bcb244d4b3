"""Print -> parse round trips of TIR: every expression and statement kind, modules, shapes."""

from __future__ import annotations

from unity import tir
from unity.ir import IRModule
from unity.ir.structural import assert_structural_equal, structural_equal
from unity.script import from_source
from unity.script import ir as I
from unity.script import tir as T
from unity.tir import ForKind, IterType


def roundtrip(obj):
    """Print `obj`, parse it back, check structural equality and a stable text; return the copy."""
    text = obj.script()
    parsed = from_source(text)
    assert_structural_equal(parsed, obj)
    assert parsed.script() == text
    return parsed


@T.prim_func
def matmul(
    A: T.Buffer((128, 128), "float32"),
    B: T.Buffer((128, 128), "float32"),
    C: T.Buffer((128, 128), "float32"),
):
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_matmul_parses_to_a_reduction_block():
    loop_i = matmul.body
    assert (
        isinstance(loop_i, tir.For) and loop_i.kind is ForKind.SERIAL and loop_i.extent.value == 128
    )
    realize = loop_i.body.body.body
    block = realize.block
    assert [iv.iter_type for iv in block.iter_vars] == [
        IterType.SPATIAL,
        IterType.SPATIAL,
        IterType.REDUCE,
    ]
    assert realize.iter_values == (loop_i.loop_var, loop_i.body.loop_var, loop_i.body.body.loop_var)
    assert [r.buffer.name for r in block.reads] == ["A", "B"] and block.writes[0].buffer.name == "C"
    assert isinstance(block.init, tir.BufferStore) and block.init.value.dtype == "float32"
    with open(__file__) as source:
        line = source.read().splitlines().index("    for i, j, k in T.grid(128, 128, 128):") + 1
    assert loop_i.span.source_name == __file__ and (loop_i.span.line, loop_i.span.column) == (
        line,
        4,
    )
    roundtrip(matmul)


def test_matmul_prints_tvm_style_script():
    assert matmul.script() == "\n".join(  # noqa: FLY002 - one line per item
        [
            "@T.prim_func",
            (
                'def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), '
                'C: T.Buffer((128, 128), "float32")):'
            ),
            "    for i, j, k in T.grid(128, 128, 128):",
            '        with T.block("C"):',
            '            vi, vj, vk = T.axis.remap("SSR", [i, j, k])',
            "            T.reads(A[vi, vk], B[vk, vj])",
            "            T.writes(C[vi, vj])",
            "            with T.init():",
            "                C[vi, vj] = T.float32(0.0)",
            "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]",
        ]
    )


def test_add_one_roundtrips_and_infers_regions():
    @T.prim_func
    def add_one(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        for i in T.serial(128):
            with T.block("B"):
                vi = T.axis.spatial(128, i)
                B[vi] = A[vi] + T.float32(1)

    block = add_one.body.body.block
    assert (
        block.reads[0].buffer is add_one.params[0]
        and block.reads[0].region[0].min is block.iter_vars[0].var
    )
    assert block.writes[0].buffer is add_one.params[1]
    roundtrip(add_one)


def test_closure_constants_are_read():
    n, dtype = 16, "float16"

    @T.prim_func
    def fill(A: T.Buffer((n,), dtype)):
        for i in T.serial(n // 2):
            A[i * 2] = T.float16(0)

    assert fill.params[0].shape[0].value == 16 and fill.params[0].dtype == "float16"
    assert fill.body.extent.value == 8
    roundtrip(fill)


def _expression_func() -> tir.PrimFunc:
    i, j = tir.Var("i", "int32"), tir.Var("j", "int64")
    x, y = tir.Var("x", "float32"), tir.Var("y", "float32")
    A = tir.decl_buffer((16,), "float32", "A")
    v = tir.Var("v", "int32")
    exprs = [
        x + y,
        x - y,
        x * y,
        x / y,
        tir.truncdiv(i, 3),
        tir.truncmod(i, 3),
        i // 4,
        i % 4,
        tir.min(x, y),
        tir.max(i, 7),
        tir.eq(i, 1),
        tir.ne(i, 2),
        i < 3,
        i <= 3,
        x > y,
        x >= y,
        tir.logical_and(i < 3, j > 2),
        tir.logical_or(i < 3, tir.Not(i > 9)),
        tir.Not(x < y),
        tir.select(i < 3, x, y),
        tir.cast("float64", x),
        tir.Cast("int32", i),
        tir.Ramp(i, tir.const(2), 4),
        tir.Broadcast(x, 8),
        tir.Let(v, i + 1, v * v),
        tir.exp(x),
        tir.sqrt(x),
        tir.power(x, y),
        tir.isnan(x),
        tir.erf(x),
        A[i],
        A[tir.Ramp(i, tir.const(1), 4)],
        tir.const(3, "int64") + j,
        tir.const(2.5, "float64"),
        tir.const(True),
        tir.const(-5),
        tir.const(float("inf")),
        tir.const(7, "uint8"),
        x * tir.const(-1.0),
        (i + 1) * (i - 2),
        i - (i - 1),
        i - (i + 1) * 2,
        tir.IntImm("int32", 2) + tir.IntImm("int32", 3),
        0 - i,
        tir.lt(tir.lt(i, 1), tir.const(True)),
        tir.Call("float32", tir.op.exp_op, (tir.const(1.0, "float32"),)),
        x * (y / x),
        (x / y) / x,
        tir.lt(tir.Not(i < 1), tir.const(True)),
        tir.logical_and(tir.Not(i < 1), i < 2),
        tir.Call("float16", tir.op.exp_op, (x,)),
    ]
    body = tir.seq(*(tir.Evaluate(e) for e in exprs))
    return tir.PrimFunc((A, i, j, x, y), body)


def test_every_expression_kind_roundtrips():
    f = _expression_func()
    parsed = roundtrip(f)
    text = f.script()
    for piece in (
        "T.truncdiv(i, 3)",
        "T.truncmod(i, 3)",
        "i // 4",
        "i % 4",
        "T.if_then_else(i < 3, x, y)",
        'T.Cast("float64", x)',
        "T.Ramp(i, 2, 4)",
        "T.Broadcast(x, 8)",
        "T.Let(v, i + 1, v * v)",
        "i < 3 and j > T.int64(2)",
        "not i > 9",
        'T.float32("inf")',
        "T.uint8(7)",
        "(i + 1) * (i - 2)",
        "i - (i - 1)",
        "T.int32(2) + 3",
        'T.call_intrin("float16", "tir.exp", x)',
        "A[T.Ramp(i, 1, 4)]",
        "(i < 1) < True",
        "x * (y / x)",
        "x / y / x",
        "(not i < 1) < True",
        "not i < 1 and i < 2",
    ):
        assert piece in text, piece
    assert len(parsed.body.seq) == len(f.body.seq)


def _statement_func() -> tir.PrimFunc:
    A = tir.decl_buffer((8, 8), "float32", "A")
    n = tir.Var("n", "int32")
    A_flat = tir.decl_buffer((64,), "float32", "A_flat", data=A.data)
    i, j, t, w, k = (tir.Var(s) for s in ("i", "j", "tx", "w", "k"))
    local = tir.decl_buffer((4,), "float32", "local", scope="local")
    local_flat = tir.decl_buffer((2, 2), "float32", "local_2d", data=local.data, scope="local")
    x, x2 = tir.Var("x", "int32"), tir.Var("x", "int32")
    lanes = tir.BufferStore(
        A_flat, tir.Broadcast(tir.const(1.0), 4), (tir.Ramp(i * 8, tir.const(1), 4),)
    )
    alloc = tir.Allocate(
        local,
        tir.seq(
            tir.BufferStore(local, A_flat[i], (tir.const(0),)),
            tir.BufferStore(local_flat, local[0] + 1.0, (tir.const(1), tir.const(1))),
        ),
    )
    let_mid = tir.LetStmt(x, i + 1, tir.BufferStore(A_flat, tir.cast("float32", x), (x,)))
    assert_mid = tir.AssertStmt(tir.lt(i, 64), "i in range", tir.Evaluate(tir.const(0)))
    loop_body = tir.seq(
        lanes,
        alloc,
        let_mid,
        assert_mid,
        tir.IfThenElse(i < 2, tir.Evaluate(i)),
        tir.IfThenElse(i < 3, tir.Evaluate(i), tir.Evaluate(i + 1)),
    )
    loops = tir.seq(
        tir.For(i, tir.const(0), tir.const(8), ForKind.PARALLEL, loop_body),
        tir.For(
            t, tir.const(0), tir.const(32), ForKind.THREAD_BINDING, tir.Evaluate(t), "threadIdx.x"
        ),
        tir.For(
            w,
            tir.const(2),
            tir.const(6),
            ForKind.UNROLLED,
            tir.Evaluate(w),
            annotations={"pragma": 1},
        ),
        tir.For(j, n, n + 4, ForKind.VECTORIZED, tir.Evaluate(j)),
        tir.While(tir.lt(n, 3), tir.Evaluate(n)),
        tir.For(k, tir.const(0), n, ForKind.SERIAL, tir.Evaluate(k)),
        tir.AssertStmt(tir.gt(n, 0), 'n "positive"', tir.LetStmt(x2, n * 2, tir.Evaluate(x2))),
    )
    return tir.PrimFunc(
        (A, n), loops, attrs={"global_symbol": "stmts", "tir.noalias": True, "tag": (1, "a")}
    )


def test_every_statement_kind_roundtrips():
    f = _statement_func()
    roundtrip(f)
    text = f.script()
    for piece in (
        'A_flat = T.Buffer((64,), "float32", data=A.data)',
        "for i in T.parallel(8):",
        'with T.allocate_buffer((4,), "float32", scope="local") as local:',
        'local_2d = T.Buffer((2, 2), "float32", data=local.data, scope="local")',
        "with T.LetStmt(i + 1) as x:",
        'with T.Assert(i < 64, "i in range"):',
        'for tx in T.thread_binding(32, thread="threadIdx.x"):',
        'for w in T.unroll(2, 8, annotations={"pragma": 1}):',
        "for j in T.vectorized(n, n + (n + 4)):",
        "while n < 3:",
        'assert n > 0, "n \\"positive\\""',
        "x_1: T.int32 = n * 2",
        "A_flat[T.Ramp(i * 8, 1, 4)] = T.Broadcast(T.float32(1.0), 4)",
        "def stmts(",
    ):
        assert piece in text, piece


def test_block_features_roundtrip():
    @T.prim_func
    def blocks(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
        C = T.alloc_buffer((16,), "float32", scope="shared")
        for io, ii in T.grid(4, 5):
            with T.block("S"):
                vi = T.axis.spatial(16, io * 4 + ii)
                vo = T.axis.opaque((2, 6), io + 2)
                T.where(io * 4 + ii < 16)
                T.reads(A[vi, 0:16])
                T.writes(C[vi])
                T.block_attr({"meta_schedule.unroll": 16})
                S = T.match_buffer(A[vi, 0:16], (16,), "float32")
                D = T.alloc_buffer((4,), "float32")
                D[0] = S[vo]
                C[vi] = D[0]
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.S(16, i)
                B[vi] = C[vi]

    root = blocks.body.block
    assert root.name_hint == "root" and root.alloc_buffers[0].scope == "shared"
    inner = root.body.seq[0].body.body
    assert (
        inner.block.iter_vars[1].dom.min.value == 2
        and inner.block.iter_vars[1].dom.extent.value == 4
    )
    assert inner.block.match_buffers[0].source.region[1].extent.value == 16
    parsed = roundtrip(blocks)
    assert (
        "T.where(io * 4 + ii < 16)" in blocks.script()
        and "vo = T.axis.opaque((2, 6), io + 2)" in blocks.script()
    )
    assert parsed.body.block.name_hint == "root"


def test_explicit_root_block_without_buffers_roundtrips():
    @T.prim_func
    def explicit(A: T.Buffer((4,), "float32")):
        with T.block("root"):
            T.reads()
            T.writes()
            A[0] = T.float32(1)

    assert explicit.body.block.reads == () and explicit.body.block.name_hint == "root"
    roundtrip(explicit)


def test_symbolic_shape_params():
    @T.prim_func
    def sym(
        A: T.Buffer(("n", 128), "float32"),
        B: T.Buffer(("n", "m"), "float32"),
        C: T.Buffer((T.int64("k"),), "int8"),
        m: T.int32,
    ):
        for i, j in T.grid(n, m):  # noqa: F821 - n is a shape variable of the script
            B[i, j] = A[i, j]
        for q in T.serial(k):  # noqa: F821
            C[q] = T.int8(0)

    A, B, C, m = sym.params
    assert A.shape[0] is B.shape[0] and type(A.shape[0]) is tir.Var and A.shape[0].dtype == "int32"
    assert (
        B.shape[1] is m
        and C.shape[0].dtype == "int64"
        and sym.body.seq[1].loop_var.dtype == "int64"
    )
    assert [v.name for v in sym.shape_vars()] == ["n", "m", "k"]
    assert sym.script().startswith(
        '@T.prim_func\ndef main(A: T.Buffer(("n", 128), "float32"), B: T.Buffer(("n", "m"), "float32"), '
        'C: T.Buffer((T.int64("k"),), "int8"), m: T.int32):'
    )
    roundtrip(sym)


def test_size_var_and_int64_buffers_roundtrip():
    n = tir.SizeVar("n", "int64")
    A = tir.decl_buffer(
        (n, tir.const(4, "int64")),
        "float32",
        "A",
        strides=(tir.const(4, "int64"), tir.const(1, "int64")),
    )
    i = tir.Var("i", "int64")
    f = tir.PrimFunc(
        (A,),
        tir.For(
            i,
            tir.const(0, "int64"),
            n,
            ForKind.SERIAL,
            tir.BufferStore(A, tir.const(0.0), (i, tir.const(0, "int64"))),
        ),
    )
    assert 'T.SizeVar("n", "int64")' in f.script()
    roundtrip(f)


def test_names_are_made_unique():
    i1, i2 = tir.Var("i"), tir.Var("i")
    s = tir.seq(
        tir.For(i1, tir.const(0), tir.const(2), ForKind.SERIAL, tir.Evaluate(i1)),
        tir.For(i2, tir.const(0), tir.const(3), ForKind.SERIAL, tir.Evaluate(i2)),
    )
    assert (
        repr(s)
        == "for i in T.serial(2):\n    T.evaluate(i)\nfor i_1 in T.serial(3):\n    T.evaluate(i_1)"
    )
    roundtrip(tir.PrimFunc((), s))


def test_module_with_two_functions():
    @I.ir_module
    class Module:
        @T.prim_func
        def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                B[i] = A[i] + T.float32(1)

        @T.prim_func(private=True)
        def scale(A: T.Buffer((4,), "float32"), s: T.float32):
            for i in T.vectorized(4):
                A[i] = A[i] * s

    assert isinstance(Module, IRModule) and [gv.name_hint for gv in Module.get_global_vars()] == [
        "add",
        "scale",
    ]
    text = Module.script()
    assert text.startswith("@I.ir_module\nclass Module:\n    @T.prim_func\n    def add(")
    assert (
        '\n\n    @T.prim_func\n    def scale(A: T.Buffer((4,), "float32"), s: T.float32):' in text
    )
    parsed = roundtrip(Module)
    assert not structural_equal(parsed["add"], parsed["scale"])


def test_repr_of_nodes_is_script():
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i")
    assert repr(A[i] * 2.0) == "A[i] * T.float32(2.0)"
    assert repr(A) == 'A = T.Buffer((4,), "float32")'
    assert repr(tir.BufferRegion(A, (tir.Range(i, tir.const(2)),))) == "A[i:i + 2]"
    assert repr(tir.BufferStore(A, tir.const(0.0), (i,))) == "A[i] = T.float32(0.0)"


def test_free_variables_are_declared_so_ill_formed_ir_parses_back():
    n = tir.Var("n")
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i")
    f = tir.PrimFunc(
        (A,), tir.For(i, tir.const(0), n, ForKind.SERIAL, tir.BufferStore(A, tir.const(0.0), (i,)))
    )
    assert f.script().splitlines()[2] == "    n = T.int32()"
    roundtrip(f)


def _twice(x):
    return x * 2


def test_script_conveniences():
    @T.prim_func
    def conv(a: T.handle, B: T.Buffer((4, 4), "float32")):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        for i in range(4):
            A[i] += 1
            if True:  # decided while parsing
                A[_twice(i)] = 0
        for i, j in T.grid(4, 4):
            with T.block("m"):
                vi, vj = T.axis.remap("SS", [i, j])
                S = T.match_buffer(B[vi, 0:4], (4,), "float32")
                S[vj] = T.float32(1)

    A = conv.params[0]
    assert isinstance(A, tir.Buffer) and A.name == "A" and conv.shape_vars()[0].name == "n"
    first = conv.body.seq[0]
    assert first.kind is ForKind.SERIAL and len(first.body.seq) == 2
    assert first.body.seq[0].value.b.value == 1.0 and first.body.seq[1].indices[0].b.value == 2
    block = conv.body.seq[1].body.body.block
    assert block.writes[0] is block.match_buffers[0].source and block.reads == ()
    roundtrip(conv)


def test_module_attrs_and_string_call_args_roundtrip():
    from unity.ir.op import Op

    A = tir.decl_buffer((4,), "float32", "A")
    call = tir.Call("float32", Op.get("tir.exp"), (tir.StringImm("note"),))
    mod = IRModule({"main": tir.PrimFunc((A,), tir.Evaluate(call))}, attrs={"target": ("llvm", 1)})
    text = mod.script()
    assert text.splitlines()[2] == '    I.module_attrs({"target": ("llvm", 1)})'
    assert 'T.evaluate(T.call_intrin("float32", "tir.exp", "note"))' in text
    parsed = roundtrip(mod)
    assert parsed.attrs == {"target": ("llvm", 1)}
