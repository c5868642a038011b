"""`dg-pipeline`: dgtorch -> dgq -> dghw, gated by the dg compiler version being targeted.

Features of the dg toolchain appear in a given compiler release; a model
compiled for an older release (`target_version`) must not use newer ones.
`MINIMUM_COMPILER_VERSION` records, per dgq/dghw op, the first release that
supports it, and the pipeline rejects ops the target cannot run, at their
source location.

In xDSL's pass syntax the option is spelled `dg-pipeline{target-version="0.14.0"}`
(quoted: an unquoted 0.14.0 is not one token).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Literal

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from dg.lowering.convert_dgq_to_dghw import ConvertDgqToDghwPass
from dg.lowering.convert_dgtorch_to_dgq import ConvertDgtorchToDgqPass
from dg.lowering.diagnostics import LoweringProblem, Reason, raise_problems

PASS_NAME = "dg-pipeline"

Version = tuple[int, int, int]

MINIMUM_COMPILER_VERSION: dict[str, str] = {
    "dgq.concat": "0.15.0",
    "dghw.concat": "0.15.0",
}
"""Op name (dgq or dghw) -> first dg compiler version that supports it.

Ops not listed are supported by every version.
"""

STAGES = ("dgtorch", "dgq", "dghw")
Stage = Literal["dgtorch", "dgq", "dghw"]

COMPILER_VERSION = version("dg")
"""This compiler's release, as installed (the version pyproject.toml gives)."""

NEEDS_NEWER_COMPILER = Reason(
    "needs-newer-compiler",
    "{name} requires dg compiler >= {required}, but target_version is {target}",
)

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def parse_version(text: str) -> Version:
    """`"0.15.0"` -> `(0, 15, 0)`; anything else raises PassFailedException."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise PassFailedException(
            f"{PASS_NAME}: invalid target_version '{text}': expected MAJOR.MINOR.PATCH, e.g. 0.15.0"
        )
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def check_target_version(target_version: str) -> Version:
    """The parsed target version, which this compiler must be able to produce code for."""
    target = parse_version(target_version)
    if target > parse_version(COMPILER_VERSION):
        raise PassFailedException(
            f"{PASS_NAME}: target_version {target_version} is newer than this compiler "
            f"(dg {COMPILER_VERSION})"
        )
    return target


def check_version_gates(
    module: ModuleOp,
    target_version: str,
    minimum_versions: Mapping[str, str] | None = None,
) -> None:
    """Fail on every op of `module` that needs a newer compiler than `target_version`."""
    gates = MINIMUM_COMPILER_VERSION if minimum_versions is None else minimum_versions
    target = check_target_version(target_version)
    problems: list[LoweringProblem] = []
    for op in module.walk():
        required = gates.get(op.name)
        if required is not None and parse_version(required) > target:
            fields = {"name": op.name, "required": required, "target": target_version}
            problems.append(NEEDS_NEWER_COMPILER.at(op, **fields))
    if problems:
        raise_problems(PASS_NAME, problems)


@dataclass(frozen=True)
class DgPipelinePass(ModulePass):
    """Run `convert-dgtorch-to-dgq` and `convert-dgq-to-dghw`, checking version gates on both
    results."""

    name = PASS_NAME

    target_version: str = field(
        default=COMPILER_VERSION,
        metadata={
            "help": "the dg compiler version the device runs (MAJOR.MINOR.PATCH); ops that need "
            "a newer one fail the pass"
        },
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_target_version(self.target_version)
        for conversion in (ConvertDgtorchToDgqPass(), ConvertDgqToDghwPass()):
            conversion.apply(ctx, op)
            # The next conversion relies on its input verifying.
            op.verify()
            check_version_gates(op, self.target_version)


def lower(
    module: ModuleOp,
    target: Stage = "dghw",
    target_version: str | None = None,
) -> dict[str, ModuleOp]:
    """Lower a dgtorch module up to `target`, returning a verified clone at every stage.

    The input module is not modified. Raises xDSL's DiagnosticException (a
    PassFailedException or VerifyException) with a located message on bad input.
    """
    if target not in STAGES:
        raise ValueError(f"unknown target stage '{target}', expected one of {', '.join(STAGES)}")
    version = COMPILER_VERSION if target_version is None else target_version
    check_target_version(version)
    ctx = Context()
    current = module.clone()
    current.verify()
    stages: dict[str, ModuleOp] = {"dgtorch": current.clone()}
    conversions = {"dgq": ConvertDgtorchToDgqPass(), "dghw": ConvertDgqToDghwPass()}
    for stage in STAGES[1 : STAGES.index(target) + 1]:
        conversions[stage].apply(ctx, current)
        current.verify()
        check_version_gates(current, version)
        stages[stage] = current.clone()
    return stages
