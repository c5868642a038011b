"""Run a dghw module on the TOSA reference model, the independent check of the device model.

    module --convert-dghw-to-tosa{batch}--> TOSA 1.0 MLIR
           --tosa-opt (attach pro_int target, validate, serialize)--> flatbuffer
           --tosa_reference_model on TosaInput_<i>.npy--> TosaOutput_<i>.npy

The tools come from the PyPI package `tosa-tools` (dg's `dev` extra). TOSA
has no dynamic extents, so the module is specialized to the arrays' batch
extent. `cross_check` runs both the reference model and the dghw interpreter
on the same int8/int32 arrays; dg requires their outputs to be identical.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from dg.lowering.convert_dghw_to_tosa import ConvertDghwToTosaPass
from dg.runtime.interpreter import DeviceModel, find_function

TOSA_PROFILE = "pro_int"
"""The TOSA profile dghw's integers need: the integer profile, no extensions."""

REFERENCE_EXIT_CODES = {
    1: "a TOSA REQUIRE failed (the result is unpredictable, e.g. an int32 overflow)",
    2: "a TOSA ERROR_IF fired (the graph is not a valid TOSA graph)",
}
"""What `tosa_reference_model`'s non-zero exit statuses mean."""


class TosaReferenceError(RuntimeError):
    """The TOSA tools are missing, rejected the graph, or could not run it."""


def tosa_tool(name: str) -> str:
    """The path of a `tosa-tools` executable: beside this Python's, else on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise TosaReferenceError(
            f"'{name}' was not found: the TOSA cross-check needs the PyPI package tosa-tools "
            "(install dg's dev extra: pip install -e '.[dev]')"
        )
    return found


def to_tosa(module: ModuleOp, batch: int) -> str:
    """The TOSA 1.0 MLIR text of a dghw module at batch extent `batch` (`module` is unchanged)."""
    tosa = module.clone()
    ConvertDghwToTosaPass(batch=batch).apply(Context(), tosa)
    text = StringIO()
    Printer(stream=text).print_op(tosa)
    return text.getvalue()


@dataclass(frozen=True)
class TosaRun:
    """The reference model's outputs, and its own wall time (without tosa-opt)."""

    outputs: list[np.ndarray]
    reference_seconds: float


def run_tosa_reference(module: ModuleOp, arrays: Sequence[np.ndarray]) -> TosaRun:
    """Run `@main` of a dghw module on the TOSA reference model."""
    batch = arrays[0].shape[0]
    with tempfile.TemporaryDirectory(prefix="dg-tosa-") as work:
        directory = Path(work)
        graph = serialize(to_tosa(module, batch), directory)
        inputs = []
        for i, array in enumerate(arrays):
            np.save(directory / f"TosaInput_{i}.npy", np.ascontiguousarray(array))
            inputs.append(f"TosaInput_{i}")
        outputs = [f"TosaOutput_{i}" for i in range(result_count(module))]
        start = time.perf_counter()
        run_tool(
            [
                tosa_tool("tosa_reference_model"),
                f"--tosa_file={graph}",
                f"--ifm_name={','.join(inputs)}",
                f"--ifm_file={','.join(f'{name}.npy' for name in inputs)}",
                f"--ofm_name={','.join(outputs)}",
                f"--ofm_file={','.join(f'{name}.npy' for name in outputs)}",
                f"--flatbuffer_dir={directory}",
                f"--output_dir={directory}",
            ],
            directory,
            REFERENCE_EXIT_CODES,
        )
        seconds = time.perf_counter() - start
        return TosaRun([np.load(directory / f"{name}.npy") for name in outputs], seconds)


def serialize(tosa_mlir: str, directory: Path) -> Path:
    """Validate the TOSA MLIR for the integer profile and write its flatbuffer."""
    source, graph = directory / "model.tosa.mlir", directory / "model.tosa"
    source.write_text(tosa_mlir)
    run_tool(
        [
            tosa_tool("tosa-opt"),
            str(source),
            f"--tosa-attach-target=profiles={TOSA_PROFILE}",
            "--tosa-validate",
            "--tosa-serialize",
            f"--tosa-flatbuffer-filename={graph}",
            "-o",
            str(directory / "validated.mlir"),
        ],
        directory,
        {},
    )
    return graph


def run_tool(command: list[str], directory: Path, meanings: dict[int, str]) -> None:
    done = subprocess.run(command, cwd=directory, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tool = Path(command[0]).name
        meaning = meanings.get(done.returncode, f"exit status {done.returncode}")
        raise TosaReferenceError(
            f"{tool} failed: {meaning}\n{done.stderr.strip()}\n{done.stdout.strip()}".rstrip()
        )


def result_count(module: ModuleOp) -> int:
    return len(find_function(module, "main").function_type.outputs)


@dataclass(frozen=True)
class CrossCheck:
    """Both models' outputs on the same inputs, and their wall times."""

    device: list[np.ndarray]
    tosa: list[np.ndarray]
    device_seconds: float
    reference_seconds: float

    def mismatches(self) -> list[str]:
        """One line per output that is not bit-identical (empty: they agree)."""
        problems = []
        for i, (ours, theirs) in enumerate(zip(self.device, self.tosa, strict=True)):
            if ours.shape != theirs.shape or ours.dtype != theirs.dtype:
                problems.append(
                    f"output #{i}: device {ours.dtype}{list(ours.shape)}, "
                    f"TOSA {theirs.dtype}{list(theirs.shape)}"
                )
            elif not np.array_equal(ours, theirs):
                differ = ours.astype(np.int64) != theirs.astype(np.int64)
                first = tuple(int(j) for j in np.argwhere(differ)[0])
                problems.append(
                    f"output #{i}: {int(differ.sum())} of {ours.size} elements differ, "
                    f"first at {list(first)}: device {ours[first]}, TOSA {theirs[first]}"
                )
        return problems


def cross_check(module: ModuleOp, arrays: Sequence[np.ndarray]) -> CrossCheck:
    """Run `@main` on the dghw interpreter and on the TOSA reference model."""
    device = DeviceModel(module)
    start = time.perf_counter()
    ours = device(arrays)
    device_seconds = time.perf_counter() - start
    reference = run_tosa_reference(module, arrays)
    return CrossCheck(ours, reference.outputs, device_seconds, reference.reference_seconds)
