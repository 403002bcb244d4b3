"""VM codegen details: storage planning."""

from unity.relax.vm.codegen import plan_storage


def test_pool_only_what_kernels_alone_use():
    code = [
        ["alloc", 1, "float32", [4], 0],
        ["kernel", "f", [["t", 0, [4]], ["t", 1, [4]]]],
        ["alloc", 2, "float32", [4], 0],
        ["kernel", "f", [["t", 1, [4]], ["t", 2, [4]]]],
        ["alloc", 3, "float32", [4], 0],
        ["kernel", "f", [["t", 2, [4]], ["t", 3, [4]]]],
        ["tuple", 4, [3]],
    ]
    out = plan_storage(code, 4)
    assert out == [
        ["alloc", 1, "float32", [4], 1],
        ["kernel", "f", [["t", 0, [4]], ["t", 1, [4]]]],
        ["alloc", 2, "float32", [4], 1],
        ["kernel", "f", [["t", 1, [4]], ["t", 2, [4]]]],
        ["free", 1],
        ["alloc", 3, "float32", [4], 0],  # escapes through the tuple
        ["kernel", "f", [["t", 2, [4]], ["t", 3, [4]]]],
        ["free", 2],
        ["tuple", 4, [3]],
    ]


def test_use_inside_a_branch_keeps_the_buffer_until_the_if():
    code = [
        ["alloc", 1, "float32", [4], 0],
        ["if", 5, 0, [["kernel", "f", [["t", 1, [4]], ["t", 2, [4]]]]], 2, [], 3],
        ["alloc", 6, "float32", [4], 0],
    ]
    out = plan_storage(code, 5)
    assert out[0][4] == 1 and out[1][0] == "if" and out[2] == ["free", 1]
    assert out[3] == ["alloc", 6, "float32", [4], 1] and out[4] == ["free", 6]
