"""`dg-opt`: xdsl-opt with dg's dialects and passes, and diagnostics instead of tracebacks."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import ClassVar

from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

import dg


class DgOptMain(xDSLOptMain):
    """The dg optimizer driver. Options and conventions are xdsl-opt's."""

    version_format: ClassVar[str] = f"dg-opt {dg.__version__} (xdsl {{xdsl_version}})"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="dg modular optimizer driver", args=args)


def main(args: Sequence[str] | None = None) -> int:
    """Run dg-opt; a bad input prints its diagnostic and exits 1, without a traceback."""
    try:
        DgOptMain(args).run()
    except (ParseError, DiagnosticException, VerifyException) as error:
        print(f"error: {error}", file=sys.stderr)
        # xDSL attaches the annotated IR of a failing op as exception notes.
        for note in getattr(error, "__notes__", ()):
            print(note, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
