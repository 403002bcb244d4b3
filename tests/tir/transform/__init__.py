"""Tests of the TIR lowering passes (a package, so test file names may repeat elsewhere)."""
