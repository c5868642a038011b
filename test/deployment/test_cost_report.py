"""`Program.memory_plan`, `Program.cost_report` and the SRAM fit check of `dg.export`."""

from __future__ import annotations

import csv
import dataclasses
import inspect
from pathlib import Path

import pytest
import torch
from small_cnn import SmallCnn, float_and_program, frozen_model, inputs
from torch import nn

import dg
from dg.tools import dg_run

MAX_PEAK_OVER_LOWER_BOUND = 1.05


def independent_macs(model: nn.Module, x: torch.Tensor) -> int:
    """Multiply-accumulates of one item from the float model's Conv2d and Linear shapes."""
    total = 0

    def count(module: nn.Module, args: tuple, output: torch.Tensor) -> None:
        nonlocal total
        per_output = (
            module.in_channels // module.groups * module.kernel_size[0] * module.kernel_size[1]
            if isinstance(module, nn.Conv2d)
            else module.in_features
        )
        total += output[0].numel() * per_output

    layers = [m for m in model.modules() if isinstance(m, nn.Conv2d | nn.Linear)]
    hooks = [m.register_forward_hook(count) for m in layers]
    try:
        with torch.no_grad():
            model(x[:1])
    finally:
        for hook in hooks:
            hook.remove()
    return total


def test_total_macs_equal_the_float_models_conv_and_linear_count():
    model, program = float_and_program()
    report = program.cost_report()
    assert report.total_macs == independent_macs(model, inputs(1)) > 0
    mac_ops = {"dghw.conv2d", "dghw.depthwise_conv2d", "dghw.fully_connected", "dghw.matmul"}
    assert all(row.cost.macs == 0 for row in report.rows if row.op not in mac_ops)


def test_the_plan_is_within_five_percent_of_the_liveness_lower_bound():
    plan = float_and_program()[1].memory_plan
    assert 0 < plan.lower_bound_bytes <= plan.peak_bytes
    assert plan.peak_bytes <= MAX_PEAK_OVER_LOWER_BOUND * plan.lower_bound_bytes
    # Every activation has a buffer; the buffers of the op at the peak are named.
    assert {b.op for b in plan.buffers} >= {"argument #0", "dghw.conv2d", "dghw.add"}
    assert plan.constant_bytes >= sum(p.numel() for p in float_and_program()[0].parameters()) // 2


def test_a_budget_one_byte_below_the_peak_is_an_export_error_at_the_peak():
    _, frozen = frozen_model()
    peak = float_and_program()[1].memory_plan.peak_bytes
    fits = dg.export(frozen, (inputs(2),), target=dg.Target(sram_bytes=peak))
    assert fits.memory_plan.peak_bytes == peak and fits.target.sram_bytes == peak
    with pytest.raises(dg.ExportError) as caught:
        dg.export(frozen, (inputs(2),), target=dg.Target(sram_bytes=peak - 1))
    (problem,) = caught.value.problems
    assert f"peaks here at {peak:,} bytes" in problem.reason
    assert f"SRAM budget of {peak - 1:,} bytes by 1" in problem.reason
    assert "largest tensors live here" in problem.reason and "fewer channels" in (problem.fix or "")
    # The user's own line and module: the peak is in the network's body, not in dg.
    file, line = problem.location.rsplit(":", 1)
    assert file.endswith("small_cnn.py")
    assert "(pointwise)" in problem.reason  # the module path of a tensor live there
    source = inspect.getsource(SmallCnn.forward)
    first = inspect.getsourcelines(SmallCnn.forward)[1]
    assert first <= int(line) < first + len(source.splitlines())


def test_the_report_as_text_csv_dict_and_plot(tmp_path):
    report = float_and_program()[1].cost_report(dg.Target(clock_hz=100e6, macs_per_cycle=64))
    text = str(report)
    assert "conv2d" in text and "estimates" in text and "at 100 MHz" in text
    assert report.latency_seconds == pytest.approx(report.total_cycles / 100e6)
    for row in report.rows:
        assert row.cost.cycles == max(row.cost.compute_cycles, row.cost.memory_cycles)
        assert row.cost.bound == (
            "compute" if row.cost.compute_cycles >= row.cost.memory_cycles else "memory"
        )
    report.to_csv(tmp_path / "cost.csv")
    with open(tmp_path / "cost.csv", encoding="utf-8") as f:
        lines = list(csv.DictReader(f))
    assert [int(line["macs"]) for line in lines] == [row.cost.macs for row in report.rows]
    # Each row is its op's cost (cost_model.OpCost) and index, the same in every form.
    columns = ["index", "op", "source", "module_path", "macs", "activation_bytes_read"]
    columns += ["activation_bytes_written", "constant_bytes_read", "compute_cycles"]
    columns += ["memory_cycles", "cycles", "bound"]
    assert list(lines[0]) == columns
    rows = report.to_dict()["rows"]
    for row, written, line in zip(report.rows, rows, lines, strict=True):
        assert list(written) == columns and written["op"] == row.cost.name == line["op"]
        assert written["cycles"] == row.cost.cycles and written["index"] == int(line["index"])
        assert written["activation_bytes_read"] == row.cost.activation_bytes_read
    totals = report.to_dict()["totals"]
    assert totals["macs"] == report.total_macs and totals["peak_bytes"] > 0
    report.plot(tmp_path / "cost.png")
    assert (tmp_path / "cost.png").read_bytes()[:4] == b"\x89PNG"


def test_dg_run_reports_a_saved_program(tmp_path, capsys):
    program = float_and_program()[1]
    path = tmp_path / "model.mlir"
    program.save(path)
    assert dg_run.main([str(path), "--report", "--plot", str(tmp_path / "r.png")]) == 0
    out = capsys.readouterr().out
    assert f"total: {program.cost_report().total_macs:,} MACs" in out
    assert f"arena {program.memory_plan.peak_bytes:,} B" in out
    assert (tmp_path / "r.png").exists()


def test_the_deployment_page_lists_every_target_field_with_its_default():
    page = (Path(__file__).resolve().parents[2] / "docs" / "deployment.md").read_text()
    for name, value in dataclasses.asdict(dg.Target()).items():
        assert f"| `{name}` | {value} |" in page, f"docs/deployment.md: Target.{name} = {value}"
