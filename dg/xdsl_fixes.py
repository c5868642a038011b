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
"""

from __future__ import annotations

import re

from xdsl.utils.mlir_lexer import MLIRLexer

STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')
"""xDSL's string-literal pattern with possessive loops (module docstring)."""


def apply() -> None:
    MLIRLexer._unescaped_characters_regex = STRING_LITERAL
