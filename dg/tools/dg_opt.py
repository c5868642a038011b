"""`dg-opt`: xdsl-opt with dg's dialects and passes, and diagnostics instead of tracebacks.

Options and conventions are xdsl-opt's (`-p 'pass{opt=v},...'`, `--split-input-file`,
`--verify-diagnostics`, `--parsing-diagnostics`, `--print-op-generic`, `-o`).
What dg-opt adds is how bad input is reported: a parse error, an op that does not
verify and a pass that gives up (`PassFailedException` or any other xDSL
`DiagnosticException`) each print one MLIR-style diagnostic,
``file:line:col: error: message``, and exit with status 1; a bad command line
exits with status 2, as argparse does. Python tracebacks are left for bugs in
dg itself.

The location of an op that does not verify is its `loc(...)`. A pass cannot
hand its op to the driver through an exception, so a pass that knows where the
problem is starts its message with the location: ``model.py:12:3: message``.
Without a location the diagnostic names the input file.

Big constants print as `Program.save` writes them: every dense constant of more than
`RESOURCE_ABOVE_BYTES` (1 KiB: a weight) as `dense_resource<constant_N>`, its bytes in a
`{-# dialect_resources #-}` section after the module (`dg.resources`), whatever form the
input had. dg's parser resolves a resource into a plain `dense` attribute, so the IR
cannot remember which constants came in as resources, and the form of a constant built by a
pass (a transposed weight) is the form of the file it will be saved in; so the rule is
the size, one rule for every file dg writes. Output is then what it was read from: a saved
program through dg-opt without passes comes out the same, small constants (a lit test's)
stay inline `dense<...>` for FileCheck, and the hex of the weights goes to the output a
chunk at a time, never held whole. `--mlir-elide-elementsattrs-if-larger=N` prints each
constant of more than N elements as `dense_resource<__elided__>` instead (mlir-opt's
option): the module is readable but cannot be parsed back, which dg's parser says.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import IO, BinaryIO, ClassVar, TypeVar, cast

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser.base_parser import BaseParser
from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.printer import Printer
from xdsl.syntax_printer import SyntaxPrinter
from xdsl.utils.arg_spec import parse_pipeline, parse_spec
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.utils.lexer import Span
from xdsl.xdsl_opt_main import xDSLOptMain

import dg
from dg.lowering.diagnostics import LoweringError
from dg.resources import ELIDED_KEY, elide_dense, read_mlir, to_resources, write_resources
from dg.source import (
    SourceMap,
    find_failing_op,
    op_diagnostic,
    parse_diagnostic,
    parse_module,
)
from dg.universe import PASSES as DG_PASSES

PROG = "dg-opt"

MAX_PROBLEMS = 5
"""Ops a failing dg pass reports, of all it could not convert (a module of the wrong stage:
every op)."""

_T = TypeVar("_T")

LEADING_LOCATION = re.compile(
    r"(?P<where>[^\s:][^:\n]*:\d+:\d+): (?:error: )?(?P<message>.*)", re.S
)
"""A pass that knows where the problem is starts its message with `file:line:col: `."""


class ToolError(Exception):
    """A diagnostic about the user's input: `main` prints it and exits with status 1."""


class DgOptMain(xDSLOptMain):
    """The dg optimizer driver: xdsl-opt, reporting bad input as located diagnostics."""

    version_format: ClassVar[str] = f"{PROG} {dg.__version__} (xdsl {{xdsl_version}})"

    _arg_parser: argparse.ArgumentParser
    _running_pass: ModulePass | None
    """The pass being applied, or None while the driver verifies the module."""
    _last_pass: ModulePass | None
    """The pass that produced the module being verified, or None for the input."""
    _source_map: SourceMap
    """Where each op of the chunk being processed was parsed."""
    _output: IO[str]
    """Where the output goes: a module's resources are written there a chunk at a time."""

    def __init__(self, args: Sequence[str] | None = None):
        # The base constructor already builds the pipeline, which reads these.
        self._running_pass = None
        self._last_pass = None
        self._source_map = SourceMap()
        self._output = sys.stdout  # until prepare_output opens -o
        super().__init__(description="dg modular optimizer driver", args=args)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        # Kept to report a bad `-p` spec as a usage error, like xdsl-opt's bad `-t`.
        arg_parser.prog = PROG
        self._arg_parser = arg_parser
        # dg's passes first, in the description; xDSL's stay listed under -p.
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        dg_passes = describe_passes(DG_PASSES)
        arg_parser.description = (
            f"dg modular optimizer driver: xdsl-opt with dg's dialects and passes.\n\n{dg_passes}"
        )
        arg_parser.add_argument(
            "--list-passes",
            action=PrintAndExit,
            text=dg_passes,
            help="print dg's passes and their options, and exit (-p lists every pass)",
        )
        arg_parser.add_argument(
            "--mlir-elide-elementsattrs-if-larger",
            type=non_negative,
            metavar="N",
            help="print each dense constant of more than N elements as "
            f"dense_resource<{ELIDED_KEY}> (as mlir-opt does): readable, but the output cannot "
            "be parsed back. Without it, constants over 1 KiB print as dense_resource<constant_K> "
            "with their bytes in a {-# dialect_resources #-} section after the module, as "
            "Program.save writes them, and read back as they were",
        )

    def register_all_dialects(self) -> None:
        """xdsl-opt's dialects, with dg's extensions in place of the xDSL dialects they extend."""
        from xdsl.universe import Universe

        from dg.universe import DIALECT_EXTENSIONS

        for name, factory in Universe.get_multiverse().all_dialects.items():
            self.ctx.register_dialect(name, DIALECT_EXTENSIONS.get(name, factory))

    def setup_pipeline(self) -> None:
        """xdsl-opt's pipeline, with a bad `-p` a usage error, remembering which pass runs."""
        self._check_pass_specs()
        super().setup_pipeline()
        self.pipeline = PassPipeline(self.pipeline.passes, self._tracking(self.pipeline))

    def _check_pass_specs(self) -> None:
        """Exit with a usage error naming the pass unless every `-p` entry builds a pass."""
        try:
            specs = list(parse_pipeline(self.args.passes))
        except ArgSpecParseError as error:
            self._arg_parser.error(f"argument -p/--passes: {error}")
        for spec in specs:
            if spec.name not in self.available_passes:
                close = difflib.get_close_matches(spec.name, self.available_passes, n=3)
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                self._arg_parser.error(f"argument -p/--passes: unknown pass '{spec.name}'{hint}")
            try:
                self.available_passes[spec.name]().from_pass_spec(spec)
            except ValueError as error:  # options the pass does not have, or bad values
                self._arg_parser.error(f"argument -p/--passes: pass '{spec.name}': {error}")

    def _tracking(self, pipeline: PassPipeline) -> PassPipelineCallbackType:
        """The pipeline's between-passes callback, also recording where the pipeline is."""
        verify = pipeline.callback

        def callback(
            previous_pass: ModulePass | None, module: ModuleOp, next_pass: ModulePass | None
        ) -> None:
            self._running_pass, self._last_pass = None, previous_pass
            if verify is not None:
                verify(previous_pass, module, next_pass)
            self._running_pass = next_pass

        return callback

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        try:
            return super().get_input_stream()
        except OSError as error:
            raise ToolError(
                f"{PROG}: error: cannot open input file '{self.args.input_file}': {error.strerror}"
            ) from error

    def prepare_input(self) -> tuple[list[tuple[IO[bytes], int]], str]:
        try:
            return super().prepare_input()
        except ValueError as error:
            # The only ValueError here: no frontend for the file extension.
            known = ", ".join(f".{ext}" for ext in self.available_frontends)
            raise ToolError(f"{PROG}: error: {error} (known: {known})") from error

    def prepare_output(self) -> IO[str]:
        try:
            self._output = super().prepare_output()
            return self._output
        except OSError as error:
            raise ToolError(
                f"{PROG}: error: cannot open output file '{self.args.output_file}': "
                f"{error.strerror}"
            ) from error

    def output_resulting_program(self, prog: ModuleOp) -> str:
        """The module as xdsl-opt's mlir target prints it, its big constants as resources (or
        elided), written straight to the output; returns what is left to write (nothing).

        xDSL's target would look each printed handle up in the process-wide table of blobs its
        parser keeps (and fails unless the builtin dialect is loaded); dg's section holds this
        module's own constants (`write_resources`).
        """
        if parse_spec(self.args.target).name != "mlir":
            return super().output_resulting_program(prog)
        if self.args.mlir_elide_elementsattrs_if_larger is not None:
            elide_dense(prog, self.args.mlir_elide_elementsattrs_if_larger)
        resources = list(to_resources(prog))  # printed last, so changed in place
        printer_type = SyntaxPrinter if self.args.syntax_highlight else Printer
        printer_type(
            stream=self._output,
            print_generic_format=self.args.print_op_generic,
            print_properties_as_attributes=self.args.print_no_properties,
            print_debuginfo=self.args.print_debuginfo,
        ).print_op(prog)
        # xdsl-opt ends a module with a blank line; Program.save puts the section right there.
        self._output.write("\n")
        write_resources(self._output, resources)
        return "" if resources else "\n"

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        """xdsl-opt's parse, recording where each op is in the input (`dg.source`)."""
        self._source_map = SourceMap(line_offset=start_offset)
        try:
            return parse_reporting_values(lambda: self._parse(chunk, file_extension, start_offset))
        except ParseError as error:
            if self.args.parsing_diagnostics:
                raise  # xdsl-opt prints it and goes on with the next chunk
            error.span = dataclasses.replace(error.span, line_offset=start_offset)
            raise ToolError(parse_diagnostic(error)) from error
        except DiagnosticException as error:
            # Attribute and type verifiers run while parsing and know no location.
            if self.args.verify_diagnostics:
                raise
            raise ToolError(f"{self.get_input_name()}: error: {error}") from error

    def _parse(self, chunk: IO[bytes], file_extension: str, start_offset: int) -> ModuleOp | None:
        frontend = self.args.frontend or file_extension
        if frontend != "mlir":
            return super().parse_chunk(chunk, file_extension, start_offset)
        if chunk.seekable():  # a file: its resources decoded from it a chunk at a time
            text, blobs = read_mlir(cast(BinaryIO, chunk), self.get_input_name())
        else:  # stdin: parse_module reads the section from the text
            text, blobs = chunk.read().decode("utf-8"), None
        module, self._source_map = parse_module(
            self.ctx,
            text,
            self.get_input_name(),
            line_offset=start_offset,
            allow_implicit_module=not self.args.no_implicit_module,
            blobs=blobs,
        )
        return module

    def apply_passes(self, prog: ModuleOp) -> None:
        try:
            super().apply_passes(prog)
        except DiagnosticException as error:
            if self.args.verify_diagnostics:
                raise  # xdsl-opt prints it and goes on with the next chunk
            raise ToolError(self._describe_failure(prog, error)) from error

    def _describe_failure(self, module: ModuleOp, error: DiagnosticException) -> str:
        """MLIR-style diagnostics for `error`, raised by a pass or by verification."""
        if isinstance(error, LoweringError):
            return self._describe_problems(error)
        op = find_failing_op(module, error) if isinstance(error, VerifyException) else None
        if op is None:
            where, message = split_location(str(error))
            return f"{where or self.get_input_name()}: error: {self._in_pass(message)}"
        return op_diagnostic(
            op, self._in_pass(f"'{op.name}' op {error}"), self._source_map, self.get_input_name()
        )

    def _in_pass(self, message: str) -> str:
        """`message`, saying which pass failed or produced the IR that does not verify."""
        if self._running_pass is not None:
            return f"pass '{self._running_pass.name}' failed: {message}"
        if self._last_pass is not None:
            # The input verified, so the pass broke the IR: a bug in the pass.
            return f"{message} (in the IR produced by pass '{self._last_pass.name}')"
        return message

    def _describe_problems(self, error: LoweringError) -> str:
        """Each op a dg pass could not convert (the first `MAX_PROBLEMS`), the first one shown."""
        diagnostics = []
        for i, problem in enumerate(error.problems[:MAX_PROBLEMS]):
            message = f"'{problem.op.name}': {problem.message}"
            if problem.fix:
                message += f" Fix: {problem.fix}"
            diagnostics.append(
                op_diagnostic(
                    problem.op,
                    self._in_pass(message),
                    self._source_map,
                    self.get_input_name(),
                    show_op=i == 0,
                )
            )
        if (hidden := len(error.problems) - MAX_PROBLEMS) > 0:
            diagnostics.append(
                f"{self.get_input_name()}: note: {hidden} more op(s) the pass could not convert "
                "are not shown"
            )
        return "\n".join(diagnostics)


class PrintAndExit(argparse.Action):
    """An option that prints `text` and exits, as --version does."""

    def __init__(self, option_strings: Sequence[str], dest: str, text: str, help: str):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)
        self.text = text

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(self.text)
        parser.exit()


def non_negative(text: str) -> int:
    """An argparse type: a count of at least 0."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of elements >= 0, got '{text}'")
    return value


def describe_passes(passes: Mapping[str, Callable[[], type[ModulePass]]]) -> str:
    """`passes` for --help: each with the first line of its docstring and its options."""
    lines = ["dg's passes (-p 'name{option=value ...}'):"]
    for name, factory in passes.items():
        pass_type = factory()
        summary = " ".join((pass_type.__doc__ or "").strip().split("\n\n")[0].split())
        lines.append(f"  {name}\n      {summary}")
        for option in dataclasses.fields(pass_type):
            help_text = option.metadata.get("help", "")
            lines.append(f"      {option.name} (default {option.default!r}): {help_text}")
    return "\n".join(lines)


def parse_reporting_values(parse: Callable[[], _T]) -> _T:
    """`parse()`, a literal that xDSL rejects with a ValueError turned into a ParseError.

    Some of xDSL's builtin attribute constructors refuse a value the parser read
    (e.g. `dense<-129> : tensor<i8>`: out of range for the element type) by
    raising ValueError, not ParseError. The parser that was reading is still on
    the call stack, at the token after the literal: its position is where the
    user's input is wrong.
    """
    try:
        return parse()
    except (ValueError, OverflowError) as error:
        span = reading_parser_span(error)
        if span is None:
            raise
        raise ParseError(span, str(error)) from error


def reading_parser_span(error: BaseException) -> Span | None:
    """The current token of the innermost xDSL parser on `error`'s stack, if any."""
    span = None
    frame = error.__traceback__
    while frame is not None:
        reader = frame.tb_frame.f_locals.get("self")
        if isinstance(reader, BaseParser):
            span = reader._current_token.span
        frame = frame.tb_next
    return span


def split_location(message: str) -> tuple[str | None, str]:
    """A leading `file:line:col: ` (and `error: `) of a pass's message, and the rest."""
    if match := LEADING_LOCATION.match(message):
        return match["where"], match["message"]
    return None, message


def main(args: Sequence[str] | None = None) -> int:
    """Run dg-opt; bad input prints its diagnostic and returns 1, without a traceback."""
    try:
        DgOptMain(args).run()
    except ToolError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
