"""The op registry is the spec's op table, the importer's handler table follows it, and
docs/supported-ops.md is generated from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dg.dialects.dghw import Dghw
from dg.dialects.dgq import Dgq
from dg.dialects.dgtorch import DgTorch
from dg.frontend.importer import DEQUANTIZE_OPS, HANDLERS, QUANTIZE_OPS
from dg.frontend.ops import overload, targets
from dg.lowering import registry
from dg.lowering.registry import ROWS, Section, Status
from dg.tools import gen_supported_ops

REPO = Path(__file__).resolve().parents[2]
SPEC = Path(__file__).resolve().parent / "data" / "supported-pytorch-ops.txt"
"""The product spec's op table, a verbatim copy kept as test data: the tests read nothing
outside the repository (a user's clone has no ../shared beside it)."""
SHARED_SPEC = REPO / ".." / "shared" / "spec" / "supported-pytorch-ops.txt"
"""The spec itself, beside the clone where there is one (CI, the project's checkouts)."""
COMMITTED_PAGE = REPO / "docs" / "supported-ops.md"
SPEC_SECTIONS = {section.value: section for section in Section if section.value in SPEC.read_text()}


def spec_rows(text: str) -> list[tuple[Section, str, str]]:
    """(section, op, notes) of every row of the spec's tables, in order.

    A table is a section title, maybe a paragraph, a tab-separated header,
    then one row per line up to the next blank line.
    """
    rows: list[tuple[Section, str, str]] = []
    section: Section | None = None
    in_table = False
    for line in text.splitlines():
        if line in SPEC_SECTIONS:
            section, in_table = SPEC_SECTIONS[line], False
        elif not line.strip():
            in_table = False
        elif section is not None and not in_table and "\t" in line:
            in_table = True  # the header row
        elif in_table:
            op, _, notes = line.partition("\t")
            assert section is not None
            rows.append((section, op.strip(), notes.strip()))
    return rows


@pytest.mark.skipif(not SHARED_SPEC.exists(), reason="no ../shared/spec beside the repository")
def test_the_copy_of_the_spec_is_the_spec():
    assert SPEC.read_text() == SHARED_SPEC.read_text(), (
        f"the spec changed: copy {SHARED_SPEC.resolve()} to {SPEC.relative_to(REPO)}, "
        "then bring the registry in line"
    )


def test_spec_parses_into_every_table():
    rows = spec_rows(SPEC.read_text())
    assert {section for section, _, _ in rows} == set(Section) - {Section.BEYOND_SPEC}
    assert (Section.LAYERS, "nn.Linear", "") in rows  # a row without notes
    assert len(rows) == 29


def test_every_spec_row_is_in_the_registry_verbatim():
    registered = [(row.section, row.op, row.notes) for row in ROWS if row.in_spec]
    missing = [row for row in spec_rows(SPEC.read_text()) if row not in registered]
    assert missing == [], f"spec rows missing from lowering/registry/: {missing}"


def test_every_registry_row_is_in_the_spec_or_beyond_it():
    spec = spec_rows(SPEC.read_text())
    in_spec = [(row.section, row.op, row.notes) for row in ROWS if row.in_spec]
    assert in_spec == spec  # same rows, same order
    # dg's own rows are what it supports, and the rejections it adds (negation).
    assert all(row.status is not Status.PLANNED for row in ROWS if not row.in_spec)


def test_rows_say_how_dg_implements_or_rejects_them():
    for row in ROWS:
        if row.status is Status.NOT_SUPPORTED:
            assert row.fix, row.op
            assert not (row.dgtorch or row.dgq or row.dghw), row.op
        elif row in registry.LOGIC_ROWS:
            assert row.dgtorch and row.dghw and not row.dgq, row.op
        elif row in registry.STRUCTURE_ROWS:
            assert not (row.aten or row.dgtorch or row.dgq or row.dghw), row.op
            continue
        elif row.status is Status.SUPPORTED and row is not registry.DROPOUT:
            assert row.dgtorch and row.dgq and row.dghw, row.op
        assert row.aten or row.module_types or row is registry.QUANTIZATION, row.op


def test_every_handler_is_for_an_op_of_the_registry():
    covered = targets(*ROWS) | {overload(name) for name in registry.INTERPOLATE_OTHER_MODES}
    stray = set(HANDLERS) - covered - QUANTIZE_OPS - DEQUANTIZE_OPS
    # getitem unpacks the tuple `_native_batch_norm_legit_no_training` returns.
    assert {str(op) for op in stray} == {"<built-in function getitem>"}


def test_every_supported_op_has_a_handler_and_every_other_op_is_rejected():
    for row in ROWS:
        for op in targets(row):
            if row.status is Status.SUPPORTED:
                assert op in HANDLERS, (row.op, op)
            elif op not in HANDLERS:
                assert registry.rejecting_row(op) is not None, (row.op, op)


def _names(ops: object) -> set[str]:
    return {op.name for op in ops}  # type: ignore[attr-defined]


@pytest.mark.parametrize(("stage", "dialect"), [("dgtorch", DgTorch), ("dgq", Dgq), ("dghw", Dghw)])
def test_linked_dialect_ops_exist(stage, dialect):
    linked = {name for row in ROWS for name in getattr(row, stage)}
    assert linked - _names(dialect.operations) == set()


def test_committed_page_is_current():
    assert COMMITTED_PAGE.read_text() == gen_supported_ops.generate(), (
        "docs/supported-ops.md is out of date; run `.venv/bin/python -m dg.tools.gen_supported_ops`"
    )


def test_page_links_every_row_to_dialect_anchors():
    page = gen_supported_ops.generate()
    dialects_page = (REPO / "docs" / "dialects.md").read_text()
    for row in ROWS:
        (line,) = [line for line in page.splitlines() if line.startswith(f"| {row.op} |")]
        for name in (*row.dgtorch, *row.dgq, *row.dghw):
            assert f"[`{name}`](dialects.md#{name.replace('.', '')})" in line, (row.op, name)
            assert f"### `{name}`" in dialects_page, name


def test_check_flags_a_stale_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    page = tmp_path / "supported-ops.md"
    options = ["--output", str(page)]
    assert gen_supported_ops.main([*options, "--check"]) == 1  # no page yet
    assert gen_supported_ops.main(options) == 0
    assert gen_supported_ops.main([*options, "--check"]) == 0
    capsys.readouterr()

    page.write_text(page.read_text().replace("dgq.concat", "dgq.concatenate", 1))
    assert gen_supported_ops.main([*options, "--check"]) == 1
    stderr = capsys.readouterr().err
    assert "is out of date" in stderr and "dgq.concatenate" in stderr


def test_the_command_line_checks_the_committed_page():
    command = [sys.executable, "-m", "dg.tools.gen_supported_ops", "--check"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
