"""`unity` command-line mistakes: one `error:` line and exit code 2, never a traceback."""

from __future__ import annotations

import pytest

from unity.cli.main import main


@pytest.mark.parametrize(
    "argv, phrase",
    [
        (["compile", "--target", "foo", "m.onnx"], "argument --target: Target: unknown kind 'foo'"),
        (["bench", "--repeat", "-1", "m.onnx"], "argument --repeat: must be >= 1, got -1"),
        (["bench", "--repeat", "0", "m.onnx"], "argument --repeat: must be >= 1, got 0"),
        (["compile", "--opt-level", "9", "m.onnx"], "argument --opt-level: must be between 0 and 4"),
        (["compile", "--opt-level", "x", "m.onnx"], "argument --opt-level: invalid int value: 'x'"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_arguments_exit_2(argv, phrase, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert phrase in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv, content, phrase",
    [
        (["compile"], b"not a model", "is not an ONNX model"),
        (["run"], b"not a library", "is not a model compiled by unity"),
    ],
)
def test_wrong_kind_of_file(tmp_path, argv, content, phrase, capsys):
    path = tmp_path / "model.bin"
    path.write_bytes(content)
    assert main([*argv, str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"unity: error: {path} {phrase}") and err.count("\n") == 1


def test_bad_shape_option(capsys):
    assert main(["compile", "--shape", "x=a,b", "m.onnx"]) == 2
    assert "bad --shape 'x=a,b': dimensions must be integers" in capsys.readouterr().err
