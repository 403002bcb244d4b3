"""Ill-formed TIR handed to `unity.build` / `tir.interpret`: errors naming the variable/buffer."""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import tir
from unity.ir.diagnostics import DiagnosticError
from unity.tir.interpreter import InterpretError

BUF = tir.decl_buffer((8,), "float32", "Q")
X = tir.Var("x", "int32")


def test_free_variable():
    func = tir.PrimFunc((BUF,), tir.BufferStore(BUF, tir.Cast("float32", X), (tir.const(0),)))
    with pytest.raises(DiagnosticError, match="codegen llvm, in @main: variable x is used but not"):
        unity.build(func)
    with pytest.raises(InterpretError, match=r"interpret: variable x\w* is used but not defined"):
        tir.interpret(func, np.zeros(8, "float32"))


def test_wrong_index_count():
    store = tir.BufferStore(BUF, tir.const(1.0, "float32"), (tir.const(0), tir.const(0)))
    with pytest.raises(DiagnosticError, match="buffer Q has rank 1, indexed with 2 indices"):
        unity.build(tir.PrimFunc((BUF,), store))


def test_interpret_argument_count():
    func = tir.PrimFunc((BUF,), tir.BufferStore(BUF, tir.const(1.0, "float32"), (tir.const(0),)))
    with pytest.raises(InterpretError, match="the function takes 1 arguments, got 0"):
        tir.interpret(func)


def test_store_of_a_mismatched_dtype_is_refused_not_bit_cast():
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i")
    store = tir.BufferStore(A, i, (i,))  # an int32 value into a float32 buffer
    func = tir.PrimFunc((A,), tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, store))
    with pytest.raises(DiagnosticError, match="stores a int32 value into float32 buffer A"):
        unity.build(func, "llvm")
