"""`dg-run`: run a function of a dghw module on .npy arrays, like xdsl-run / mlir-cpu-runner.

    dg-run model.mlir -i x.npy -o y.npy
    dg-run model.mlir --input a.npy --input b.npy --function main

Each `--input` is one argument, in order; each `--output` receives one
result. Without `--output` the results are printed. Bad input (a file that
does not parse or verify, arrays of the wrong shape or dtype) prints a
diagnostic and exits 1.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

import numpy as np
from xdsl.utils.exceptions import DiagnosticException, ParseError

import dg


def build_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dg-run", description="Run a dghw module on the dg device model."
    )
    parser.add_argument("file", help="dghw module (.mlir), as saved by Program.save or dg-opt")
    parser.add_argument(
        "-i",
        "--input",
        action="append",
        default=[],
        metavar="NPY",
        help="argument (.npy), in order",
    )
    parser.add_argument(
        "-o", "--output", action="append", default=[], metavar="NPY", help="result file, in order"
    )
    parser.add_argument("--function", default="main", help="function to call (default: main)")
    parser.add_argument("--version", action="version", version=f"dg-run {dg.__version__}")
    return parser


NPY_MAGIC = b"\x93NUMPY"
"""The first bytes of every .npy file (NumPy's format spec)."""


class RunError(Exception):
    """A user error dg-run reports as one diagnostic line."""


def load_arrays(paths: Sequence[str]) -> list[np.ndarray]:
    arrays = []
    for path in paths:
        try:
            with open(path, "rb") as f:
                if f.read(len(NPY_MAGIC)) != NPY_MAGIC:
                    raise RunError(f"input '{path}' is not a .npy file (no NumPy header)")
                f.seek(0)
                arrays.append(np.load(f, allow_pickle=False))
        except OSError as error:
            raise RunError(f"cannot read input '{path}': {error.strerror or error}") from error
        except ValueError as error:  # a NumPy header, but object data or a broken header
            raise RunError(f"input '{path}': {error}") from error
    return arrays


def run(args: argparse.Namespace) -> None:
    # Imported here so that `dg-run --help` stays instant.
    from dg.runtime.interpreter import DeviceModel
    from dg.runtime.program import parse_dghw

    try:
        with open(args.file, encoding="utf-8") as f:
            text = f.read()
    except OSError as error:
        raise RunError(f"cannot read '{args.file}': {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        raise RunError(f"'{args.file}' is not MLIR text: {error}") from error
    module = parse_dghw(text, args.file)
    module.verify()
    device = DeviceModel(module, args.function)
    if args.output and len(args.output) != len(device.function.function_type.outputs):
        raise RunError(
            f"@{args.function} has {len(device.function.function_type.outputs)} result(s), "
            f"got {len(args.output)} --output file(s)"
        )
    inputs = load_arrays(args.input)
    try:
        results = device(inputs)
    except ValueError as error:  # arguments that do not fit the function's types
        raise RunError(str(error)) from error
    if not args.output:
        for i, result in enumerate(results):
            print(f"result #{i}: {result.dtype}{list(result.shape)}\n{result}")
        return
    for path, result in zip(args.output, results, strict=True):
        try:
            np.save(path, result, allow_pickle=False)
        except OSError as error:
            raise RunError(f"cannot write '{path}': {error.strerror or error}") from error


MAX_LINE = 240
MARKER = re.compile(r"\s*\^+-*\s*")
"""The line of `^^^^----` xDSL puts under the failing op."""


def failing_op_excerpt(note: str) -> str:
    """The failing op and its message from xDSL's annotated-module note.

    xDSL prints the whole module, every weight included; a diagnostic only
    needs the op above the `^^^^` marker and the message below it.
    """
    lines = note.splitlines()
    marker = next((i for i, line in enumerate(lines) if MARKER.fullmatch(line)), None)
    if marker is None or marker == 0:
        return shorten("\n".join(lines[:20]))
    return shorten("\n".join(lines[marker - 1 : marker + 3]))


def shorten(text: str) -> str:
    """`text` with every line cut to MAX_LINE characters."""
    return "\n".join(
        line if len(line) <= MAX_LINE else line[:MAX_LINE] + " ..." for line in text.splitlines()
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `dg-run`; returns the exit status."""
    args = build_argument_parser().parse_args(argv)
    try:
        run(args)
    except (RunError, ParseError, DiagnosticException) as error:
        # DiagnosticException covers VerifyException and InterpretationError.
        # A parse error quotes its source line, which may be a megabyte of weights.
        print(f"dg-run: error: {shorten(str(error))}", file=sys.stderr)
        for note in getattr(error, "__notes__", ()):
            print(failing_op_excerpt(note), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
