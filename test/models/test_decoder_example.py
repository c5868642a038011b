"""The decoder example (examples/digits_decoder.py) end to end, QAT-trained briefly on real digits.

A short version of the example's own training (a few float epochs, one QAT
epoch) through its own `train_and_compile`, then the held-out split: the
program compiles to integer device ops, its accuracy is within one point of
the fake-quantized model's, and every logit is within one output step of
`frozen(x)`.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

import numpy as np
import torch
from harness import RESULTS, Comparison, on_grid

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits_decoder.py"
FLOAT_EPOCHS = 3
QAT_EPOCHS = 1


def _load_example():
    spec = importlib.util.spec_from_file_location("digits_decoder", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def _trained():
    example = _load_example()
    x_train, x_test, y_train, y_test = example.load_data(seed=0)
    trained = example.train_and_compile(x_train, y_train, FLOAT_EPOCHS, QAT_EPOCHS, seed=0)
    with torch.no_grad():
        fake_quant = trained.frozen(x_test)
    return example, trained, x_test, y_test, fake_quant, trained.program.run(x_test)


def test_the_block_compiles_to_integer_device_ops():
    _, trained, *_ = _trained()
    text = trained.program.mlir("dghw")
    device_ops = [line for line in text.splitlines() if "= dghw." in line]
    assert device_ops and not any("f32" in line or "f64" in line for line in device_ops)
    # One op per norm, per attention matmul and per softmax: nothing unrolled per head.
    assert text.count("dghw.norm ") == 2
    assert text.count("dghw.matmul ") == 2
    assert text.count("dghw.softmax ") == 1
    # RoPE of q and k: half slices, their swap, the cos/sin table products.
    for rope_op in ("dghw.slice ", "dghw.concat ", "dghw.mul "):
        assert rope_op in text, f"no {rope_op.strip()}: RoPE did not reach the device"


def test_device_accuracy_is_within_one_point_of_fake_quant():
    example, _, _, y_test, fake_quant, device = _trained()
    fake_quant_acc = example.digits_cnn.accuracy(fake_quant, y_test)
    device_acc = example.digits_cnn.accuracy(device, y_test)
    # The short training must still learn the task, or the comparison says nothing.
    assert fake_quant_acc > 80
    assert abs(device_acc - fake_quant_acc) <= 1.0


def test_every_logit_is_within_one_output_step_of_the_frozen_model():
    _, trained, _, _, fake_quant, device = _trained()
    ((scale, zero_point),) = trained.program.output_qparams
    want = on_grid(fake_quant, scale, zero_point, "frozen logits")
    got = on_grid(device, scale, zero_point, "device logits")
    assert len(np.unique(want)) > 1, "the frozen model's logits are constant"
    steps = np.abs(got - want)
    comparison = Comparison(
        "decoder example",
        "digits_decoder_qat",
        int(steps.max()),
        np.count_nonzero(steps) / steps.size,
        steps.size,
    )
    RESULTS.append(comparison)
    print(comparison)
    assert steps.max() <= 1, f"{comparison}: more than one output step off"


def test_the_decoder_runs_bit_identically_inside_its_memory_plan():
    _, trained, x_test, *_ = _trained()
    program = trained.program
    plan = program.memory_plan
    assert plan.lower_bound_bytes <= plan.peak_bytes <= 1.05 * plan.lower_bound_bytes
    assert bool((program.run(x_test[:32], arena=True) == program.run(x_test[:32])).all())
