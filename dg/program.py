"""`dg.Program`, `dg.export` and `dg.load`: the compiled model users get.

The runtime's `Program` runs the device model; this one also compares it,
layer by layer, with the frozen (and float) torch model (`dg.compare`). Running
torch models beside the device needs both the frontend and the runtime, so it
lives here, above both: the runtime never imports the frontend.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import torch
from torch.fx import GraphModule

from dg.compare import FidelityReport, compare
from dg.frontend.errors import ExportError, Problem
from dg.frontend.export import collection_paused, compile_frozen
from dg.lowering.diagnostics import source_of
from dg.lowering.target import Target, over_budget
from dg.runtime import program as device_program


class Program(device_program.Program):
    """A compiled model (`dg.runtime.program.Program`) that compares itself with torch models.

    `run` takes and returns float torch tensors like the frozen model; `run_int`
    takes and returns the int8 numpy arrays the device sees; `compare` says which
    layer loses the accuracy; `save` writes it for `dg.load` and `dg-run`.
    """

    def compare(
        self,
        frozen: GraphModule,
        *inputs: torch.Tensor,
        float_model: torch.nn.Module | None = None,
    ) -> FidelityReport:
        """Per-layer fidelity of the device on `inputs` against `frozen` (and `float_model`).

        One row per activation quantization of the frozen model: SQNR against the
        float and the fake-quant model, largest difference in output steps, share
        of differing elements, saturated values; `.first_bad` is the first layer
        whose error exceeds one step. `float_model` is the float `nn.Module` the
        frozen model was quantized from (without it the float SQNR is left out).
        See `dg.compare`.
        """
        return compare(self, frozen, self.quantize_inputs(*inputs), inputs, float_model)

    def compare_int(
        self,
        frozen: GraphModule,
        *arrays: np.ndarray,
        float_model: torch.nn.Module | None = None,
    ) -> FidelityReport:
        """`compare` on the device's own input arrays (int8 / int32), as `run_int` takes them."""
        self.check_int_inputs(arrays)
        return compare(self, frozen, arrays, self.dequantize_inputs(*arrays), float_model)


def export(
    frozen: GraphModule,
    example_inputs: Sequence[object] | torch.Tensor,
    target_version: str | None = None,
    target: Target | None = None,
) -> Program:
    """Compile a frozen model (`dg.freeze_quantization`) for the dg accelerator.

    Raises `ExportError` listing every problem found: first those of the
    import (unsupported ops, an unquantized model), then those of lowering.
    With a `target` (`dg.Target`), also when the activation arena of one batch item
    (`Program.memory_plan`) does not fit `target.sram_bytes`.
    """
    with collection_paused():
        compiled = compile_frozen(frozen, example_inputs, target_version)
        program = Program(compiled.stages, output_structure=compiled.output_structure)  # type: ignore[arg-type]
    if target is not None:
        program.target = target
        problem = over_budget(program.memory_plan, target.sram_bytes)
        if problem is not None:
            module_path, where = source_of(problem.op)
            raise ExportError(
                [Problem(problem.op.name, problem.message, where, module_path, problem.fix)]
            )
    return program


def load(path: str | os.PathLike[str]) -> Program:
    """Parse and verify a saved dghw module; raises ParseError / VerifyException / ProgramError."""
    return Program.load(path)
