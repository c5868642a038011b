"""dg.source: op spans recorded while parsing, and the clipped quotes of diagnostics.

`SpanRecordingParser` relies on two non-public parts of xDSL's `Parser`, pinned here:
`_parse_op_result_list()` is the first step of `parse_operation()` and returns with
`_current_token` at the op's name. An xDSL upgrade that changes either fails here first.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.test import Test
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Span

import dg
from dg.runtime.program import Program, load_dghw
from dg.source import MAX_WIDTH, LocatedParseError, parse_module, quote

TEXT = """\
func.func @f(%a: i32) -> i32 {
  %r:2 = "test.op"(%a) : (i32) -> (i32, i32)
  "test.op"() ({
    %inner = "test.op"() : () -> i32
  }) : () -> ()
  func.return %a : i32
}
"""


def context() -> Context:
    ctx = Context()
    for dialect in (Builtin, Func, Test):
        ctx.load_dialect(dialect)
    return ctx


def test_parser_has_the_private_members_dg_uses() -> None:
    assert "_parse_op_result_list()" in inspect.getsource(Parser.parse_operation)
    parser = Parser(context(), "%r, %s:2 = test.op", "x")
    parser._parse_op_result_list()
    assert parser._current_token.span.text == "test.op"


def test_every_parsed_op_has_the_span_of_its_name() -> None:
    module, source_map = parse_module(context(), TEXT, "f.mlir")
    where = {
        op.name + (f"@{i}" if op.name == "test.op" else ""): str(span.get_location())
        for i, op in enumerate(module.walk())
        if (span := source_map.span(op)) is not None
    }
    assert where == {
        "func.func": "f.mlir:1:1",
        "test.op@2": "f.mlir:2:10",
        "test.op@3": "f.mlir:3:3",
        "test.op@4": "f.mlir:4:14",
        "func.return": "f.mlir:6:3",
    }
    assert source_map.span(module) is None  # the implicit module has no text


def test_line_offset_counts_the_lines_before_a_chunk() -> None:
    module, source_map = parse_module(context(), TEXT, "f.mlir", line_offset=10)
    span = source_map.span(next(iter(module.ops)))
    assert span is not None and str(span.get_location()) == "f.mlir:11:1"


@pytest.mark.parametrize("column", [0, 50, 79, 80, 5_000, 9_990])
def test_a_long_line_is_clipped_around_the_span(column: int) -> None:
    line = "".join(chr(ord("a") + i % 26) for i in range(10_000))
    span = span_at(line, column)
    text, carets = quote(span)
    assert len(text) <= MAX_WIDTH + 2 * len("...")
    assert carets.endswith("^") and text[carets.index("^")] == line[column]
    assert text.startswith("...") == (column >= MAX_WIDTH - MAX_WIDTH // 3)


def span_at(line: str, column: int) -> Span[str]:
    """A one-character span of `line` (a file of that one line)."""
    return Span(column, column + 1, Input(line + "\n", "long.mlir"))


def test_a_short_line_is_quoted_whole() -> None:
    span = span_at("%x = foo.bar", 5)
    assert quote(span) == ["%x = foo.bar", "     ^"]


def test_load_reports_a_parse_error_at_its_line_clipped(tmp_path: Path) -> None:
    path = tmp_path / "m.mlir"
    weights = "0x" + "7F" * 100_000
    path.write_text(
        "func.func @main() {\n"
        f'  %w = dghw.constant {{value = dense<"{weights}"> : tensor<100000xi8>}} : '
        "tensor<100000xi8> oops\n}\n"
    )
    with pytest.raises(LocatedParseError) as caught:
        dg.load(path)
    assert isinstance(caught.value, ParseError)
    lines = str(caught.value).splitlines()
    assert lines[0].startswith(f"{path}:")
    assert all(len(line) < 2 * MAX_WIDTH for line in lines)


def test_load_reports_a_verifier_error_at_the_op(tmp_path: Path) -> None:
    path = tmp_path / "m.mlir"
    path.write_text(
        "func.func @main(%acc: tensor<?x4xi32>) -> tensor<?x4xi8> {\n"
        "  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = array<i32: 99>, "
        "input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32}"
        " : tensor<?x4xi32> -> tensor<?x4xi8>\n"
        "  func.return %r : tensor<?x4xi8>\n}\n"
    )
    with pytest.raises(VerifyException) as caught:
        Program.load(path)
    lines = str(caught.value).splitlines()
    assert lines[0] == (
        f"{path}:2:8: error: 'dghw.rescale' op shifts must lie in [2, 62] (TOSA SINGLE_ROUND)"
    )
    assert lines[2] == " " * 7 + "^" * len("dghw.rescale")


@pytest.mark.parametrize(
    ("op", "stage", "hint"),
    [
        ("dgtorch.relu", "dgtorch", "dg-opt m.dgtorch.mlir -p dg-pipeline -o m.dghw.mlir"),
        ("dgq.relu", "dgq", "dg-opt m.dgtorch.mlir -p dg-pipeline -o m.dghw.mlir"),
        ("tosa.add", "TOSA", "run that dghw module instead"),
    ],
)
def test_a_module_of_another_stage_says_which(op: str, stage: str, hint: str) -> None:
    text = f'func.func @main() {{\n  %x = "{op}"() : () -> i32\n}}\n'
    with pytest.raises(LocatedParseError) as caught:
        load_dghw(text, "m.dgtorch.mlir")
    assert f"'m.dgtorch.mlir' is a {stage} module and dg runs dghw modules" in str(caught.value)
    assert hint in str(caught.value)
