"""dg-opt on broken variants of the lit inputs: a diagnostic and a non-zero exit, or a valid
module, and never a Python traceback (issue 5, section 4).

`make test` runs a fixed, derandomized set of `MUTANTS` mutants in process and a few
through the installed command; `make fuzz` runs many more (`test/fuzz/run_fuzz.py`).
The tracebacks the fuzzer found are regression tests next to the code they
fixed (`test/tools/test_dg_opt.py`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from mlir_mutations import (
    Mutant,
    check_mutant,
    mutants,
    run_dg_opt_subprocess,
    run_line_options,
    source_text,
    sources,
)

MUTANTS = int(os.environ.get("DG_FUZZ_MUTANTS", "60"))

BOUNDED = settings(
    max_examples=MUTANTS,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@BOUNDED
@given(mutants())
def test_mutated_input_is_diagnosed_or_valid(mutant: Mutant) -> None:
    outcome = check_mutant(mutant)
    assert outcome.passed, f"{outcome.kind}: {mutant}\n{outcome.detail}"


def test_every_lit_input_is_a_mutation_source() -> None:
    assert {s.path for s in sources()} >= {
        "dialects/dghw/ops.mlir",
        "dialects/dgq/ops-invalid.mlir",
        "lowering/dg-pipeline.mlir",
        "runtime/dg-run.mlir",
    }
    # The pipeline files are mutated under the passes their RUN lines name.
    assert any("dg-pipeline" in " ".join(s.options) for s in sources())


def test_run_lines_output_files_are_not_mutants_options() -> None:
    """A RUN line's `-o %t...` is lit's file: a mutant run in process would write it into the
    working directory under that literal name."""
    text = (
        "// RUN: dg-opt %s --split-input-file -o %t.1.mlir\n"
        "// RUN: dg-opt %s --output-file=%t.mlir -p canonicalize | filecheck %s\n"
    )
    assert run_line_options(text) == [("--split-input-file",), ("-p", "canonicalize")]
    resources = next(s for s in sources() if s.path == "tools/dg-opt-resources.mlir")
    assert not any("%t" in option for option in resources.options)


@pytest.mark.parametrize(
    ("path", "marker", "options"),
    [
        ("lowering/dg-pipeline.mlir", "dgtorch.conv2d", ("-p", "dg-pipeline")),
        ("dialects/dghw/ops.mlir", "dghw.conv2d", ()),
    ],
)
def test_truncated_input_through_the_command(path: str, marker: str, options, tmp_path: Path):
    text = source_text(path)
    cut = text.index(marker, text.index("func.func")) + len(marker)  # in the middle of an op
    outcome = run_dg_opt_subprocess(text[:cut], options, tmp_path)
    assert outcome.kind == "diagnosed", outcome.detail


def test_out_of_range_literal_through_the_command(tmp_path: Path) -> None:
    # The mutation that found the ValueError traceback (dense<-129> : tensor<i8>).
    text = source_text("dialects/dghw/ops.mlir")
    mutated = text.replace("dense<[[[[1, -128]]]", "dense<[[[[1, -129]]]", 1)
    assert mutated != text
    outcome = run_dg_opt_subprocess(mutated, (), tmp_path)
    assert outcome.kind == "diagnosed", outcome.detail


def test_a_mutant_dg_opt_never_finishes_is_a_hang(monkeypatch) -> None:
    """The fuzzer reports a hang instead of stalling on it (dg-opt's handlers cannot hide it)."""
    import mlir_mutations

    def spin(args):
        try:
            while True:
                pass
        except Exception:  # dg-opt turns errors into diagnostics; the alarm is not one
            return 1

    monkeypatch.setattr(mlir_mutations, "HANG_SECONDS", 1)
    monkeypatch.setattr(mlir_mutations.dg_opt, "main", spin)
    source = sources()[0]
    outcome = check_mutant(Mutant(source, "unchanged", source_text(source.path)))
    assert outcome.kind == "hang" and not outcome.passed
