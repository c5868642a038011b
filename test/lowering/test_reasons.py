"""Every reason a pass declares is produced by some case of its errors file, and no other.

Each `// -----` case of `test/lowering/<pass>-errors.mlir` is parsed and run
through the pass; the codes of the problems it fails with must be exactly the
codes the pass declares. Adding a pass is one `PASSES` row. Codes are unique
across all passes, so a code names one reason in all of dg.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.parser import Parser
from xdsl.passes import ModulePass

from dg.dialects.dghw import Dghw
from dg.dialects.dgq import Dgq
from dg.dialects.dgtorch import DgTorch
from dg.lowering import convert_dghw_to_tosa, convert_dgq_to_dghw, convert_dgtorch_to_dgq
from dg.lowering.diagnostics import LoweringError, Reason, all_reasons

HERE = Path(__file__).parent

PASSES = [
    pytest.param(
        convert_dgtorch_to_dgq.ConvertDgtorchToDgqPass(),
        "convert-dgtorch-to-dgq-errors.mlir",
        (*all_reasons(convert_dgtorch_to_dgq.PATTERNS), convert_dgtorch_to_dgq.NO_DGQ_EQUIVALENT),
        id="convert-dgtorch-to-dgq",
    ),
    pytest.param(
        convert_dgq_to_dghw.ConvertDgqToDghwPass(),
        "convert-dgq-to-dghw-errors.mlir",
        convert_dgq_to_dghw.REASONS,
        id="convert-dgq-to-dghw",
    ),
    pytest.param(
        # The batch reason comes from the pass option alone (the file's {batch=0} RUN line).
        convert_dghw_to_tosa.ConvertDghwToTosaPass(batch=1),
        "convert-dghw-to-tosa-errors.mlir",
        tuple(r for r in convert_dghw_to_tosa.REASONS if r.code != "tosa-batch-not-positive"),
        id="convert-dghw-to-tosa",
    ),
]
"""(pass, its errors file in test/lowering, the reasons it declares)."""


def _context() -> Context:
    ctx = Context(allow_unregistered=True)  # as the RUN lines' dg-opt does
    for dialect in (Builtin, Func, DgTorch, Dgq, Dghw):
        ctx.load_dialect(dialect)
    return ctx


def produced_codes(pass_: ModulePass, errors_file: Path) -> set[str]:
    """The reason codes of every problem the cases of `errors_file` fail `pass_` with."""
    codes: set[str] = set()
    for case in errors_file.read_text().split("// -----"):
        ctx = _context()
        module = Parser(ctx, case, errors_file.name).parse_module()
        try:
            pass_.apply(ctx, module)
        except LoweringError as error:
            codes |= {problem.reason.code for problem in error.problems}
    return codes


@pytest.mark.parametrize(("pass_", "errors", "reasons"), PASSES)
def test_every_declared_reason_is_produced(
    pass_: ModulePass, errors: str, reasons: Sequence[Reason]
) -> None:
    assert produced_codes(pass_, HERE / errors) == {reason.code for reason in reasons}


def test_reason_codes_are_unique_kebab_case_across_passes() -> None:
    reasons = {r for param in PASSES for r in param.values[2]}  # type: ignore[attr-defined]
    codes = [reason.code for reason in reasons]
    assert len(codes) == len(set(codes)), sorted(codes)
    for code in codes:
        assert code == code.lower() and " " not in code and "_" not in code, code
