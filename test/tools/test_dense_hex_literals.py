"""dg.xdsl_fixes reads and prints hex dense literals a chunk at a time: the same attributes,
text and errors as xDSL's own parser and printer, whatever the chunk size."""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.parser import Parser
from xdsl.parser.attribute_parser import AttrParser
from xdsl.utils.exceptions import ParseError

from dg import xdsl_fixes

LITERALS = [
    'dense<"0x0102FF80"> : tensor<4xi8>',
    'dense<"0xabcdef01"> : tensor<2xi16>',
    'dense<"0x01"> : tensor<4xi8>',  # a splat
    'dense<  "0x0102"> : tensor<2xi8>',
    'dense<"0x01 02 0304"> : tensor<4xi8>',  # fromhex skips spaces between pairs
    'dense<"0x0G"> : tensor<1xi8>',  # not hex
    'dense<"0x010"> : tensor<2xi8>',  # an odd digit count
    'dense<"0x010203"> : tensor<2xi8>',  # more bytes than the type holds
    'dense<"0x0102\\41"> : tensor<3xi8>',  # an escape: xDSL's own path
    'dense<"abcd"> : tensor<1xi8>',  # no 0x: xDSL's own path
    "dense<[1, 2]> : tensor<2xi8>",
]


def parsed(text: str) -> DenseIntOrFPElementsAttr | str:
    """The attribute `text` parses to, or the parse error's message."""
    try:
        return Parser(Context(), text).parse_attribute()  # type: ignore[return-value]
    except ParseError as error:
        return str(error)


@pytest.mark.parametrize("chunk", [2, 3, 4, xdsl_fixes.HEX_CHUNK_CHARACTERS])
@pytest.mark.parametrize("literal", LITERALS)
def test_chunked_hex_parse_matches_xdsl(literal, chunk, monkeypatch) -> None:
    ours = parsed_with_chunk(literal, chunk, monkeypatch)
    monkeypatch.setattr(
        AttrParser, "parse_dense_int_or_fp_elements_attr", xdsl_fixes._parse_dense_elements
    )
    assert ours == parsed(literal)


def parsed_with_chunk(literal: str, chunk: int, monkeypatch) -> DenseIntOrFPElementsAttr | str:
    with monkeypatch.context() as patch:
        patch.setattr(xdsl_fixes, "HEX_CHUNK_CHARACTERS", chunk)
        return parsed(literal)


@pytest.mark.parametrize("chunk", [2, 6, xdsl_fixes.HEX_CHUNK_CHARACTERS])
def test_chunked_hex_print_matches_xdsl(chunk, monkeypatch) -> None:
    attr = parsed('dense<"0x' + "".join(f"{i:02x}" for i in range(256)) * 3 + '"> : tensor<768xi8>')
    assert isinstance(attr, DenseIntOrFPElementsAttr)
    monkeypatch.setattr(xdsl_fixes, "HEX_CHUNK_CHARACTERS", chunk)
    ours = str(attr)
    monkeypatch.setattr(
        DenseIntOrFPElementsAttr, "print_without_type", xdsl_fixes._print_dense_without_type
    )
    assert ours == str(attr)
    assert parsed(ours) == attr
