"""dg's xDSL universe: makes dg's dialects and passes visible to xdsl-opt and dg-opt.

Registered through the `xdsl.universe` entry point in pyproject.toml. Every
factory imports lazily so that starting a tool does not import torch.
"""

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _dgtorch() -> Dialect:
    from dg.dialects.dgtorch import DgTorch

    return DgTorch


def _dgq() -> Dialect:
    from dg.dialects.dgq import Dgq

    return Dgq


def _dghw() -> Dialect:
    from dg.dialects.dghw import Dghw

    return Dghw


def _convert_dgtorch_to_dgq() -> type[ModulePass]:
    from dg.lowering.convert_dgtorch_to_dgq import ConvertDgtorchToDgqPass

    return ConvertDgtorchToDgqPass


def _convert_dgq_to_dghw() -> type[ModulePass]:
    from dg.lowering.convert_dgq_to_dghw import ConvertDgqToDghwPass

    return ConvertDgqToDghwPass


def _convert_dghw_to_tosa() -> type[ModulePass]:
    from dg.lowering.convert_dghw_to_tosa import ConvertDghwToTosaPass

    return ConvertDghwToTosaPass


def _dghw_plan_memory() -> type[ModulePass]:
    from dg.lowering.plan_memory import PlanMemoryPass

    return PlanMemoryPass


def _dghw_verify_memory_plan() -> type[ModulePass]:
    from dg.lowering.verify_memory_plan import VerifyMemoryPlanPass

    return VerifyMemoryPlanPass


def _dg_pipeline() -> type[ModulePass]:
    from dg.lowering.pipeline import DgPipelinePass

    return DgPipelinePass


def _tosa() -> Dialect:
    from dg.dialects.tosa import Tosa

    return Tosa


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "dgtorch": _dgtorch,
    "dgq": _dgq,
    "dghw": _dghw,
}

PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "convert-dgtorch-to-dgq": _convert_dgtorch_to_dgq,
    "convert-dgq-to-dghw": _convert_dgq_to_dghw,
    "dg-pipeline": _dg_pipeline,
    "convert-dghw-to-tosa": _convert_dghw_to_tosa,
    "dghw-plan-memory": _dghw_plan_memory,
    "dghw-verify-memory-plan": _dghw_verify_memory_plan,
}

DIALECT_EXTENSIONS: dict[str, Callable[[], Dialect]] = {"tosa": _tosa}
"""Dialects dg-opt loads in place of xDSL's of the same name (a universe may not redefine
one): `tosa` with the TOSA 1.0 ops that `convert-dghw-to-tosa` emits."""

DG_UNIVERSE = Universe(all_dialects=DIALECTS, all_passes=PASSES)
