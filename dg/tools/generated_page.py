"""The command line shared by dg's generated documentation pages.

Each generator (`gen_docs`, `gen_supported_ops`) renders one Markdown page
from the code; this writes it, or with `--check` fails with a diff when the
committed page is stale, so tests and CI catch docs that drifted from code.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def page_main(
    prog: str,
    description: str,
    generate: Callable[[], str],
    default_output: Path,
    args: Sequence[str] | None = None,
) -> int:
    """Write the page `generate()` renders, or check (`--check`) that it is current."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--check", action="store_true", help="only check the page is current")
    parser.add_argument("-o", "--output", type=Path, default=default_output)
    options = parser.parse_args(args)

    page = generate()
    if not options.check:
        options.output.write_text(page)
        return 0
    committed = options.output.read_text() if options.output.exists() else ""
    if committed == page:
        return 0
    diff = difflib.unified_diff(
        committed.splitlines(keepends=True),
        page.splitlines(keepends=True),
        fromfile=f"{options.output} (committed)",
        tofile=f"{options.output} (generated)",
    )
    sys.stderr.writelines(diff)
    print(
        f"{prog}: error: {options.output} is out of date; run `python -m dg.tools.{prog}`",
        file=sys.stderr,
    )
    return 1
