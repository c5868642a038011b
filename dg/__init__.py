"""dg: compile quantized PyTorch models for the dg accelerator.

    prepared = dg.prepare_qat(model, example_inputs)   # or dg.prepare_ptq + calibration
    frozen = dg.freeze_quantization(prepared)
    program = dg.export(frozen, example_inputs)        # -> dg.Program
    program.run(x)                                     # the bit-accurate device model

The public names resolve lazily, so the command-line tools (`dg-opt`,
`dg-run`) start without importing torch.
"""

from __future__ import annotations

import importlib
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

__version__ = version("dg")

from dg import xdsl_fixes  # noqa: E402

xdsl_fixes.apply()

_EXPORTS = {
    "prepare_qat": "dg.frontend.prepare",
    "prepare_ptq": "dg.frontend.prepare",
    "freeze_quantization": "dg.frontend.prepare",
    "export": "dg.program",
    "check": "dg.frontend.export",
    "ExportError": "dg.frontend.errors",
    "Problem": "dg.frontend.errors",
    "DgQuantizer": "dg.frontend.quantizer",
    "Flatten": "dg.frontend.modules",
    "Norm": "dg.frontend.modules",
    "RotaryEmbedding": "dg.frontend.modules",
    "SelfAttention": "dg.frontend.modules",
    "BitShift": "dg.frontend.logic",
    "Bitwise": "dg.frontend.logic",
    "Compare": "dg.frontend.logic",
    "LogicLayer": "dg.frontend.logic",
    "Program": "dg.program",
    "Target": "dg.lowering.target",
    "load": "dg.program",
}

__all__ = [
    "BitShift",
    "Bitwise",
    "Compare",
    "DgQuantizer",
    "ExportError",
    "Flatten",
    "LogicLayer",
    "Norm",
    "Problem",
    "Program",
    "RotaryEmbedding",
    "SelfAttention",
    "Target",
    "__version__",
    "check",
    "export",
    "freeze_quantization",
    "load",
    "prepare_ptq",
    "prepare_qat",
]

if TYPE_CHECKING:
    from dg.frontend.errors import ExportError, Problem
    from dg.frontend.export import check
    from dg.frontend.logic import BitShift, Bitwise, Compare, LogicLayer
    from dg.frontend.modules import Flatten, Norm, RotaryEmbedding, SelfAttention
    from dg.frontend.prepare import freeze_quantization, prepare_ptq, prepare_qat
    from dg.frontend.quantizer import DgQuantizer
    from dg.lowering.target import Target
    from dg.program import Program, export, load


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dg' has no attribute '{name}'")
    # The first dg call that needs torch imports torchao, which logs what is not the user's
    # business (dg.frontend.third_party).
    from dg.frontend.third_party import known_messages_filtered

    with known_messages_filtered():
        return getattr(importlib.import_module(module), name)
