"""docs/dialects.md is generated from the dialect definitions and kept current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from xdsl.ir import Dialect

from dg.dialects.dghw import Dghw
from dg.dialects.dgq import Dgq
from dg.dialects.dgtorch import DgTorch
from dg.tools import gen_docs

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "dialects.md"


def test_committed_page_is_current() -> None:
    assert COMMITTED.read_text() == gen_docs.generate(), (
        "docs/dialects.md is out of date; run `.venv/bin/python -m dg.tools.gen_docs`"
    )


def test_page_documents_every_op_and_type() -> None:
    page = gen_docs.generate()
    dialects: list[Dialect] = [DgTorch, Dgq, Dghw]
    for dialect in dialects:
        assert f"## `{dialect.name}`" in page
        for op in dialect.operations:
            op_def = op.get_irdl_definition()  # type: ignore[attr-defined]
            section = page.split(f"### `{op_def.name}`\n", 1)[1].split("\n### ", 1)[0]
            assert op_def.assembly_format in section, op_def.name
            for name in [*(n for n, _ in op_def.operands), *op_def.properties]:
                assert f"| `{name}` |" in section, (op_def.name, name)
        for attr in dialect.attributes:
            assert f"### `!{attr.name}`" in page


def test_check_flags_a_stale_page(tmp_path: Path) -> None:
    page = tmp_path / "dialects.md"
    command = [sys.executable, "-m", "dg.tools.gen_docs", "--output", str(page)]

    assert subprocess.run([*command, "--check"], capture_output=True).returncode == 1
    assert subprocess.run(command).returncode == 0
    assert subprocess.run([*command, "--check"]).returncode == 0

    page.write_text(page.read_text().replace("dgq.conv2d", "dgq.convolution", 1))
    stale = subprocess.run([*command, "--check"], capture_output=True, text=True)
    assert stale.returncode == 1
    assert "is out of date" in stale.stderr
    assert "dgq.convolution" in stale.stderr


def test_supported_ops_page_keeps_the_spec_text_and_says_what_dg_does() -> None:
    from dg.tools import gen_supported_ops

    row = next(line for line in gen_supported_ops.generate().splitlines() if "Dilated" in line)
    assert "is not caught at export, so avoid it." in row  # the spec's words
    assert "<br>**dg:** Dilation (dilation != 1) is not supported; dg rejects it at export." in row
