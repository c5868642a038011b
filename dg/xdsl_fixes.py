"""Fixes dg applies to the pinned xDSL (imported with `dg`, so every dg tool and the
`xdsl.universe` entry point that plain `xdsl-opt` loads get them).

- **A string literal that never closes hung the lexer.** xDSL's pattern for a
  string literal, ``"(?:[^"\\\n\v\f]+|\\(?:...))*"``, nests a ``+`` inside a
  ``*``: on an unterminated literal Python's regex engine tries every way of
  splitting the characters between the two loops before it fails, 2^n for n
  characters (a 40-character line: hours). `make fuzz` found it as a mutated
  ``.mlir`` input on which `dg-opt` never returned. The same pattern with
  possessive loops (Python >= 3.11) matches exactly the same literals: no
  character that ends a run or an escape can start the closing quote, so
  giving characters back never lets the quote match; it fails in linear time.
- **A huge splat took the parser down.** xDSL expands a splat to every element
  of its type, ``dense<1.0> : tensor<2147483647xf32>`` included (`make fuzz`
  again: a mutated shape), as Python values. dg-opt refuses, as a parse error at
  the type before anything is allocated, a literal of more than
  `MAX_DENSE_ELEMENTS` elements that the file does not spell out: one with fewer
  characters than elements. A literal whose elements are all in the file (a
  weight's hex bytes: VGG-16's first Linear has 102.8 M) costs memory in
  proportion to the file, so it is never refused, whatever its size.
- **Printing a big dense literal unpacked every element.** xDSL's printer reads
  a dense attribute's values as Python numbers (twice: once to test for a splat)
  before it prints a long one as the hex of its bytes: VGG-16's weights took
  20 s and 4 GB. `_print_dense` tests for a splat on the bytes and prints the
  same text from the bytes alone.
- **Reading a big string literal copied it a dozen times.** The lexer matches a
  string literal with a regex, then slices its text to look for escapes, and
  `StringLiteral` slices it again to check its quotes and to unescape it: a
  205 MB hex literal took seconds. A literal without escapes (every hex
  literal) is found with `str.find` and read with one slice; one with escapes
  takes xDSL's own path.
- **A big hex literal took five times its bytes to read, and twice to print.**
  xDSL copies a dense literal's hex text twice (its contents, then without the
  "0x") before `bytes.fromhex`; the printer makes the hex string, then its
  upper-case copy. VGG-16's first Linear (102.8 M bytes, 205 MB of hex) took
  510 MB to load and 410 MB to save, on top of the file's text. `_dense_elements`
  decodes the hex from the file's text a chunk at a time into a `BytesIO`, whose
  buffer CPython hands over without a copy (`getvalue`), and `_print_dense`
  writes the hex a chunk at a time: about the literal's bytes, once.
"""

from __future__ import annotations

import io
import math
import re
from typing import Any

from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, TensorType
from xdsl.parser.attribute_parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Position, Token
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken, MLIRTokenKind, StringLiteral

from dg.resources import CHUNK_BYTES, write_upper_hex

STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')
"""xDSL's string-literal pattern with possessive loops (module docstring)."""


MAX_DENSE_ELEMENTS = 1 << 26
"""Largest dense literal dg-opt expands from fewer characters than elements (67,108,864
elements): a splat, or a hex value of one element, repeated by xDSL."""

_parse_dense_literal_type = AttrParser._parse_dense_literal_type
_parse_dense_elements = AttrParser.parse_dense_int_or_fp_elements_attr
_print_dense_without_type = DenseIntOrFPElementsAttr.print_without_type

PRINT_AS_HEX_ABOVE = 100
"""xDSL prints a dense literal of more elements than this as the hex of its bytes."""


HEX_CHUNK_CHARACTERS = 2 * CHUNK_BYTES
"""Characters of a hex literal decoded (or printed) at a time: a resource blob's chunk."""

HEX_LITERAL_START = re.compile(r'\s*"0x')
"""After a dense literal's `<`: the opening of a hex literal."""


def _dense_elements(self: AttrParser, type: Any) -> Any:
    """xDSL's `parse_dense_int_or_fp_elements_attr`, noting where the literal starts; a hex
    literal without escapes is decoded from the text in chunks (module docstring)."""
    self._dg_dense_literal_start = self.pos  # type: ignore[attr-defined]
    content = self.lexer.input.content
    after = self._current_token.span.end
    at_less = isinstance(content, str) and self._current_token.text == "<"
    opening = HEX_LITERAL_START.match(content, after) if at_less else None
    if opening is None:
        return _parse_dense_elements(self, type)
    start = opening.end() - 3  # the opening quote
    end = content.find('"', start + 1)  # the closing quote
    if end < 0 or any(content.find(c, start + 1, end) >= 0 for c in _UNESCAPED_ENDS):
        return _parse_dense_elements(self, type)
    self.parse_punctuation("<", " in dense attribute")
    self._consume_token(MLIRTokenKind.STRING_LIT)
    self.parse_punctuation(">", " in dense attribute")
    # From here on as xDSL's hex case, on the same text, with the same messages.
    if type is None:
        self.parse_punctuation(":", " in dense attribute")
        type = self._parse_dense_literal_type()
    elements = math.prod(type.get_shape())
    try:
        data = _hex_bytes(content, start + 3, end)
    except ValueError:
        self.raise_error("Hex string in denseAttr is invalid")
    if len(data) == type.element_type.compile_time_size:  # a splat
        data *= elements
    attr = DenseIntOrFPElementsAttr(type, BytesAttr(data))
    if elements != len(attr):
        self.raise_error(
            f"Shape mismatch in dense literal. Expected {elements} "
            f"elements from the type, but got {len(attr)} elements."
        )
    return attr


def _hex_bytes(text: str, start: int, end: int) -> bytes:
    """`bytes.fromhex(text[start:end])`, decoded `HEX_CHUNK_CHARACTERS` at a time.

    `BytesIO.getvalue` returns the buffer it grew in place (CPython), so the
    bytes exist once. `fromhex` skips whitespace between byte pairs, which can
    put a pair across two chunks: then the text is decoded whole, like xDSL does.
    """
    buffer = io.BytesIO()
    try:
        for chunk in range(start, end, HEX_CHUNK_CHARACTERS):
            buffer.write(bytes.fromhex(text[chunk : min(end, chunk + HEX_CHUNK_CHARACTERS)]))
    except ValueError:
        return bytes.fromhex(text[start:end])
    return buffer.getvalue()


def _bounded_dense_literal_type(self: AttrParser) -> Any:
    """xDSL's `_parse_dense_literal_type`, refusing a type beyond `MAX_DENSE_ELEMENTS` elements
    unless the literal before it has at least one character per element (module docstring)."""
    start = self.pos
    literal_type = _parse_dense_literal_type(self)
    elements = math.prod(literal_type.get_shape())
    written = start - getattr(self, "_dg_dense_literal_start", start)
    if elements > MAX_DENSE_ELEMENTS and elements > written:
        self.raise_error(
            f"dense literal of {elements} elements written in {written} characters: dg-opt "
            f"expands at most {MAX_DENSE_ELEMENTS} elements from a splat",
            start,
            self.pos,
        )
    return literal_type


def _print_dense(self: DenseIntOrFPElementsAttr, printer: Printer) -> None:
    """xDSL's `print_without_type`, the same text, without unpacking a big literal's values."""
    data = self.data.data
    size = self.get_element_type().compile_time_size
    view = memoryview(data)
    if len(self) <= PRINT_AS_HEX_ABOVE:
        _print_dense_without_type(self, printer)
    elif view[size:] == view[:-size]:  # a splat: every element equals the one before it
        one = DenseIntOrFPElementsAttr(
            TensorType(self.get_element_type(), [1]), BytesAttr(data[:size])
        )
        printer.print_string("dense<")
        one._print_one_elem(one.get_values()[0], printer)
        printer.print_string(">")
    else:
        printer.print_string('dense<"0x')
        write_upper_hex(printer.print_string, data, HEX_CHUNK_CHARACTERS // 2)
        printer.print_string('">')


_lex_string_literal = MLIRLexer._lex_string_literal
_string_contents: property = vars(StringLiteral)["string_contents"]
_UNESCAPED_ENDS = ("\\", "\n", "\v", "\f")
"""What ends a run of plain characters in a string literal, besides its closing quote."""


def _fast_lex_string_literal(self: MLIRLexer, start_pos: Position) -> MLIRToken:
    """xDSL's `_lex_string_literal`: the same token, found with `str.find` when the literal
    has no escape (no backslash before its closing quote, and no line break)."""
    content = self.input.content
    end = content.find('"', start_pos + 1) if isinstance(content, str) else -1
    if end < 0 or any(content.find(c, start_pos + 1, end) >= 0 for c in _UNESCAPED_ENDS):
        return _lex_string_literal(self, start_pos)
    self.pos = end + 1
    return Token(MLIRTokenKind.STRING_LIT, StringLiteral(start_pos, self.pos, self.input))


def _checked_quotes(self: StringLiteral) -> None:
    """`StringLiteral.__post_init__`, reading its two quotes, not a copy of its text."""
    content = self.input.content
    if len(self) < 2 or content[self.start : self.start + 1] not in ('"', b'"'):
        raise ParseError(self, "Invalid string literal!")
    if content[self.end - 1 : self.end] not in ('"', b'"'):
        raise ParseError(self, "Invalid string literal!")


def _string_contents_without_escapes(self: StringLiteral) -> str:
    """`StringLiteral.string_contents`: the text between the quotes when it has no escape."""
    content = self.input.content
    if isinstance(content, str) and content.find("\\", self.start, self.end) < 0:
        return content[self.start + 1 : self.end - 1]
    assert _string_contents.fget is not None
    return _string_contents.fget(self)


def apply() -> None:
    MLIRLexer._unescaped_characters_regex = STRING_LITERAL
    MLIRLexer._lex_string_literal = _fast_lex_string_literal  # type: ignore[method-assign]
    StringLiteral.__post_init__ = _checked_quotes  # type: ignore[method-assign]
    StringLiteral.string_contents = property(_string_contents_without_escapes)  # type: ignore[assignment,method-assign]
    AttrParser._parse_dense_literal_type = _bounded_dense_literal_type  # type: ignore[method-assign]
    AttrParser.parse_dense_int_or_fp_elements_attr = _dense_elements  # type: ignore[method-assign]
    DenseIntOrFPElementsAttr.print_without_type = _print_dense  # type: ignore[method-assign]
