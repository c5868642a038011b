"""`dg-run`: run a function of a dghw module on .npy arrays, like xdsl-run / mlir-cpu-runner.

    dg-run model.mlir -i x.npy -o y.npy
    dg-run model.mlir --input a.npy --input b.npy --function main

Each `--input` is one argument, in order; each `--output` receives one
result. Without `--output` the results are printed. `--compare` prints the
per-layer fidelity table instead (`Program.compare`), against the frozen model
`Program.save(path, reference=frozen)` wrote next to the module. Bad input (a file that
does not parse or verify, arrays of the wrong shape or dtype) prints a
diagnostic and exits 1.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, ParseError

import dg
from dg.source import LocatedParseError, LocatedVerifyException


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
    parser.add_argument(
        "--float",
        action="store_true",
        help="float32 .npy in and out: quantize each input with @main's host parameters "
        "(dghw.scale, dghw.zero_point) and dequantize each result; without it the arrays are "
        "the device's own int8 (int32) values",
    )
    parser.add_argument(
        "--compare",
        nargs="?",
        const=REFERENCE_NEXT_TO_FILE,
        metavar="PT2",
        help="print the per-layer fidelity table against the frozen model (default: the "
        "FILE.frozen.pt2 that Program.save(path, reference=frozen) wrote; a FILE.float.pt2 "
        "beside it, from float_model=, adds the float model)",
    )
    parser.add_argument(
        "--report",
        action="store_true",
        help="print the per-op cost report (MACs, bytes, estimated cycles) and the memory "
        "plan of @main instead of running it (Program.cost_report, the example dg.Target)",
    )
    parser.add_argument(
        "--plot",
        metavar="PNG",
        help="with --compare: also plot SQNR and saturation per layer; with --report: the "
        "arena occupancy and the cycles per op",
    )
    parser.add_argument("--version", action="version", version=f"dg-run {dg.__version__}")
    return parser


REFERENCE_NEXT_TO_FILE = ""
"""`--compare` without a path: the reference `Program.save` wrote next to the module."""

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
    from dg.runtime.program import read_dghw

    try:
        module = read_dghw(args.file)
    except OSError as error:
        raise RunError(f"cannot read '{args.file}': {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        raise RunError(f"'{args.file}' is not MLIR text: {error}") from error
    if args.plot is not None and args.compare is None and not args.report:
        raise RunError("--plot needs --compare or --report")
    if args.report:
        report_costs(args, module)
        return
    if args.compare is not None:
        compare_with_reference(args, module)
        return
    device = DeviceModel(module, args.function)
    if args.output and len(args.output) != len(device.function.function_type.outputs):
        raise RunError(
            f"@{args.function} has {len(device.function.function_type.outputs)} result(s), "
            f"got {len(args.output)} --output file(s)"
        )
    inputs = load_arrays(args.input)
    if args.float:
        results = run_float(args, module, inputs)
    else:
        results = run_int(device, inputs)
    if not args.output:
        for i, result in enumerate(results):
            print(f"result #{i}: {result.dtype}{list(result.shape)}\n{result}")
        return
    for path, result in zip(args.output, results, strict=True):
        try:
            np.save(path, result, allow_pickle=False)
        except OSError as error:
            raise RunError(f"cannot write '{path}': {error.strerror or error}") from error


def report_costs(args: argparse.Namespace, module: ModuleOp) -> None:
    """`--report`: the cost report and memory plan of the program, without running it."""
    from dg.runtime.program import Program, ProgramError

    try:
        report = Program.from_dghw(module).cost_report()
    except ProgramError as error:
        raise RunError(f"--report needs a program saved by Program.save: {error}") from error
    print(report)
    if args.plot is not None:
        report.plot(args.plot)


def run_int(device: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The device on the int8 (int32) arrays it reads."""
    try:
        return list(device(inputs))
    except ValueError as error:  # arguments that do not fit the function's types
        floats = any(np.issubdtype(array.dtype, np.floating) for array in inputs)
        hint = " (float inputs: --float quantizes them with the module's dghw.scale)"
        raise RunError(str(error) + (hint if floats else "")) from error


def run_float(args: argparse.Namespace, module: ModuleOp, inputs: list[np.ndarray]) -> list[Any]:
    """`--float`: float32 arrays in, quantized with @main's host parameters (its argument
    attributes `dghw.scale` / `dghw.zero_point`); float32 arrays out, dequantized with its
    result attributes. Integer (logic-layer) arguments and results pass as they are."""
    import torch

    from dg.runtime.program import Program, ProgramError

    if args.function != "main":
        raise RunError("--float runs @main, the program's function; drop --function")
    for path, array in zip(args.input, inputs, strict=True):
        if np.issubdtype(array.dtype, np.floating) and array.dtype != np.float32:
            raise RunError(
                f"--float: input '{path}' is {array.dtype}; the device's host quantization "
                "takes float32 (save it with x.astype(np.float32))"
            )
    try:
        program = Program.from_dghw(module, "tuple")
        results = program.run(*(torch.from_numpy(array) for array in inputs))
    except ProgramError as error:
        raise RunError(f"--float needs a program saved by Program.save: {error}") from error
    except (TypeError, ValueError) as error:  # inputs that do not fit @main
        raise RunError(f"--float: {error}") from error
    return [result.numpy() for result in results]


def compare_with_reference(args: argparse.Namespace, module: ModuleOp) -> None:
    """`--compare`: the device against the saved frozen model, per layer, on the inputs."""
    from dg.frontend.third_party import known_messages_filtered

    with known_messages_filtered():
        compare_quietly(args, module)


def compare_quietly(args: argparse.Namespace, module: ModuleOp) -> None:
    # Imported here, as in `run`: torch loads only for --compare.
    from dg.program import Program
    from dg.runtime.program import ProgramError, load_reference, reference_path

    if args.function != "main":
        raise RunError("--compare runs @main, the program's function; drop --function")
    try:
        program = Program.from_dghw(module)
    except ProgramError as error:
        raise RunError(f"--compare needs a program saved by Program.save: {error}") from error
    inputs = load_arrays(args.input)
    try:
        program.check_int_inputs(inputs)
    except ValueError as error:  # arguments that do not fit @main's types
        raise RunError(str(error)) from error
    path = args.compare or reference_path(args.file)
    try:
        frozen = load_reference(path)
    except OSError as error:
        raise RunError(
            f"--compare: cannot read the frozen model '{path}' ({error.strerror or 'not found'}); "
            "write it with program.save(path, reference=frozen), or name it: --compare FILE.pt2"
        ) from error
    except ProgramError as error:
        raise RunError(f"--compare: {error}") from error
    float_model = load_float_model(path)
    try:
        report = program.compare_int(frozen, *inputs, float_model=float_model)
    except RuntimeError as error:  # torch: the frozen model rejects the inputs
        raise RunError(
            f"--compare: the frozen model '{path}' failed on the inputs: {error}"
        ) from error
    print(report)
    if args.plot is not None:
        try:
            report.plot(args.plot)
        except ImportError as error:
            raise RunError(str(error)) from error
        except OSError as error:
            raise RunError(f"cannot write '{args.plot}': {error.strerror or error}") from error


def load_float_model(reference: str) -> Any:
    """The float model saved next to the frozen `reference`, or None when there is none."""
    from dg.runtime.program import (
        FLOAT_SUFFIX,
        REFERENCE_SUFFIX,
        ProgramError,
        load_reference,
    )

    if not reference.endswith(REFERENCE_SUFFIX):
        return None
    path = reference[: -len(REFERENCE_SUFFIX)] + FLOAT_SUFFIX
    if not os.path.exists(path):
        return None
    try:
        return load_reference(path)
    except (OSError, ProgramError) as error:
        raise RunError(f"--compare: {error}") from error


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
    except (LocatedParseError, LocatedVerifyException) as error:
        print(error, file=sys.stderr)  # `file:line:col: error: ...`, the line quoted and clipped
        return 1
    except (RunError, ParseError, DiagnosticException) as error:
        # DiagnosticException covers VerifyException and InterpretationError.
        print(f"dg-run: error: {shorten(str(error))}", file=sys.stderr)
        for note in getattr(error, "__notes__", ()):
            print(failing_op_excerpt(note), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
