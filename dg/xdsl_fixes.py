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
- **A huge dense literal took the parser down.** xDSL stores every element of a
  dense literal as a Python value, a splat ``dense<1.0> : tensor<2147483647xf32>``
  included (`make fuzz` again: a mutated shape). dg-opt refuses a dense literal
  type of more than `MAX_DENSE_ELEMENTS` elements as a parse error at the type,
  before anything is allocated; dg's own weights are far smaller.
"""

from __future__ import annotations

import math
import re
from typing import Any

from xdsl.parser.attribute_parser import AttrParser
from xdsl.utils.mlir_lexer import MLIRLexer

STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')
"""xDSL's string-literal pattern with possessive loops (module docstring)."""


MAX_DENSE_ELEMENTS = 1 << 26
"""Largest dense literal dg-opt parses (67,108,864 elements; ResNet-18's largest weight has
2.4 million)."""

_parse_dense_literal_type = AttrParser._parse_dense_literal_type


def _bounded_dense_literal_type(self: AttrParser) -> Any:
    """xDSL's `_parse_dense_literal_type`, refusing types beyond `MAX_DENSE_ELEMENTS`."""
    start = self.pos
    literal_type = _parse_dense_literal_type(self)
    elements = math.prod(literal_type.get_shape())
    if elements > MAX_DENSE_ELEMENTS:
        self.raise_error(
            f"dense literal of {elements} elements: dg-opt parses at most "
            f"{MAX_DENSE_ELEMENTS} elements per literal (xDSL stores each one, a splat's too)",
            start,
            self.pos,
        )
    return literal_type


def apply() -> None:
    MLIRLexer._unescaped_characters_regex = STRING_LITERAL
    AttrParser._parse_dense_literal_type = _bounded_dense_literal_type  # type: ignore[method-assign]
