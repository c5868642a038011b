"""The saturation listener and the fidelity report's pieces, on small dghw modules.

The demo-model report (first bad layer, dg-run --compare) is in test/test_demo_model.py,
which compiles the demo once for all its tests.
"""

from __future__ import annotations

import math

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest

from dg.compare import FidelityReport, LayerRow, sqnr_db
from dg.runtime.interpreter import DeviceModel, SaturationCounter

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def rescale_module(multiplier: int, shift: int, input_zp: int, output_zp: int, clamp_min: int):
    """@main(x: i32[?, 64]) = rescale(x) to i8, clamped to [clamp_min, 127]."""
    return build.function_module(
        [build.batched(32, [1, 64])],
        lambda args: [
            build.rescale(
                args[0],
                build.batched(8, [1, 64]),
                [multiplier],
                [shift],
                input_zp,
                output_zp,
                clamp_min,
                127,
            )
        ],
    )


def direct_count(x, multiplier, shift, input_zp, output_zp, clamp_min):
    """(below -128, above 127) of the unclamped rescale, by the scalar reference in int32."""
    wide = ref.rescale(x, [multiplier], [shift], input_zp, output_zp, INT32_MIN, INT32_MAX, 32)
    low = int(np.count_nonzero(wide < -128)) if clamp_min == -128 and output_zp != -128 else 0
    return low, int(np.count_nonzero(wide > 127))


@pytest.mark.parametrize(
    ("output_zp", "clamp_min"),
    [(3, -128), (-20, -20), (-128, -128)],
    ids=["no-activation", "relu", "relu-at-zp--128"],
)
def test_saturation_counter_counts_what_the_clamp_cuts_beyond_int8(output_zp, clamp_min):
    rng = np.random.default_rng(5)
    x = rng.integers(-40_000, 40_000, size=(3, 64), dtype=np.int32)
    x[0, :4] = [INT32_MIN + 1, INT32_MAX, 0, -1]  # the extremes of the accumulator
    multiplier, shift = 1 << 30, 38  # x / 256
    device = DeviceModel(rescale_module(multiplier, shift, 0, output_zp, clamp_min))
    counter = SaturationCounter()
    out = device([x], listeners=[counter])[0]
    ((op, counts),) = counter.counts.items()
    low, high = direct_count(x, multiplier, shift, 0, output_zp, clamp_min)
    assert (counts.low, counts.high, counts.elements) == (low, high, x.size)
    assert high > 0 and (low > 0) == (clamp_min != output_zp)  # the cases test both sides
    # Counting does not change what the device computes, and stops with the call.
    np.testing.assert_array_equal(out, device([x])[0])
    device([x])
    assert counter.counts[op].elements == x.size


def test_saturation_counter_adds_up_over_calls():
    x = np.full((2, 64), 1 << 20, dtype=np.int32)
    device = DeviceModel(rescale_module(1 << 30, 38, 0, 0, -128))
    counter = SaturationCounter()
    device([x], listeners=[counter])
    device([x[:1]], listeners=[counter])
    (counts,) = counter.counts.values()
    assert (counts.high, counts.elements) == (3 * 64, 3 * 64)


def test_sqnr():
    signal = np.array([3.0, -4.0])
    assert sqnr_db(signal, signal) == math.inf
    assert sqnr_db(signal, signal + np.array([0.3, -0.4])) == pytest.approx(20.0)
    assert sqnr_db(np.zeros(2), np.ones(2)) == -math.inf


def row(index: int, max_steps: int, saturated: int = 0, sqnr_float: float | None = 30.0):
    return LayerRow(
        index=index,
        layer=f"layer{index}",
        source=f"model.py:{10 + index}",
        op="conv2d+relu",
        device_ops=("conv2d", "rescale"),
        scale=0.01,
        elements=100,
        sqnr_float_db=sqnr_float,
        sqnr_fake_quant_db=math.inf if max_steps == 0 else 20.0,
        max_steps=max_steps,
        own_steps=max_steps,
        differing=0.0 if max_steps == 0 else 0.5,
        saturated=saturated,
        saturated_share=saturated / 100,
    )


def test_first_bad_layer_is_the_first_beyond_one_step():
    report = FidelityReport([row(0, 0), row(1, 1), row(2, 5), row(3, 9)])
    assert report.first_bad is not None and report.first_bad.index == 2
    text = str(report)
    assert "first layer whose own error exceeds 1 step: #2 layer2 at model.py:12" in text
    assert report.to_dict()["first_bad"] == 2
    clean = FidelityReport([row(0, 0), row(1, 1)], unmatched=["quantize_per_tensor_9"])
    assert clean.first_bad is None
    assert "every layer's own error is within 1 step" in str(clean)
    assert "not compared (no device value found): quantize_per_tensor_9" in str(clean)


def test_plot_writes_a_png(tmp_path):
    report = FidelityReport([row(0, 0), row(1, 3, saturated=7), row(2, 0, sqnr_float=None)])
    path = tmp_path / "report.png"
    report.plot(path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_plot_without_matplotlib_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"needs matplotlib: pip install 'dg\[plot\]'"):
        FidelityReport([row(0, 0)]).plot(tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()
