"""The demo model (examples/digits_cnn.py) end to end, on real digits data.

PTQ instead of the demo's QAT keeps this fast; the compiled graph is the same
shape (Conv->BN->ReLU, residual add->ReLU, strided conv, flatten, Linear->ReLU,
Linear).
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from functools import cache
from pathlib import Path

import numpy as np
import torch

import dg

sys.path.insert(0, str(Path(__file__).parent / "models"))
from harness import with_scaled_rescale  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "digits_cnn.py"


def _load_example():
    spec = importlib.util.spec_from_file_location("digits_cnn", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["digits_cnn"] = module
    spec.loader.exec_module(module)
    return module


@cache
def _float_and_compiled():
    example = _load_example()
    torch.manual_seed(0)
    x_train, x_test, _, _ = example.load_data(seed=0)
    model = example.DigitsCNN().eval()
    prepared = dg.prepare_ptq(model, (x_train[:8],))
    with torch.no_grad():
        prepared(x_train[:256])
    frozen = dg.freeze_quantization(prepared)
    return model, frozen, dg.export(frozen, (x_test[:4],)), x_test


def _compiled():
    return _float_and_compiled()[1:]


def _output_step(program) -> float:
    ((scale, _),) = program.output_qparams
    return scale


def test_device_is_within_one_output_step_of_the_frozen_model_on_every_element():
    frozen, program, x_test = _compiled()
    with torch.no_grad():
        expected = frozen(x_test)
    steps = (program.run(x_test) - expected).abs() / _output_step(program)
    assert steps.max().item() <= 1.0 + 1e-4
    # Ties are the only expected difference, so nearly every element is exact.
    assert (steps > 0.5).float().mean().item() < 0.01


def test_run_int_is_run_without_the_host_conversions():
    _, program, x_test = _compiled()
    ((in_scale, in_zp),) = program.input_qparams
    ((out_scale, out_zp),) = program.output_qparams
    x = x_test[:64]
    quantize_per_tensor = torch.ops.quantized_decomposed.quantize_per_tensor
    q = quantize_per_tensor(x, in_scale, in_zp, -128, 127, torch.int8)
    out_int = program.run_int(q.numpy())
    assert out_int.dtype == np.int8
    expected = (out_int.astype(np.float32) - out_zp) * np.float32(out_scale)
    np.testing.assert_array_equal(program.run(x).numpy(), expected)


def test_saved_program_reloads_and_gives_the_same_numbers(tmp_path):
    _, program, x_test = _compiled()
    path = tmp_path / "digits.dghw.mlir"
    program.save(path)
    reloaded = dg.load(path)
    assert reloaded.input_qparams == program.input_qparams
    torch.testing.assert_close(reloaded.run(x_test[:32]), program.run(x_test[:32]), rtol=0, atol=0)


def test_batch_256_runs_and_every_stage_prints():
    _, program, x_test = _compiled()
    x = x_test[:256]
    assert program.run(x).shape == (256, 10)
    for stage in ("dgtorch", "dgq", "dghw"):
        assert "func.func @main" in program.mlir(stage)
    device_ops = [line for line in program.mlir("dghw").splitlines() if "= dghw." in line]
    assert device_ops and not any("f32" in line or "f64" in line for line in device_ops)


# -- program.compare and dg-run --compare -------------------------------------

DEMO_LAYERS = ["input #0", "stem", "block", "add+relu", "down", "flatten", "fc1", "fc2"]
"""The activation quantizations of DigitsCNN.forward, in order (the residual add runs in
the root module, so it is named by its ops)."""


def _frozen_output_int(frozen, program, x):
    ((scale, zp),) = program.output_qparams
    with torch.no_grad():
        return torch.round(frozen(x) / scale).to(torch.int64).numpy() + zp


def test_compare_reports_every_layer_of_the_demo_within_one_step():
    model, frozen, program, x_test = _float_and_compiled()
    x = x_test[:64]
    report = program.compare(frozen, x, float_model=model)
    assert [row.layer for row in report.rows] == DEMO_LAYERS and not report.unmatched
    # forward's lines: stem, block (conv, then add), down, flatten, fc1, fc2.
    forward = inspect.getsourcelines(_load_example().DigitsCNN.forward)[1]
    lines = [forward + k for k in (1, 2, 2, 3, 4, 5, 6)]
    assert [row.source for row in report.rows] == ["", *(f"{EXAMPLE}:{line}" for line in lines)]
    assert report.first_bad is None
    # The last row is the program's output: its numbers are those of run_int.
    out_int = program.run_int(*program.quantize_inputs(x)).astype(np.int64)
    expected = _frozen_output_int(frozen, program, x)
    last = report.rows[-1]
    assert last.max_steps == np.abs(out_int - expected).max()
    assert last.differing == np.mean(out_int != expected)
    for row in report.rows:
        assert row.max_steps <= 1 and row.own_steps <= row.max_steps
        assert row.sqnr_fake_quant_db > 30
        # Quantization costs accuracy against the float model, but not much.
        assert row.sqnr_float_db is not None and 20 < row.sqnr_float_db < row.sqnr_fake_quant_db
    assert "every layer's own error is within 1 step" in str(report)


def test_compare_names_a_tampered_layer_as_the_first_bad_one():
    _, frozen, program, x_test = _float_and_compiled()
    report = with_scaled_rescale(program, "fc1", 0.9).compare(frozen, x_test[:64])
    first = report.first_bad
    assert first is not None and first.layer == "fc1" and first.own_steps > 1
    assert all(row.max_steps <= 1 for row in report.rows[: first.index])
    # The damage reaches the output, but fc2 itself computes right from what it reads.
    assert report.rows[-1].max_steps > 1 and report.rows[-1].own_steps <= 1
    assert all(row.sqnr_float_db is None for row in report.rows)  # no float model given
    assert f"first layer whose own error exceeds 1 step: #{first.index} fc1" in str(report)


def test_dg_run_compare_prints_the_table_for_npy_inputs(tmp_path, capsys):
    from dg.tools import dg_run

    model, frozen, program, x_test = _float_and_compiled()
    path = tmp_path / "demo.mlir"
    program.save(path, reference=frozen, float_model=model)
    (x,) = program.quantize_inputs(x_test[:16])
    np.save(tmp_path / "x.npy", x)
    png = tmp_path / "layers.png"
    argv = [str(path), "-i", str(tmp_path / "x.npy"), "--compare", "--plot", str(png)]
    assert dg_run.main(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 + len(DEMO_LAYERS) + 1  # header, rule, rows, verdict
    for line, layer in zip(lines[2:], DEMO_LAYERS, strict=False):
        # Every row has the float model's SQNR too (read from demo.float.pt2).
        assert f" {layer} " in line and line.count(" dB") >= 1
    assert " fc1 " in lines[8] and lines[-1].startswith("every layer's own error is within")
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_dg_run_compare_errors(tmp_path, capsys):
    from dg.tools import dg_run

    _, frozen, program, x_test = _float_and_compiled()
    path = tmp_path / "demo.mlir"
    program.save(path)  # no reference
    (x,) = program.quantize_inputs(x_test[:4])
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "wrong.npy", x[:, :, :4])
    x_npy, wrong_npy = str(tmp_path / "x.npy"), str(tmp_path / "wrong.npy")

    def error(*argv: str) -> str:
        assert dg_run.main([str(path), *argv]) == 1
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        return captured.err

    missing = error("-i", x_npy, "--compare")
    assert "cannot read the frozen model" in missing and "demo.frozen.pt2" in missing
    assert "program.save(path, reference=frozen)" in missing
    assert "--plot needs --compare" in error("-i", x_npy, "--plot", "p.png")
    garbage = tmp_path / "garbage.pt2"
    garbage.write_bytes(b"not a zip archive")
    assert "is not a saved model" in error("-i", x_npy, "--compare", str(garbage))
    # The inputs are checked before any reference is read.
    assert "got an array of shape [4, 1, 4, 8]" in error("-i", wrong_npy, "--compare")


def test_device_is_bit_identical_to_the_tosa_reference_model_on_the_demo():
    """The whole demo network exported to TOSA 1.0 and run by tosa_reference_model."""
    from dg.runtime.tosa_reference import cross_check

    _, program, x_test = _compiled()
    ((in_scale, in_zp),) = program.input_qparams
    quantize_per_tensor = torch.ops.quantized_decomposed.quantize_per_tensor
    digits = quantize_per_tensor(x_test[:64], in_scale, in_zp, -128, 127, torch.int8).numpy()
    extremes = np.stack([np.full(digits.shape[1:], v, dtype=np.int8) for v in (-128, 127)])
    check = cross_check(program.dghw, [np.concatenate([digits, extremes])])
    assert not check.mismatches(), "\n".join(check.mismatches())


def test_the_demo_runs_bit_identically_inside_its_memory_plan():
    _, program, x_test = _compiled()
    plan = program.memory_plan
    assert plan.peak_bytes <= 1.05 * plan.lower_bound_bytes
    assert bool((program.run(x_test[:64], arena=True) == program.run(x_test[:64])).all())


def test_the_demos_macs_equal_its_conv_and_linear_shapes():
    """An independent count: each Conv2d's and Linear's output elements times the
    multiply-accumulates per output, from the float model's own layers."""
    model, _, program, x_test = _float_and_compiled()
    expected = 0

    def count(module, args, output) -> None:
        nonlocal expected
        if isinstance(module, torch.nn.Conv2d):
            kh, kw = module.kernel_size
            expected += output[0].numel() * module.in_channels // module.groups * kh * kw
        else:
            expected += output[0].numel() * module.in_features

    layers = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d | torch.nn.Linear)]
    hooks = [m.register_forward_hook(count) for m in layers]
    with torch.no_grad():
        model(x_test[:1])
    for hook in hooks:
        hook.remove()
    assert program.cost_report().total_macs == expected > 0
