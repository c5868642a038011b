"""`dg.check`, and the compiling half of `dg.export`: from a frozen model to its modules.

`compile_frozen` imports and lowers a frozen model, each problem found an
`ExportError`; `dg.export` (`dg.program`) makes the `Program` of what it returns,
so that the frontend does not depend on the runtime.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch.fx import GraphModule
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from dg.frontend.errors import ExportError, Problem, located_at_caller
from dg.frontend.importer import collect_problems, import_graph, module_output_structure
from dg.frontend.prepare import example_tuple, export_with_dynamic_batch
from dg.lowering.diagnostics import LoweringError
from dg.lowering.pipeline import lower

NOT_FROZEN_FIX = (
    "pass the model returned by dg.freeze_quantization (after dg.prepare_qat or dg.prepare_ptq)"
)


@dataclass(frozen=True)
class Compiled:
    """A compiled frozen model: what `dg.export` makes a `Program` of."""

    stages: dict[str, ModuleOp]
    """The module of each stage ("dgtorch", "dgq", "dghw")."""
    output_structure: str
    """How the frozen model returns its results ("single" | "tuple")."""


def compile_frozen(
    frozen: GraphModule,
    example_inputs: Sequence[object] | torch.Tensor,
    target_version: str | None = None,
) -> Compiled:
    """Compile a frozen model (`dg.freeze_quantization`) for the dg accelerator.

    Raises `ExportError` listing every problem found: first those of the
    import (unsupported ops, an unquantized model), then those of lowering.
    """
    if not isinstance(frozen, GraphModule):
        wrong_model = f"expects a frozen model, got a {type(frozen).__name__}"
        raise ExportError([Problem("", wrong_model, fix=NOT_FROZEN_FIX)])
    with collection_paused():
        module = import_graph(frozen, example_tuple(example_inputs))
        try:
            stages = lower(module, target_version=target_version)
        except DiagnosticException as error:
            raise ExportError(_lowering_problems(error)) from error
        return Compiled(stages, module_output_structure(module))


@contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, back to its former state after.

    Compiling allocates many long-lived IR objects; each full collection walks
    all of them, so with it on, export time grew faster than the model (a third
    or more of a 320-block export was collection). Reference counting still
    frees what is dropped; cycles are collected once the block is left.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def check(model: torch.nn.Module, example_inputs: Sequence[object] | torch.Tensor) -> list[Problem]:
    """Every problem dg finds in `model` without compiling it (empty: no problem found).

    A `GraphModule` (e.g. the frozen model) gets the checks of `export`'s
    import. Any other module is a float model about to be quantized: it is
    exported in eval mode and gets the checks `prepare_qat` / `prepare_ptq`
    run (those of `export` that do not depend on quantization).
    """
    return located_at_caller(_problems(model, example_tuple(example_inputs)))


def _problems(model: torch.nn.Module, example_inputs: tuple[object, ...]) -> list[Problem]:
    if isinstance(model, GraphModule):
        return collect_problems(model, example_inputs)
    try:
        gm = export_with_dynamic_batch(model, example_inputs, train=False)
    except ExportError as error:
        return error.problems
    except Exception as error:  # torch.export reports many kinds of errors
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        return [Problem("torch.export", f"cannot capture the model: {first_line}")]
    return collect_problems(gm, require_quantized=False)  # examples were traced: they fit


def _lowering_problems(error: DiagnosticException) -> list[Problem]:
    """One `Problem` per op a lowering pass reported."""
    if isinstance(error, LoweringError):
        return [Problem(p.op.name, p.message, p.location or "", fix=p.fix) for p in error.problems]
    if isinstance(error, VerifyException):
        # The passes check what they can lower and report it located; invalid
        # IR after one of them is the compiler's fault, not the model's.
        return [
            Problem(
                "",
                f"internal compiler error: a lowering pass produced invalid IR ({error})",
                fix="this is a dg bug: please report it with the model",
            )
        ]
    return [Problem("", f"lowering failed: {error}")]
