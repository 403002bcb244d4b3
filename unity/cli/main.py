"""Argument parsing and the exit-code contract of the `unity` command.

User errors (a missing file, not an ONNX model, a bad `--shape`) print one line
`unity: error: ...` and exit with code 2; an unsupported model prints the compiler's
diagnostic (which names the ONNX node) and exits with 1.

Example:
    >>> main(["compile", "missing.onnx"])  # doctest: +SKIP
    unity: error: no such file: missing.onnx
    2
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from unity.cli.commands import cmd_bench, cmd_compile, cmd_run
from unity.cli.errors import CliError


def _target(text: str) -> str:
    """An argparse type: `text` if it names a target unity knows (checked before any work)."""
    from unity.target import Target

    try:
        Target(text)
    except (ValueError, TypeError) as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _int_in(lo: int, hi: int | None) -> Any:
    """An argparse type: an int in `[lo, hi]` (no upper bound when `hi` is None)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
        if value < lo or (hi is not None and value > hi):
            bound = f"between {lo} and {hi}" if hi is not None else f">= {lo}"
            raise argparse.ArgumentTypeError(f"must be {bound}, got {value}")
        return value

    return parse


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="unity", description="Compile and run ONNX models.")
    parser.add_argument("--version", action="version", version="unity 0.1.0")
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("model", nargs="?", help="model file (default: the embedded ResNet-50)")
    common.add_argument("--shape", action="append", metavar="NAME=D0,D1,...",
                        help="fix an input's shape, or a symbolic dim (batch=8)")
    build = argparse.ArgumentParser(add_help=False)
    build.add_argument("--target", type=_target, default="llvm", help="llvm (host CPU) or cuda")
    build.add_argument("--opt-level", type=_int_in(0, 4), default=3, dest="opt_level")
    build.add_argument("--dump-ir", metavar="DIR", dest="dump_ir", help="write the IR to DIR")
    build.add_argument("-j", "--jobs", type=_int_in(0, None), default=0,
                       help="worker processes that compile the kernels (0: one per core; 1: none)")
    p = sub.add_parser("compile", parents=[common, build], help="compile an ONNX model")
    p.add_argument("-o", "--output", help="output library (default: MODEL.so)")
    p.set_defaults(func=cmd_compile)
    p = sub.add_parser("run", parents=[common], help="run a compiled model (.so)")
    p.add_argument("--input", action="append", metavar="NAME=FILE.npy")
    p.add_argument("--output", metavar="OUT.npz")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("bench", parents=[common, build], help="time unity against onnxruntime")
    p.add_argument("--repeat", type=_int_in(1, None), default=5)
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `unity` command line; returns the exit code.

    Example:
        >>> main(["run", "nope.so"])  # doctest: +SKIP
        2
    """
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CliError as err:
        print(f"unity: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("unity: interrupted", file=sys.stderr)
        return 130


def entry() -> None:
    """Console-script entry point: `sys.exit(main())`.

    Example:
        >>> entry()  # doctest: +SKIP
    """
    sys.exit(main())


if __name__ == "__main__":
    entry()
