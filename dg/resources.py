"""Big constants as MLIR dialect resources: `dense_resource<key>` in the module text, the bytes
in the file's metadata section, as mlir-opt writes them:

    %1 = dghw.constant {value = dense_resource<constant_0> : tensor<4096x25088xi8>} : ...
    ...
    {-#
      dialect_resources: {
        builtin: {
          constant_0: "0x01000000A1F3..."
        }
      }
    #-}

A blob is MLIR's encoding: the hex of its alignment (a little-endian uint32, here the element's
byte size), then the hex of the raw little-endian elements. `Program.save` and dg-opt's
output write every constant of more than `RESOURCE_ABOVE_BYTES` bytes so (`to_resources`,
`write_resources`, the hex written a chunk at a time); the module text stays small and
readable, and a file is valid MLIR text. dg-opt's `--mlir-elide-elementsattrs-if-larger`
prints a constant as `dense_resource<__elided__>` instead (`elide_dense`), as mlir-opt does:
no blob has that key, so such text is for reading only, and the parser says so.

dg reads the section itself, from the file, a chunk at a time (`read_mlir`): the module text
is what the parser sees, and each blob is decoded straight into its bytes, so a load holds
the weights once, never the 277 MB of VGG-16's text beside them. xDSL parses resources too,
but keeps every blob as its hex string (twice the bytes) in a process-wide table on the
builtin dialect, and renames a key that an earlier parse declared (a second `dg.load` of the
same file gets an empty blob): `SpanRecordingParser` (`dg.source`) makes each
`dense_resource<key>` the `dense` attribute of the blob read here instead
(`dense_from_blob`).
"""

from __future__ import annotations

import binascii
import io
import itertools
import math
import re
from collections.abc import Callable, Iterator
from typing import IO, Any, BinaryIO, NoReturn, cast

from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FixedBitwidthType,
    ModuleOp,
    ShapedType,
    TensorType,
)
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input, Span

RESOURCE_ABOVE_BYTES = 1024
"""`Program.save` and dg-opt write a constant of more bytes than this as a resource (a weight; a
bias of 256 i32 is one); a lit test's constants, up to this size, stay inline for FileCheck."""

CHUNK_BYTES = 1 << 21
"""Bytes of a blob encoded (or hex characters decoded) at a time."""

MAX_QUOTED_COLUMN = 1000
"""An error further right on its line (past a blob) quotes the line from there."""

METADATA_START, METADATA_END = b"{-#", b"#-}"
RESOURCE_KEY = re.compile(rb"[A-Za-z_][\w$.-]*")
"""A resource key: MLIR's bare identifier (as a handle, `dense_resource<key>`, prints it)."""

ELIDED_KEY = "__elided__"
"""The handle of a constant printed without its value (mlir-opt's, for the same option)."""

Blobs = dict[str, bytes]
"""A file's builtin resources: key -> the raw bytes (the alignment prefix taken off)."""


def to_resources(module: ModuleOp) -> Iterator[tuple[str, DenseIntOrFPElementsAttr]]:
    """Replace, in `module` (a copy to be printed), each dense property or attribute of more
    than `RESOURCE_ABOVE_BYTES` bytes by `dense_resource<constant_N>`; yield (key, value)."""
    keys = (f"constant_{count}" for count in itertools.count())
    yield from _replace_dense(
        module, lambda value: next(keys) if len(value.data.data) > RESOURCE_ABOVE_BYTES else None
    )


def elide_dense(module: ModuleOp, above_elements: int) -> int:
    """Replace, in `module` (a copy to be printed), each dense property or attribute of more
    than `above_elements` elements by `dense_resource<__elided__>`, as mlir-opt's
    `--mlir-elide-elementsattrs-if-larger` prints it: readable, not parseable (no blob has
    the key, and dg's parser says why, `dense_from_blob`). Returns how many it elided."""
    elided = _replace_dense(
        module, lambda value: ELIDED_KEY if len(value) > above_elements else None
    )
    return sum(1 for _ in elided)


def _replace_dense(
    module: ModuleOp, key_of: Callable[[DenseIntOrFPElementsAttr], str | None]
) -> Iterator[tuple[str, DenseIntOrFPElementsAttr]]:
    """Replace each dense property or attribute that `key_of` gives a key by
    `dense_resource<key>`; yield (key, value)."""
    for op in module.walk():
        for fields in (op.properties, op.attributes):
            for name, value in list(fields.items()):
                if isinstance(value, DenseIntOrFPElementsAttr) and (key := key_of(value)):
                    fields[name] = DenseResourceAttr.from_params(key, cast(ShapedType, value.type))
                    yield key, value


def write_resources(stream: IO[str], blobs: list[tuple[str, DenseIntOrFPElementsAttr]]) -> None:
    """The metadata section holding `blobs`, written a chunk of hex at a time."""
    if not blobs:
        return
    stream.write("\n{-#\n  dialect_resources: {\n    builtin: {\n")
    for index, (key, value) in enumerate(blobs):
        alignment = value.get_element_type().compile_time_size
        stream.write(f'      {key}: "0x{alignment.to_bytes(4, "little").hex().upper()}')
        write_upper_hex(stream.write, value.data.data)
        stream.write('",\n' if index < len(blobs) - 1 else '"\n')
    stream.write("    }\n  }\n#-}\n")


def write_upper_hex(
    write: Callable[[str], Any], data: bytes, chunk_bytes: int = CHUNK_BYTES
) -> None:
    """`write(data.hex().upper())`, `chunk_bytes` at a time: the hex never exists whole."""
    view = memoryview(data)
    for start in range(0, len(view), chunk_bytes):
        write(view[start : start + chunk_bytes].hex().upper())


def dense_from_blob(key: str, type: TensorType, blobs: Blobs) -> DenseIntOrFPElementsAttr | str:
    """The dense attribute of `dense_resource<key> : type`, or why there is none."""
    data = blobs.get(key)
    if data is None and key == ELIDED_KEY:
        return (
            f"dense_resource<{ELIDED_KEY}> is a constant whose value was left out of this text "
            "(dg-opt --mlir-elide-elementsattrs-if-larger): it cannot be parsed back; print "
            "the module without that option"
        )
    if data is None:
        known = ", ".join(sorted(blobs)) or "none"
        return f"no blob '{key}' in the file's dialect_resources (builtin: {known})"
    element = type.get_element_type()
    if not isinstance(element, FixedBitwidthType):
        return f"dense_resource of {element} elements: dg reads integers and floats"
    expected = math.prod(type.get_shape()) * element.compile_time_size
    if len(data) != expected:
        return f"blob '{key}' holds {len(data)} bytes, {type} needs {expected}"
    return DenseIntOrFPElementsAttr(cast(Any, type), BytesAttr(data))


def read_mlir(stream: BinaryIO, name: str) -> tuple[str, Blobs]:
    """The module text of an MLIR file and its builtin resources.

    A line that starts (after blanks) with ``{-#`` opens the metadata section; it is read
    from `stream` (`ResourceReader`) and stands in the text as as many line breaks, so
    every op keeps its line number. The lines are scanned first and the module text read
    after, in one piece when the file has no section: a file with its weights inline (as
    a hand-written or older file may have them) costs its bytes and its text, as a plain read
    does, no more.
    """
    pieces: list[tuple[int, int] | bytes] = []
    """The module text: spans of the file, and the line breaks standing for a section."""
    blobs: Blobs = {}
    line, start = 1, stream.tell()
    while chunk := stream.readline():
        opening = chunk.lstrip()
        if not opening.startswith(METADATA_START):
            line += 1
            continue
        at = stream.tell() - len(opening)
        pieces.append((start, at))
        stream.seek(at)
        reader = ResourceReader(stream, name, line, len(chunk) - len(opening) + 1)
        blobs.update(reader.metadata())
        pieces.append(b"\n" * (reader.line - line))
        line, start = reader.line, stream.tell()  # the rest of the line is module text
    pieces.append((start, stream.tell()))
    return b"".join(_read_piece(stream, piece) for piece in pieces).decode("utf-8"), blobs


def _read_piece(stream: BinaryIO, piece: tuple[int, int] | bytes) -> bytes:
    if isinstance(piece, bytes):
        return piece
    stream.seek(piece[0])
    return stream.read(piece[1] - piece[0])


def read_mlir_text(text: str | bytes, name: str) -> tuple[str, Blobs]:
    """`read_mlir` of text in memory (dg-opt's input, a string given to `parse_dghw`)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    if METADATA_START not in data:
        return (text if isinstance(text, str) else text.decode("utf-8")), {}
    return read_mlir(io.BytesIO(data), name)


class ResourceReader:
    """Reads one ``{-# dialect_resources: {builtin: {key: "0x...", ...}} #-}`` section from a
    stream, decoding each blob a chunk at a time; errors are located ParseErrors."""

    def __init__(self, stream: BinaryIO, name: str, line: int, column: int):
        self.stream, self.name, self.line, self.column = stream, name, line, column

    def metadata(self) -> Blobs:
        self.expect(METADATA_START)
        blobs: Blobs = {}
        while True:
            entry = self.identifier("a metadata key")
            if entry != "dialect_resources":
                self.fail(f"dg reads 'dialect_resources' in file metadata, not '{entry}'")
            self.expect(b":")
            self.expect(b"{")
            while True:
                dialect = self.identifier("a dialect name")
                if dialect != "builtin":
                    self.fail(f"dg reads builtin resources only, not '{dialect}' ones")
                self.expect(b":")
                self.resources(blobs)
                if not self.optional(b","):
                    break
            self.expect(b"}")
            if not self.optional(b","):
                break
        self.expect(METADATA_END)
        return blobs

    def resources(self, blobs: Blobs) -> None:
        """``{key: "0x...", ...}`` into `blobs`."""
        self.expect(b"{")
        if self.optional(b"}"):
            return
        while True:
            key = self.identifier("a resource key")
            if key in blobs:
                self.fail(f"resource '{key}' is defined twice")
            self.expect(b":")
            blobs[key] = self.blob()
            if not self.optional(b","):
                break
        self.expect(b"}")

    def blob(self) -> bytes:
        """A blob string, decoded: its alignment checked and taken off."""
        self.expect(b'"0x')
        header = self.stream.read(8)
        if len(header) < 8 or not re.fullmatch(rb"[0-9A-Fa-f]{8}", header):
            self.fail("a blob starts with the hex of its alignment (4 bytes)")
        alignment = int.from_bytes(binascii.unhexlify(header), "little")
        if alignment == 0 or alignment & (alignment - 1):
            self.fail(f"a blob's alignment must be a power of two, not {alignment}")
        self.column += 11
        data = io.BytesIO()
        odd = b""
        while True:
            chunk = odd + self.stream.read(CHUNK_BYTES * 2)
            end = chunk.find(b'"')
            if end < 0 and len(chunk) == len(odd):
                self.fail("the blob string never closes")
            digits = chunk if end < 0 else chunk[:end]
            if b"\n" in digits:
                self.fail("the blob string never closes on its line")
            usable = len(digits) - len(digits) % 2 if end < 0 else len(digits)
            try:
                data.write(binascii.unhexlify(digits[:usable]))
            except binascii.Error:
                self.fail("a blob holds hex digits only, an even number of them")
            self.column += usable
            if end >= 0:
                self.stream.seek(end + 1 - len(chunk), io.SEEK_CUR)
                self.column += 1
                return data.getvalue()
            odd = digits[usable:]

    def skip_blanks(self) -> None:
        while True:
            c = self.stream.read(1)
            if c == b"\n":
                self.line, self.column = self.line + 1, 1
            elif c in (b" ", b"\t", b"\r"):
                self.column += 1
            else:
                if c:
                    self.stream.seek(-1, io.SEEK_CUR)
                return

    def optional(self, token: bytes) -> bool:
        self.skip_blanks()
        start = self.stream.tell()
        if self.stream.read(len(token)) == token:
            self.column += len(token)
            return True
        self.stream.seek(start)
        return False

    def expect(self, token: bytes) -> None:
        if not self.optional(token):
            self.fail(f"expected '{token.decode()}' in the file metadata")

    def identifier(self, what: str) -> str:
        self.skip_blanks()
        start = self.stream.tell()
        head = self.stream.read(256)
        match = RESOURCE_KEY.match(head)
        if match is None:
            self.stream.seek(start)
            self.fail(f"expected {what} in the file metadata")
        self.stream.seek(start + match.end())
        self.column += match.end()
        return match.group().decode()

    def fail(self, message: str) -> NoReturn:
        """Raise a ParseError at the current line and column (the quote shows what follows)."""
        at = self.stream.tell()
        following = self.stream.read(80).split(b"\n")[0].decode("utf-8", "replace")
        self.stream.seek(at)
        if self.column > MAX_QUOTED_COLUMN:  # after a blob: quote what follows, say where
            message = f"{message} (column {self.column})"
        content = "\n" * (self.line - 1) + " " * min(self.column - 1, MAX_QUOTED_COLUMN) + following
        start = len(content) - len(following)
        raise ParseError(Span(start, start + 1, Input(content, self.name)), message)
