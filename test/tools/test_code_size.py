"""dg stays small-moduled: no module outside dialects/ over 600 lines, no function over 60.

The dialect modules hold one declarative op class per dghw/dgq/dgtorch op, which xDSL's own
dialects keep together too; their functions are held to the same 60 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("dialects", "lowering", "frontend", "runtime", "dg", "test", "bench", "examples")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60


def python_files() -> list[Path]:
    return sorted(f for d in SOURCE_DIRS for f in (REPO / d).rglob("*.py"))


def test_no_module_outside_the_dialects_is_longer_than_600_lines():
    long = {
        str(f.relative_to(REPO)): n
        for f in python_files()
        if f.relative_to(REPO).parts[0] != "dialects"
        and (n := len(f.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_function_is_longer_than_60_lines():
    long = {}
    for f in python_files():
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long[f"{f.relative_to(REPO)}:{node.lineno} {node.name}"] = length
    assert long == {}
