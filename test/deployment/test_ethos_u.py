"""The Ethos-U path: TOSA flatbuffer (tosa-tools) and Vela (ethos-u-vela), both dev deps."""

from __future__ import annotations

import pytest
from small_cnn import float_and_program

import dg
from dg.runtime.ethos_u import TosaExportError
from dg.runtime.program import parse_dghw

NORM_PROGRAM = """
func.func @main(%x: tensor<?x4xi8> {dghw.scale = 0.1 : f64, dghw.zero_point = 0 : i32})
    -> (tensor<?x4xi8> {dghw.scale = 0.1 : f64, dghw.zero_point = 0 : i32}) {
  %n = dghw.norm %x {kind = "rms", input_zp = 0 : i32, output_zp = 0 : i32, eps = 1 : i64,
    multiplier = array<i32: 1, 1, 1, 1>, bias = array<i64: 0, 0, 0, 0>, shift = 30 : i32}
    : tensor<?x4xi8> -> tensor<?x4xi8> loc("norm.py":3:0)
  func.return %n : tensor<?x4xi8>
}
"""


def test_the_small_cnn_runs_entirely_on_the_npu(tmp_path, capsys):
    program = float_and_program()[1]
    summary = program.compile_for_ethos_u("ethos-u55-128", output_dir=tmp_path)
    assert summary.cpu_ops == 0 and summary.npu_ops > 0
    assert summary.output_path.exists() and summary.csv_path.exists()
    assert summary.sram_bytes > 0 and summary.flash_bytes > 0 and summary.cycles > 0
    assert summary.inference_seconds > 0 and summary.accelerator == "Ethos_U55_128"
    # Vela counts MACs by its own rules: near dg's count, not forced to equal it.
    ours = program.cost_report().total_macs
    assert abs(summary.macs - ours) <= 0.05 * ours
    # Vela's messages are kept, not printed.
    assert any("system configuration" in w for w in summary.warnings)
    assert capsys.readouterr().out == ""
    beside = str(program.cost_report(ethos_u=summary))
    assert "Ethos-U (Vela, its own counts)" in beside and f"{summary.macs:,} MACs" in beside


def test_save_tosa_writes_a_flatbuffer(tmp_path):
    path = tmp_path / "model.tosa"
    float_and_program()[1].save_tosa(path, batch=2)
    data = path.read_bytes()
    assert len(data) > 1000 and data[4:8] == b"TOSA"


def test_an_op_without_a_tosa_form_is_named(tmp_path):
    program = dg.Program.from_dghw(parse_dghw(NORM_PROGRAM))
    with pytest.raises(TosaExportError, match=r"norm.py:3:0: error: 'dghw.norm': has no TOSA"):
        program.save_tosa(tmp_path / "norm.tosa")
