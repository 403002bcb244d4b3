"""`detect_iter_map`: split/fuse bindings decompose into iterator splits."""

from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.tir.arith import detect_iter_map

R = tir.Range.from_min_extent
i0, i1, i2, f, g = (tir.Var(name) for name in ("i0", "i1", "i2", "f", "g"))


def splits(res, n):
    return [(s.source.name, s.lower_factor, s.extent, s.scale) for s in res.indices[n].splits]


def test_split_binding_is_one_fused_iterator():
    res = detect_iter_map([i0 * 32 + i1], {i0: R(0, 4), i1: R(0, 32)}, check_level="bijective")
    assert res.is_affine
    assert splits(res, 0) == [("i0", 1, 4, 32), ("i1", 1, 32, 1)]
    assert res.indices[0].extent == 128 and res.indices[0].is_fused()


def test_three_level_split():
    doms = {i0: R(0, 2), i1: R(0, 4), i2: R(0, 8)}
    res = detect_iter_map([(i0 * 4 + i1) * 8 + i2], doms, check_level="bijective")
    assert res.is_affine and res.indices[0].extent == 64


def test_fused_loop_recovers_both_axes():
    res = detect_iter_map([f // 16, f % 16], {f: R(0, 64)}, check_level="bijective")
    assert res.is_affine
    assert splits(res, 0) == [("f", 16, 4, 1)]
    assert splits(res, 1) == [("f", 1, 16, 1)]


def test_fuse_then_split_digits():
    # fused = fo*8 + fi, recovered axes (extents 4 and 16): fused // 16 and fused % 16
    fo, fi = tir.Var("fo"), tir.Var("fi")
    fused = fo * 8 + fi
    res = detect_iter_map(
        [fused // 16, fused % 16], {fo: R(0, 8), fi: R(0, 8)}, check_level="bijective"
    )
    assert res.is_affine, res.errors
    assert splits(res, 0) == [("fo", 2, 4, 1)]
    assert splits(res, 1) == [("fo", 1, 2, 8), ("fi", 1, 8, 1)]


def test_middle_digit():
    res = detect_iter_map([f // 4 % 4], {f: R(0, 64)})
    assert res.is_affine and splits(res, 0) == [("f", 4, 4, 1)]
    res = detect_iter_map([f % 16 // 4], {f: R(0, 64)})
    assert res.is_affine and splits(res, 0) == [("f", 4, 4, 1)]


def test_base_offset_is_kept():
    n = tir.Var("n")
    res = detect_iter_map([i0 * 8 + i1 + n + 3], {i0: R(0, 4), i1: R(0, 8)})
    assert res.is_affine
    assert_structural_equal(res.indices[0].base, n + 3, map_free_vars=False)


def test_overlapping_use_is_reported():
    res = detect_iter_map([i0, i0 + i1], {i0: R(0, 4), i1: R(0, 4)})
    assert not res.is_affine
    assert any("used twice" in e for e in res.errors)


def test_non_fused_scales_are_reported():
    res = detect_iter_map([i0 * 64 + i1], {i0: R(0, 4), i1: R(0, 32)})
    assert any("not one fused iterator" in e for e in res.errors)


def test_nonlinear_index_is_reported():
    res = detect_iter_map([i0 * i1], {i0: R(0, 4), i1: R(0, 4)})
    assert not res.is_affine and "not quasi-affine" in res.errors[0]


def test_unused_iterator_breaks_bijectivity_only():
    doms = {i0: R(0, 4), g: R(0, 4)}
    assert detect_iter_map([i0], doms).is_affine
    res = detect_iter_map([i0], doms, check_level="bijective")
    assert any("g is not fully used" in e for e in res.errors)


def test_symbolic_extent_is_reported():
    n = tir.Var("n")
    res = detect_iter_map([i0], {i0: R(0, n)})
    assert not res.is_affine and "constant" in res.errors[0]


def test_split_to_expr_rebuilds_the_term():
    res = detect_iter_map([f // 4 % 4 * 2], {f: R(0, 64)})
    (split,) = res.indices[0].splits
    assert_structural_equal(split.to_expr(), f // 4 % 4 * 2, map_free_vars=False)
