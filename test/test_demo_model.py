"""The demo model (examples/digits_cnn.py) end to end, on real digits data.

PTQ instead of the demo's QAT keeps this fast; the compiled graph is the same
shape (Conv->BN->ReLU, residual add->ReLU, strided conv, flatten, Linear->ReLU,
Linear).
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path

import numpy as np
import torch

import dg

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "digits_cnn.py"


def _load_example():
    spec = importlib.util.spec_from_file_location("digits_cnn", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["digits_cnn"] = module
    spec.loader.exec_module(module)
    return module


@cache
def _compiled():
    example = _load_example()
    torch.manual_seed(0)
    x_train, x_test, _, _ = example.load_data(seed=0)
    model = example.DigitsCNN().eval()
    prepared = dg.prepare_ptq(model, (x_train[:8],))
    with torch.no_grad():
        prepared(x_train[:256])
    frozen = dg.freeze_quantization(prepared)
    return frozen, dg.export(frozen, (x_test[:4],)), x_test


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
