"""dg-opt keeps xdsl-opt's conventions and reports bad input as located diagnostics.

Every failure case asserts a non-zero exit status, the diagnostic, and that no
Python traceback reaches the user.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import ClassVar

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

import dg
from dg.tools import dg_opt

BIN = Path(sys.executable).parent

QUANTIZE = (
    "dgtorch.quantize_per_tensor %x {{scale = 0.5 : f64, zero_point = 0 : i64, "
    "quant_min = {lo} : i64, quant_max = 127 : i64}} : tensor<?x4xf32> -> tensor<?x4xi8>"
)


def module(lo: int = -128, loc: str = "") -> str:
    """A one-op dgtorch module; `lo` >= 127 makes its op fail to verify."""
    return (
        "func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xi8> {\n"
        f"  %q = {QUANTIZE.format(lo=lo)} {loc}\n"
        "  func.return %q : tensor<?x4xi8>\n"
        "}\n"
    )


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def run_tool(tool: str, *args: str | Path, stdin: str | None = None) -> Run:
    done = subprocess.run(
        [str(BIN / tool), *map(str, args)], input=stdin, capture_output=True, text=True
    )
    return Run(done.returncode, done.stdout, done.stderr)


def dg_opt_fails(*args: str | Path, stdin: str | None = None, status: int = 1) -> str:
    """Run dg-opt, expecting it to fail cleanly; its stderr."""
    run = run_tool("dg-opt", *args, stdin=stdin)
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == status, run.stderr
    return run.stderr


@pytest.fixture
def write(tmp_path: Path):
    def write(text: str, name: str = "input.mlir") -> Path:
        path = tmp_path / name
        path.write_text(text)
        write.last = path  # type: ignore[attr-defined]
        return path

    return write


# -- xdsl-opt conventions ------------------------------------------------------------


def test_version() -> None:
    run = run_tool("dg-opt", "--version")
    assert run.returncode == 0
    assert run.stdout.strip() == f"dg-opt {dg.__version__} (xdsl {version('xdsl')})"


def test_round_trip_through_stdin_and_output_file(tmp_path: Path) -> None:
    out = tmp_path / "out.mlir"
    run = run_tool("dg-opt", "-o", out, stdin=module())
    assert run.returncode == 0, run.stderr
    assert "%q = dgtorch.quantize_per_tensor %x {" in out.read_text()
    assert run.stdout == ""


def test_pass_pipeline_with_options(write) -> None:
    path = write(module())
    run = run_tool("dg-opt", path, "-p", "canonicalize,convert-memref-to-ptr{lower_func=true}")
    assert run.returncode == 0, run.stderr
    assert "dgtorch.quantize_per_tensor" in run.stdout


def test_print_op_generic(write) -> None:
    run = run_tool("dg-opt", write(module()), "--print-op-generic")
    assert run.returncode == 0, run.stderr
    assert '"dgtorch.quantize_per_tensor"(%x) <{scale = 5.000000e-01 : f64' in run.stdout


def test_split_input_file_prints_every_chunk(write) -> None:
    run = run_tool("dg-opt", write(module() + "// -----\n" + module()), "--split-input-file")
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("dgtorch.quantize_per_tensor") == 2
    assert "// -----" in run.stdout


def test_verify_diagnostics_keeps_xdsl_output(write) -> None:
    path = write(module() + "// -----\n" + module(lo=200))
    run = run_tool("dg-opt", path, "--split-input-file", "--verify-diagnostics")
    assert run.returncode == 0, run.stderr
    first, second = run.stdout.split("// -----\n")
    assert "dgtorch.quantize_per_tensor" in first
    assert second.startswith("quant_min (200) must be below quant_max (127)\n")
    assert "Operation does not verify: quant_min (200)" in second


# -- diagnostics ---------------------------------------------------------------------


def test_verifier_error_at_op_location(write) -> None:
    stderr = dg_opt_fails(write(module(lo=200, loc='loc("model.py":12:3)')))
    lines = stderr.splitlines()
    assert lines[0] == (
        "model.py:12:3: error: 'dgtorch.quantize_per_tensor' op "
        "quant_min (200) must be below quant_max (127)"
    )
    # model.py cannot be read here: no line of it is quoted. Where the op is in the IR is a note.
    path = write.last
    assert lines[1] == f"{path}:2:8: note: parsed here"
    assert lines[2].startswith("  %q = dgtorch.quantize_per_tensor %x {scale")
    assert lines[3] == " " * 7 + "^" * len("dgtorch.quantize_per_tensor")
    assert lines[4] == "model.py:12:3: note: see current operation:"
    assert lines[5].startswith('%q = "dgtorch.quantize_per_tensor"(%x)')


@pytest.mark.parametrize(
    "loc",
    [
        'loc("conv1"("model.py":12:3))',
        'loc(fused["model.py":12:3, "other.py":1:1])',
        'loc(callsite("model.py":12:3 at "main.py":40:1))',
    ],
)
def test_verifier_error_at_nested_location(write, loc: str) -> None:
    stderr = dg_opt_fails(write(module(lo=200, loc=loc)))
    assert stderr.startswith("model.py:12:3: error: 'dgtorch.quantize_per_tensor' op quant_min")


def test_verifier_error_without_loc_is_where_the_op_was_parsed(write) -> None:
    path = write(module(lo=200))
    lines = dg_opt_fails(path).splitlines()
    assert lines[0] == (
        f"{path}:2:8: error: 'dgtorch.quantize_per_tensor' op "
        "quant_min (200) must be below quant_max (127)"
    )
    assert lines[1].startswith("  %q = dgtorch.quantize_per_tensor")
    assert lines[2] == " " * 7 + "^" * len("dgtorch.quantize_per_tensor")
    assert lines[3] == f"{path}:2:8: note: see current operation:"


def test_verifier_error_from_stdin() -> None:
    stderr = dg_opt_fails(stdin=module(lo=200))
    assert stderr.startswith("stdin:2:8: error: 'dgtorch.quantize_per_tensor' op")


def test_parse_error_at_its_position(write) -> None:
    path = write("func.func @main() {\n  %0 = dgtorch.bogus\n  func.return\n}\n")
    stderr = dg_opt_fails(path)
    assert stderr.startswith(f"{path}:")
    assert ": error: Operation dgtorch.bogus is not registered" in stderr.splitlines()[0]


BAD_TYPE = "func.func @f(%a: tensor<4x!dgq.uniform<i8<5:3>:f32, 0.5>>) {\n  func.return\n}\n"


def test_type_error_at_its_position(write) -> None:
    path = write(BAD_TYPE)
    lines = dg_opt_fails(path).splitlines()
    assert lines[0] == f"{path}:1:39: error: storage range [5, 3] does not fit in i8"
    assert lines[1].startswith("func.func @f(")
    assert lines[2] == " " * 38 + "^" * len("<i8<5:3>:f32, 0.5>")


def test_error_in_later_chunk_has_file_line(write) -> None:
    first_chunk = module() + "// -----\n"
    path = write(first_chunk + BAD_TYPE)
    stderr = dg_opt_fails(path, "--split-input-file")
    assert stderr.startswith(f"{path}:{first_chunk.count(chr(10)) + 1}:39: error: storage range")


def test_missing_input_file(tmp_path: Path) -> None:
    stderr = dg_opt_fails(tmp_path / "nope.mlir")
    assert stderr.strip() == (
        f"dg-opt: error: cannot open input file '{tmp_path / 'nope.mlir'}': "
        "No such file or directory"
    )


def test_unknown_file_extension(write) -> None:
    stderr = dg_opt_fails(write(module(), "input.txt"))
    assert stderr.strip() == "dg-opt: error: Unrecognized file extension 'txt' (known: .mlir)"


def test_unwritable_output_file(write, tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "out.mlir"
    stderr = dg_opt_fails(write(module()), "-o", target)
    assert stderr.startswith(f"dg-opt: error: cannot open output file '{target}'")


def test_unknown_pass_is_a_usage_error(write) -> None:
    stderr = dg_opt_fails(write(module()), "-p", "cse,canonicalise", status=2)
    assert stderr.splitlines()[-1] == (
        "dg-opt: error: argument -p/--passes: unknown pass 'canonicalise' "
        "(did you mean canonicalize, canonicalize-dmp?)"
    )


def test_unknown_pass_option_is_a_usage_error(write) -> None:
    stderr = dg_opt_fails(write(module()), "-p", "convert-memref-to-ptr{lower_funk=true}", status=2)
    assert "argument -p/--passes: pass 'convert-memref-to-ptr': " in stderr
    assert '"lower_funk"' in stderr


def test_malformed_pipeline_is_a_usage_error(write) -> None:
    stderr = dg_opt_fails(write(module()), "-p", "canonicalize{", status=2)
    assert "dg-opt: error: argument -p/--passes: Error parsing pass pipeline" in stderr


@pytest.mark.parametrize("count", ["-1", "many"])
def test_bad_elision_bound_is_a_usage_error(write, count: str) -> None:
    stderr = dg_opt_fails(
        write(module()), f"--mlir-elide-elementsattrs-if-larger={count}", status=2
    )
    assert f"expected a number of elements >= 0, got '{count}'" in stderr


def test_elided_constant_read_from_stdin_is_a_located_error() -> None:
    text = "%w = dghw.constant {value = dense_resource<__elided__> : tensor<4xi8>} : tensor<4xi8>\n"
    stderr = dg_opt_fails(stdin=text)
    assert stderr.startswith("stdin:1:43: error: dense_resource<__elided__> is a constant whose")
    assert "cannot be parsed back" in stderr


def test_failing_xdsl_pass(write) -> None:
    # transform-interpreter raises PassFailedException without a transform schedule.
    path = write(module())
    stderr = dg_opt_fails(path, "-p", "transform-interpreter")
    assert stderr.startswith(f"{path}: error: pass 'transform-interpreter' failed: ")


# -- failing passes, in process ------------------------------------------------------


@dataclass(frozen=True)
class GiveUpPass(ModulePass):
    """Fails like a dg lowering that knows where: its message starts with the location."""

    name: ClassVar[str] = "test-give-up"

    where: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        prefix = f"{self.where}: " if self.where else ""
        raise PassFailedException(f"{prefix}conv2d with groups=2 is not supported")


@dataclass(frozen=True)
class BreakIRPass(ModulePass):
    """Produces IR that does not verify: a bug the driver must blame on the pass."""

    name: ClassVar[str] = "test-break-ir"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if inner.name == "dgtorch.quantize_per_tensor":
                inner.properties["quant_min"] = IntegerAttr(127, i64)


class DgOptWithTestPasses(dg_opt.DgOptMain):
    def register_all_passes(self) -> None:
        super().register_all_passes()
        self.register_pass(GiveUpPass.name, lambda: GiveUpPass)
        self.register_pass(BreakIRPass.name, lambda: BreakIRPass)


@pytest.fixture
def dg_opt_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """dg_opt.main with the test passes; returns (status, stderr)."""
    monkeypatch.setattr(dg_opt, "DgOptMain", DgOptWithTestPasses)

    def run(*args: str) -> tuple[int, str]:
        status = dg_opt.main(list(args))
        return status, capsys.readouterr().err

    return run


def test_failing_pass_with_location(write, dg_opt_main) -> None:
    status, stderr = dg_opt_main(str(write(module())), "-p", 'test-give-up{where="model.py:7:5"}')
    assert status == 1
    assert stderr.strip() == (
        "model.py:7:5: error: pass 'test-give-up' failed: conv2d with groups=2 is not supported"
    )


def test_failing_pass_without_location(write, dg_opt_main) -> None:
    path = write(module())
    status, stderr = dg_opt_main(str(path), "-p", "canonicalize,test-give-up")
    assert status == 1
    assert stderr.strip() == (
        f"{path}: error: pass 'test-give-up' failed: conv2d with groups=2 is not supported"
    )


def test_pass_that_breaks_the_ir_is_blamed(write, dg_opt_main) -> None:
    status, stderr = dg_opt_main(
        str(write(module(loc='loc("model.py":3:1)'))), "-p", "test-break-ir,canonicalize"
    )
    assert status == 1
    assert stderr.splitlines()[0] == (
        "model.py:3:1: error: 'dgtorch.quantize_per_tensor' op quant_min (127) must be below "
        "quant_max (127) (in the IR produced by pass 'test-break-ir')"
    )


def test_input_is_verified_before_the_first_pass(write, dg_opt_main) -> None:
    status, stderr = dg_opt_main(str(write(module(lo=200))), "-p", "test-give-up")
    assert status == 1
    assert "op quant_min (200) must be below quant_max (127)" in stderr
    assert "test-give-up" not in stderr


# -- plain xdsl-opt sees dg through the xdsl.universe entry point --------------------


def test_xdsl_opt_lists_dg_passes() -> None:
    run = run_tool("xdsl-opt", "--help")
    assert run.returncode == 0
    # argparse wraps the comma-separated list, at hyphens too.
    listed = re.sub(r"\s+", "", run.stdout)
    for name in ("convert-dgtorch-to-dgq", "convert-dgq-to-dghw", "dg-pipeline"):
        assert re.search(rf"[:,]{re.escape(name)}(?=,|--)", listed), name


def test_xdsl_opt_parses_dg_dialects() -> None:
    root = Path(__file__).resolve().parents[1] / "dialects"
    for dialect in ("dgtorch", "dgq", "dghw"):
        source = root / dialect / "ops.mlir"
        run = run_tool("xdsl-opt", source)
        assert run.returncode == 0, run.stderr
        assert f"{dialect}." in run.stdout


# -- found by the dg-opt mutation fuzzer (test/fuzz) ----------------------------------


def test_out_of_range_dense_literal_is_a_parse_error(write) -> None:
    # xDSL's DenseIntOrFPElementsAttr rejects -129 for i8 with a ValueError, not a
    # ParseError; dg-opt reports it at the parser's position like any parse error.
    path = write(
        "func.func @main() -> tensor<2xi8> {\n"
        "  %c = dgtorch.constant {value = dense<[1, -129]> : tensor<2xi8>} : tensor<2xi8>\n"
        "  func.return %c : tensor<2xi8>\n"
        "}\n"
    )
    lines = dg_opt_fails(path).splitlines()
    assert lines[0] == (
        f"{path}:2:65: error: Integer value -129 is out of range for type i8 "
        "which supports values in the range [-128, 256)"
    )
    assert lines[1].startswith("  %c = dgtorch.constant")


def test_unterminated_string_literal_is_a_prompt_parse_error(write) -> None:
    # xDSL's string-literal pattern backtracked 2^n times on an unterminated literal of n
    # characters (`make fuzz` found dg-opt hanging); dg.xdsl_fixes makes its loops possessive.
    name = "conv_" * 12
    path = write(f'func.func @main() {{\n  "test.op"() {{note = "{name}}} : () -> ()\n}}\n')
    done = subprocess.run(
        [str(BIN / "dg-opt"), str(path)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"{path}:2:")
    assert "End of file reached before closing string literal" in done.stderr


def test_string_literal_pattern_matches_xdsls_on_valid_and_broken_literals() -> None:
    """Possessive loops change the time, never what matches (dg.xdsl_fixes)."""
    xdsl_pattern = re.compile(r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
    from dg.xdsl_fixes import STRING_LITERAL

    for text in ['""', '"a\\"b" c', '"\\0A\\t\\\\"', '"x\\q"', '"ab\\', '"a\\nb" "c"', '"0x0F"']:
        ours, theirs = STRING_LITERAL.match(text), xdsl_pattern.match(text)
        assert (ours and ours.group()) == (theirs and theirs.group()), text


def test_a_huge_dense_literal_is_a_parse_error_not_an_allocation(write) -> None:
    # xDSL stores every element of a splat; `make fuzz` mutated a shape to 2^31 - 1 and dg-opt
    # ran out of time and memory. dg.xdsl_fixes refuses the type before anything is allocated
    # (a literal whose elements are all in the file is read, whatever its size:
    # test/runtime/test_big_program.py).
    big = "tensor<2147483647xf32>"
    path = write(
        f"func.func @main() -> {big} {{\n"
        f'  %c = "test.op"() {{value = dense<1.0> : {big}}} : () -> {big}\n'
        f"  func.return %c : {big}\n}}\n"
    )
    done = subprocess.run(
        [str(BIN / "dg-opt"), str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[0] == (
        f"{path}:2:42: error: dense literal of 2147483647 elements written in 8 characters: "
        "dg-opt expands at most 67108864 elements from a splat"
    )


# -- --help and --list-passes: dg's passes first ----------------------------------------


def test_list_passes_prints_dgs_passes_with_their_options() -> None:
    run = run_tool("dg-opt", "--list-passes")
    assert run.returncode == 0, run.stderr
    names = re.findall(r"^  (\S+)$", run.stdout, re.M)
    assert names == [
        "convert-dgtorch-to-dgq",
        "convert-dgq-to-dghw",
        "dg-pipeline",
        "convert-dghw-to-tosa",
        "dghw-plan-memory",
        "dghw-verify-memory-plan",
    ]
    assert "sram_bytes (default None): the on-chip SRAM budget in bytes" in run.stdout
    assert "      batch (default 1): the batch extent that replaces every dynamic axis 0" in (
        run.stdout.splitlines()
    )
    assert "target_version (default '0.15.0'): the dg compiler version" in run.stdout
    assert "canonicalize" not in run.stdout


def test_help_lists_dgs_passes_before_the_options_and_keeps_xdsls() -> None:
    run = run_tool("dg-opt", "--help")
    assert run.returncode == 0, run.stderr
    dg_section = run.stdout.index("dg's passes")
    assert dg_section < run.stdout.index("options:")
    assert run.stdout.index("convert-dghw-to-tosa", dg_section) < run.stdout.index("options:")
    # xDSL's passes stay listed under -p, and usable.
    assert "canonicalize" in re.sub(r"\s+", "", run.stdout[run.stdout.index("options:") :])
