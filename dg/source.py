"""Where each op of a parsed module came from, and MLIR-style diagnostics that quote it.

xDSL keeps a source position on an op only when the text gives it a `loc(...)`.
`parse_module` parses with `SpanRecordingParser`, which also records the span of
every op's name in the text it was parsed from (`SourceMap`), so a verifier
error or a pass failure on any parsed op points at ``file:line:col`` and quotes
the line, whether or not the op has a `loc(...)`:

    bad.mlir:2:8: error: 'dghw.rescale' op shifts must lie in [2, 62]
      %r = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = ...
           ^^^^^^^^^^^^

A quoted line is clipped to `MAX_WIDTH` columns around the span (a saved model's
weights are one hex literal per line, hundreds of megabytes), and so is every
line of an op printed under a diagnostic.
"""

from __future__ import annotations

import linecache
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from io import StringIO
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import MultipleSpansParseError, ParseError, VerifyException
from xdsl.utils.lexer import Span

from dg.lowering.diagnostics import describe_location, user_position
from dg.resources import Blobs, dense_from_blob, read_mlir_text

MAX_WIDTH = 120
"""Columns of source text a diagnostic quotes from one line."""

MAX_OP_LINES = 6
"""Lines of an op a diagnostic prints under `see current operation`."""

ELLIPSIS = "..."


@dataclass
class SourceMap:
    """The span of each parsed op's name in its source text (`SpanRecordingParser`)."""

    spans: dict[Operation, Span[str]] = field(default_factory=dict)
    line_offset: int = 0
    """Lines before the parsed text in its file (a `--split-input-file` chunk's first line)."""

    def span(self, op: Operation) -> Span[str] | None:
        """Where `op` was parsed, or None for an op a pass built."""
        span = self.spans.get(op)
        return None if span is None else replace(span, line_offset=self.line_offset)


class SpanRecordingParser(Parser):
    """xDSL's `Parser`, recording in `source_map` the span of every op's name.

    `_parse_op_result_list` is the first step of `parse_operation` (the op's
    `%results =`); when it returns, the current token is the op's name. Both are
    pinned in test/tools/test_source.py.
    """

    source_map: SourceMap
    _name_spans: list[Span[str]]
    blobs: Blobs
    """The file's builtin resources (`dg.resources.read_mlir`): what `dense_resource<key>` is."""

    def __init__(self, ctx: Context, text: str, name: str, source_map: SourceMap, blobs: Blobs):
        super().__init__(ctx, text, name)
        self.source_map = source_map
        self._name_spans = []
        self.blobs = blobs

    def _parse_builtin_dense_resource_attr(self) -> Any:
        """`dense_resource<key> : type` as the dense attribute of the file's blob (`dg.resources`:
        xDSL would look the key up in its process-wide table of hex strings)."""
        start = self.pos
        self.parse_characters("<", " in dense_resource attribute")
        key = self.parse_identifier(context_msg=" for resource handle")
        self.parse_characters(">", " in dense_resource attribute")
        self.parse_characters(":", " in dense_resource attribute")
        type = self.parse_type()
        if not isinstance(type, TensorType):
            self.raise_error(f"dense_resource needs a tensor type, got {type}", start, self.pos)
        attr = dense_from_blob(key, type, self.blobs)
        if isinstance(attr, str):
            self.raise_error(attr, start, self.pos)
        return attr

    def _parse_op_result_list(self) -> list[tuple[Span[str], int]]:
        results = super()._parse_op_result_list()
        self._name_spans.append(self._current_token.span)  # type: ignore[arg-type]
        return results  # type: ignore[return-value]

    def parse_operation(self) -> Operation:
        op = super().parse_operation()
        self.source_map.spans[op] = self._name_spans.pop()
        return op


def parse_module(
    ctx: Context,
    text: str | bytes,
    name: str,
    *,
    line_offset: int = 0,
    allow_implicit_module: bool = True,
    blobs: Blobs | None = None,
) -> tuple[ModuleOp, SourceMap]:
    """Parse `text` (its first line is line `line_offset + 1` of file `name`), with spans.

    `blobs` are the file's resources when the caller read them (`dg.resources.read_mlir`);
    without, a metadata section in `text` is read here.

    A ParseError keeps xDSL's type; its span carries `line_offset`.
    """
    source_map = SourceMap(line_offset=line_offset)
    try:
        if blobs is None:
            text, blobs = read_mlir_text(text, name)
        source = text.decode("utf-8") if isinstance(text, bytes) else text
        module = SpanRecordingParser(ctx, source, name, source_map, blobs).parse_module(
            allow_implicit_module
        )
    except ParseError as error:
        error.span = replace(error.span, line_offset=line_offset)
        raise
    return module, source_map


def load_module(ctx: Context, text: str | bytes, name: str, blobs: Blobs | None = None) -> ModuleOp:
    """Parse and verify `text`; errors say where: `LocatedParseError`, `LocatedVerifyException`."""
    try:
        module, source_map = parse_module(ctx, text, name, blobs=blobs)
    except ParseError as error:
        raise LocatedParseError(error.span, error.msg) from None
    try:
        module.verify()
    except VerifyException as error:
        raise LocatedVerifyException(verify_diagnostic(module, error, source_map, name)) from None
    return module


class LocatedParseError(ParseError):
    """A ParseError whose text is `parse_diagnostic`'s: located, with a clipped quote."""

    def __str__(self) -> str:
        return parse_diagnostic(self)


class LocatedVerifyException(VerifyException):
    """A VerifyException whose message is a located diagnostic (`verify_diagnostic`)."""


# -- quoting source text ---------------------------------------------------------------


def quote(span: Span[str]) -> list[str]:
    """The line holding `span`'s start, clipped to `MAX_WIDTH` around it, and carets under it."""
    source = span.input
    line_start = source.get_start_of_line(span.start)
    line_end = source.get_end_of_line(span.start)
    if line_end > line_start and source.content[line_end - 1] == "\r":
        line_end -= 1
    start = min(span.start, line_end)
    end = min(max(span.end, start + 1), line_end)
    window_start, window_end = line_start, line_end
    if line_end - line_start > MAX_WIDTH:
        # Keep a third of the window before the span (what leads up to it matters less),
        # unless the line's start fits in the window too.
        lead = MAX_WIDTH // 3 if start - line_start >= MAX_WIDTH - MAX_WIDTH // 3 else MAX_WIDTH
        window_start = max(line_start, start - lead)
        window_end = min(line_end, window_start + MAX_WIDTH)
        window_start = max(line_start, window_end - MAX_WIDTH)
    prefix = ELLIPSIS if window_start > line_start else ""
    suffix = ELLIPSIS if window_end < line_end else ""
    text = prefix + source.content[window_start:window_end] + suffix
    column = len(prefix) + start - window_start
    width = max(1, min(end, window_end) - start)
    return [text, " " * column + "^" * width]


def quote_file_line(location: FileLineColLoc) -> list[str]:
    """The line of a user's source file a `loc(...)` names, if that file can be read."""
    line = linecache.getline(location.filename.data, location.line.data).rstrip("\n")
    if not line:
        return []
    column = location.column.data
    text = clip(line)
    return [text] if column < 1 or column > len(text) else [text, " " * (column - 1) + "^"]


def clip(line: str) -> str:
    return line if len(line) <= MAX_WIDTH else line[: MAX_WIDTH - len(ELLIPSIS)] + ELLIPSIS


def at_span(span: Span[str], severity: str, message: str) -> list[str]:
    """`file:line:col: severity: message`, then the quoted line and carets."""
    return [f"{span.get_location()}: {severity}: {message}", *quote(span)]


# -- diagnostics -------------------------------------------------------------------------


def parse_diagnostic(error: ParseError) -> str:
    """A ParseError as `file:line:col: error: message` and the clipped quote (and its notes)."""
    lines = at_span(error.span, "error", error.msg)  # type: ignore[arg-type]
    if isinstance(error, MultipleSpansParseError):
        if error.ref_text:
            lines.append(error.ref_text.rstrip("\n"))
        for span, note in error.refs:
            lines.extend(at_span(span, "note", note or "here"))  # type: ignore[arg-type]
    return "\n".join(lines)


def op_diagnostic(
    op: Operation, message: str, source_map: SourceMap, fallback: str, *, show_op: bool = True
) -> str:
    """`message` about `op`, at its `loc(...)` and where it was parsed, and the op itself.

    The error is at the op's own location when it has one (the user's model
    source, as mlir-opt does), with a note at the parsed text; else at the
    parsed text; else at `fallback` (the input's name: an op a pass built).
    """
    span = source_map.span(op)
    position = user_position(op.location)
    lines: list[str]
    if position is not None:
        lines = [f"{describe_location(position)}: error: {message}", *quote_file_line(position)]
        if span is not None:
            lines.extend(at_span(span, "note", "parsed here"))
    elif span is not None:
        lines = at_span(span, "error", message)
    else:
        lines = [f"{fallback}: error: {message}"]
    if show_op and not isinstance(op, ModuleOp):
        where = lines[0].split(": error: ", 1)[0]
        lines.append(f"{where}: note: see current operation:")
        lines.extend(op_excerpt(op))
    return "\n".join(lines)


def op_excerpt(op: Operation) -> list[str]:
    """`op` in generic form, its regions elided, at most `MAX_OP_LINES` lines, each clipped."""
    text = StringIO()
    printer = Printer(stream=text, print_generic_format=True)
    if op.regions:
        # The op's header and `...`: its body is not what the diagnostic is about.
        printer.print_op(op.clone_without_regions())
        header = text.getvalue().splitlines()
        return [clip(line) for line in header[:MAX_OP_LINES]] + [ELLIPSIS]
    printer.print_op(op)
    lines = text.getvalue().splitlines()
    shown = [clip(line) for line in lines[:MAX_OP_LINES]]
    return shown + ([ELLIPSIS] if len(lines) > MAX_OP_LINES else [])


def verify_diagnostic(
    module: ModuleOp, error: VerifyException, source_map: SourceMap, fallback: str
) -> str:
    """`error` at the op of `module` that raises it, or at `fallback` if none does."""
    op = find_failing_op(module, error)
    if op is None:
        return f"{fallback}: error: {error}"
    return op_diagnostic(op, f"'{op.name}' op {error}", source_map, fallback)


def find_failing_op(root: Operation, error: VerifyException) -> Operation | None:
    """The op of `root` whose own verifier raises `error`, if one does.

    A VerifyException does not carry its op, so verify op by op, nested ops
    first as `Operation.verify` does, and match the message.
    """
    return next(failing_ops(root.walk(region_first=True), str(error)), None)


def failing_ops(ops: Iterable[Operation], message: str) -> Iterator[Operation]:
    for op in ops:
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as candidate:
            if str(candidate) == message:
                yield op
