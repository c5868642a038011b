"""A real NPU: the program as a TOSA flatbuffer, compiled by Arm's Vela for Ethos-U.

    dghw --convert-dghw-to-tosa{batch}--> TOSA 1.0 MLIR
         --tosa-opt --tosa-serialize (PyPI tosa-tools)--> flatbuffer (`save_tosa`)
         --Vela (PyPI ethos-u-vela, its Python package)--> optimized model + summary

Both tools are optional (dg's `dev` extra installs them). `compile_for_ethos_u` runs Vela
in this process and returns its summary as an `EthosUSummary`; Vela's own messages
(warnings about default configurations, ...) are kept in it, not printed.
"""

from __future__ import annotations

import contextlib
import csv
import io
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from dg.lowering.diagnostics import LoweringError
from dg.runtime.tosa_reference import TosaReferenceError, serialize, to_tosa

VELA_EXTRA_HINT = "pip install ethos-u-vela (dg's dev extra installs it)"
KIB = 1024


class TosaExportError(ValueError):
    """The program cannot be written as TOSA (an op without a TOSA form), or the TOSA tools
    or Vela are missing or failed."""


def save_tosa(module: ModuleOp, path: str | Path, batch: int = 1) -> Path:
    """Write `@main` of a dghw module as a TOSA 1.0 flatbuffer at batch `batch`."""
    try:
        text = to_tosa(module, batch)
    except LoweringError as error:
        ops = "; ".join(str(problem) for problem in error.problems)
        raise TosaExportError(f"the program has no TOSA form: {ops}") from error
    except DiagnosticException as error:
        raise TosaExportError(f"the program has no TOSA form: {error}") from error
    with tempfile.TemporaryDirectory(prefix="dg-tosa-") as work:
        try:
            graph = serialize(text, Path(work))
        except TosaReferenceError as error:
            raise TosaExportError(str(error)) from error
        shutil.copyfile(graph, path)
    return Path(path)


@dataclass(frozen=True)
class EthosUSummary:
    """Vela's summary of one compilation (its own counts, e.g. of MACs)."""

    accelerator: str
    system_config: str
    memory_mode: str
    npu_ops: int
    cpu_ops: int
    sram_bytes: int
    flash_bytes: int
    macs: int
    cycles: int
    """All cycles of one inference, memory accesses included (Vela's `cycles_total`)."""
    npu_cycles: int
    inference_seconds: float
    output_path: Path
    """Vela's optimized model."""
    csv_path: Path
    """Vela's summary CSV (every figure it reports)."""
    warnings: tuple[str, ...] = field(default=())
    """What Vela printed as warnings (e.g. about default configurations)."""

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["output_path"], values["csv_path"] = str(self.output_path), str(self.csv_path)
        values["warnings"] = list(self.warnings)
        return values

    def summary(self) -> str:
        return (
            f"{self.accelerator}: {self.npu_ops} NPU / {self.cpu_ops} CPU ops, "
            f"SRAM {self.sram_bytes / KIB:,.2f} KiB, flash {self.flash_bytes / KIB:,.2f} KiB, "
            f"{self.macs:,} MACs, {self.cycles:,} cycles ({self.npu_cycles:,} NPU), "
            f"{self.inference_seconds * 1e3:.3f} ms"
        )


def _vela_main() -> Any:
    try:
        from ethosu.vela import vela
    except ImportError as error:
        raise TosaExportError(f"compiling for Ethos-U needs Vela: {VELA_EXTRA_HINT}") from error
    return vela.main


def _operator_count(output: str, kind: str) -> int:
    for line in output.splitlines():
        if line.strip().startswith(f"{kind} operators"):
            return int(line.split("=")[1].split("(")[0])
    raise TosaExportError(f"Vela printed no '{kind} operators' count:\n{output}")


def run_vela(network: Path, output_dir: Path, options: list[str]) -> tuple[int, str]:
    """Vela's `main` on `network`, its printed output captured; (exit status, output)."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        try:
            status = _vela_main()([str(network), "--output-dir", str(output_dir), *options])
        except SystemExit as exit_:  # argparse errors (a bad accelerator name, ...)
            status = exit_.code if isinstance(exit_.code, int) else 2
        except Exception as error:  # Vela raises its own kinds for a graph it rejects
            raise TosaExportError(f"Vela failed: {error}\n{output.getvalue()}") from error
    return status, output.getvalue()


def compile_for_ethos_u(
    module: ModuleOp,
    output_dir: str | Path,
    accelerator: str = "ethos-u55-128",
    system_config: str | None = None,
    memory_mode: str | None = None,
    config: str | None = None,
    name: str = "model",
) -> EthosUSummary:
    """Write the TOSA flatbuffer of `module` (batch 1) to `output_dir` and compile it with
    Vela for `accelerator`; `system_config`, `memory_mode` and `config` (a Vela .ini) are
    Vela's options, None for Vela's defaults."""
    directory = Path(output_dir)
    directory.mkdir(parents=True, exist_ok=True)
    network = save_tosa(module, directory / f"{name}.tosa")
    options = ["--accelerator-config", accelerator]
    for flag, value in (
        ("--system-config", system_config),
        ("--memory-mode", memory_mode),
        ("--config", config),
    ):
        if value is not None:
            options += [flag, value]
    status, output = run_vela(network, directory, options)
    if status != 0:
        raise TosaExportError(f"Vela failed (exit status {status}):\n{output.strip()}")
    return read_summary(directory, name, output)


def read_summary(directory: Path, name: str, output: str) -> EthosUSummary:
    """The summary of Vela's run on `name` in `directory` (its CSV and printed counts)."""
    found = sorted(directory.glob(f"{name}_summary_*.csv"))
    if not found:
        raise TosaExportError(f"Vela wrote no summary CSV in {directory}:\n{output}")
    with open(found[-1], encoding="utf-8") as f:
        row = next(csv.DictReader(f))
    flash_kib = float(row["off_chip_flash_memory_used"]) + float(row["on_chip_flash_memory_used"])
    return EthosUSummary(
        accelerator=row["accelerator_configuration"],
        system_config=row["system_config"],
        memory_mode=row["memory_mode"],
        npu_ops=_operator_count(output, "NPU"),
        cpu_ops=_operator_count(output, "CPU"),
        sram_bytes=round(float(row["sram_memory_used"]) * KIB),
        flash_bytes=round(flash_kib * KIB),
        macs=int(float(row["nn_macs"])),
        cycles=int(float(row["cycles_total"])),
        npu_cycles=int(float(row["cycles_npu"])),
        inference_seconds=float(row["inference_time"]),
        output_path=directory / f"{name}_vela.tflite",
        csv_path=found[-1],
        warnings=tuple(line for line in output.splitlines() if line.startswith("Warning")),
    )
