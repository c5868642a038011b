"""dg.resources: a saved program's big constants are MLIR dialect resources, read back bit for
bit by dg.load, dg-opt and dg-run, by xDSL's own parser too, and bad sections are located
parse errors; dg-opt prints them back as resources, streaming the blobs both ways
(test/tools/dg-opt-resources.mlir has its lit cases)."""

from __future__ import annotations

import io
import subprocess
import sys

import dghw_testing as build
import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import Builtin, DenseResourceAttr
from xdsl.dialects.test import Test
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from dg import resources
from dg.dialects import dghw
from dg.runtime.program import Program, parse_dghw
from dg.tools import dg_opt

N, K = 64, 96
"""A Linear of 6 KiB int8 weights and 256 B of i32 bias: one constant over the bound, one under."""


@pytest.fixture
def saved(tmp_path):
    """(path of the saved program, its weight, the program)."""
    rng = np.random.default_rng(1)
    weight = rng.integers(-128, 128, size=(N, K), dtype=np.int8)
    bias = rng.integers(-5000, 5000, size=N, dtype=np.int32)
    program = Program.from_dghw(parse_dghw(build.linear_module(weight, bias)))
    path = tmp_path / "linear.mlir"
    program.save(path)
    return path, weight, program


def constants(program: Program) -> list[bytes]:
    return [op.value.data.data for op in program.dghw.walk() if isinstance(op, dghw.ConstantOp)]


def test_big_constants_are_resources_and_round_trip(saved) -> None:
    path, weight, program = saved
    text = path.read_text()
    assert f"value = dense_resource<constant_0> : tensor<{N}x{K}xi8>" in text
    assert "dense<[" in text  # the bias (256 bytes) stays inline
    # MLIR's blob: the alignment (1 for i8) as a little-endian uint32, then the bytes.
    assert f'constant_0: "0x01000000{weight.tobytes().hex().upper()}"' in text
    for _ in range(2):  # xDSL would rename the key on a second parse in the process
        assert constants(Program.load(path)) == constants(program)
    x = np.random.default_rng(2).integers(-128, 128, size=(3, K), dtype=np.int8)
    np.testing.assert_array_equal(Program.load(path).run_int(x), program.run_int(x))


def test_xdsl_reads_the_saved_resources(saved) -> None:
    """The saved section is what xDSL's own parser (like mlir-opt) reads as builtin resources.

    xDSL cannot read the saved module whole: its parser keeps `dense_resource` as such, and
    `dghw.constant` holds a `dense` attribute; dg's parser resolves the handle (`dg.source`).
    """
    path, weight, _ = saved
    section = path.read_text().split("\n{-#")[1]
    text = f'"test.op"() {{v = dense_resource<constant_0> : tensor<{N}x{K}xi8>}} : () -> ()'
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Test)
    module = Parser(ctx, text + "\n{-#" + section).parse_module()
    attr = next(iter(module.ops)).attributes["v"]
    assert isinstance(attr, DenseResourceAttr)
    interface = Builtin.get_interface(OpAsmDialectInterface)
    assert interface is not None
    blob = interface.lookup(attr.resource_handle.data)
    assert blob == "0x01000000" + weight.tobytes().hex().upper()


def test_dg_opt_and_dg_run_read_resources(saved, tmp_path) -> None:
    path, weight, program = saved
    printed = subprocess.run(
        [sys.executable, "-m", "dg.tools.dg_opt", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert constants(Program.from_dghw(parse_dghw(printed))) == constants(program)
    x = np.random.default_rng(3).integers(-128, 128, size=(2, K), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "dg.tools.dg_run",
            str(path),
            "-i",
            str(tmp_path / "x.npy"),
            "-o",
            str(tmp_path / "y.npy"),
        ],
        check=True,
    )
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), program.run_int(x))


def test_metadata_before_the_module_keeps_line_numbers(saved) -> None:
    path, _, program = saved
    text = path.read_text()
    module, section = text.split("\n{-#")
    moved = "{-#" + section + module.replace("dghw.rescale %3", "dghw.rescal %3")
    with pytest.raises(ParseError) as error:
        parse_dghw(moved, "moved.mlir")
    line = (
        moved.splitlines().index(next(s for s in moved.splitlines() if "dghw.rescal %3" in s)) + 1
    )
    assert f"moved.mlir:{line}:" in str(error.value)


BAD_SECTIONS = {
    'constant_0: "0x01000000ZZ"': "hex digits only",
    'constant_0: "0x0300000001"': "power of two, not 3",
    'constant_0: "0x01"': "alignment",
    'constant_0: "0x0100000001': "never closes",
    'other: "0x0100000001"': "no blob 'constant_0'",
    'constant_0: "0x0100000001"': "holds 1 bytes, tensor<64x96xi8> needs 6144",
    'constant_0: "0x0100000001", constant_0: "0x0100000001"': "defined twice",
}


@pytest.mark.parametrize("blob, message", list(BAD_SECTIONS.items()))
def test_bad_resources_are_located_parse_errors(saved, blob, message) -> None:
    path, _, _ = saved
    module = path.read_text().split("\n{-#")[0]
    text = module + "\n{-#\n  dialect_resources: {\n    builtin: {\n      " + blob + "\n}}\n#-}\n"
    with pytest.raises(ParseError, match=message) as error:
        parse_dghw(text, "bad.mlir")
    assert "bad.mlir:" in str(error.value)


@pytest.mark.parametrize(
    "section, message",
    [
        ("external_resources: {}", "not 'external_resources'"),
        ('dialect_resources: {dghw: {k: "0x01000000"}}', "builtin resources only"),
        ("dialect_resources: {builtin: {}} x", "expected '#-}'"),
    ],
)
def test_other_metadata_is_refused(section, message) -> None:
    with pytest.raises(ParseError, match=message):
        resources.read_mlir(io.BytesIO(b"{-# " + section.encode() + b" #-}\n"), "m.mlir")


def test_dg_opt_prints_a_saved_program_as_it_was_saved(saved, tmp_path) -> None:
    """Through dg-opt without passes (locations kept), a saved program comes out byte for byte
    as `Program.save` wrote it: the weights as the same resources, the bias inline."""
    path, _, _ = saved
    out = tmp_path / "out.mlir"
    assert dg_opt.main([str(path), "--print-debuginfo", "-o", str(out)]) == 0
    assert out.read_text() == path.read_text()


def test_dg_opt_holds_a_big_constant_once(tmp_path) -> None:
    """dg-opt reads a saved program's blob from the file a chunk at a time and writes it out a
    chunk at a time: its peak memory is the weight's bytes once and a few chunks
    (`resources.CHUNK_BYTES`), less than the file's text (twice the weight) once. It read the
    file whole and printed the weights inline: the text twice and the weight, 5x the weight."""
    rng = np.random.default_rng(4)
    weight = rng.integers(-128, 128, size=(4096, 8192), dtype=np.int8)  # 32 MiB: 16 chunks
    bias = rng.integers(-5000, 5000, size=4096, dtype=np.int32)
    path, out = tmp_path / "big.mlir", tmp_path / "out.mlir"
    Program.from_dghw(parse_dghw(build.linear_module(weight, bias))).save(path)
    status, peak = build.traced_peak(lambda: dg_opt.main([str(path), "-o", str(out)]))
    assert status == 0
    assert path.stat().st_size > 2 * weight.nbytes  # the text is twice the weight
    # 43.9 MB measured (the weight, 33.5 MB, and 10 MB of chunks: hex read, its digits,
    # their bytes); was 168 MB.
    assert peak < min(weight.nbytes + 8 * resources.CHUNK_BYTES, path.stat().st_size), peak
    assert constants(Program.load(out))[0] == weight.tobytes()
