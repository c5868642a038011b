"""`Program`: host quantization boundary, output structure, dynamic batch, save/load."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
import torch
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import ParseError, VerifyException

import dg
from dg.runtime.program import (
    OUTPUT_STRUCTURE_ATTR,
    Program,
    ProgramError,
    dequantize_int8_to_float32,
    quantize_float32_to_int8,
    torch_quant_ops,
)

# Scales that are powers of two keep the host arithmetic exact, so the tests can
# state the expected floats with numpy instead of re-running torch's own ops.
X_QPARAMS = (0.0625, 3)
Y_QPARAMS = (0.25, -5)
SKIP_QPARAMS = (0.5, 0)


def residual_of(conv: Operation) -> list[Operation]:
    """The conv's map rescaled to i32, added to itself and rescaled back to i8 (NHWC)."""
    t = build.tensor
    wide = build.rescale(
        conv.results[0], t(32, build.BATCH, 4, 4, 4), [1 << 30], [31], 0, 0, *INT32
    )
    twice = build.add(wide.result, wide.result)
    skip = build.rescale(twice.result, t(8, build.BATCH, 4, 4, 4), [1 << 30], [39], 0, 0, -128, 127)
    return [wide, twice, skip]


def small_cnn(two_results: bool = False, result_qparams=None) -> ModuleOp:
    """NCHW i8 -> transpose -> conv3x3 -> rescale+relu -> flatten -> fc -> rescale -> [?, 3] i8.

    With `two_results`, the conv's rescaled NHWC map is also returned, through a residual add.
    """
    rng = np.random.default_rng(3)
    w_conv = rng.integers(-127, 128, (4, 3, 3, 2), dtype=np.int8)
    b_conv = rng.integers(-500, 500, 4, dtype=np.int32)
    w_fc = rng.integers(-127, 128, (3, 4 * 4 * 4), dtype=np.int8)
    b_fc = rng.integers(-500, 500, 3, dtype=np.int32)
    t = build.tensor

    def ops(args):
        nhwc = build.transpose(args[0], t(8, build.BATCH, 4, 4, 2), [0, 2, 3, 1])
        wc, bc = build.constant(w_conv), build.constant(b_conv)
        conv = build.conv2d(
            nhwc.result,
            wc.result,
            bc.result,
            t(32, build.BATCH, 4, 4, 4),
            (1, 1),
            (1, 1, 1, 1),
            3,
            0,
        )
        relu = build.rescale(
            conv.result,
            t(8, build.BATCH, 4, 4, 4),
            [1 << 30, 1518500250, 2**31 - 1, 1 << 30],
            [38, 39, 40, 38],
            0,
            -128,
            -128,
            127,
        )
        flat = build.reshape(relu.result, t(8, build.BATCH, 64))
        wf, bf = build.constant(w_fc), build.constant(b_fc)
        fc = build.fully_connected(
            flat.result, wf.result, bf.result, t(32, build.BATCH, 3), -128, 0
        )
        out = build.rescale(fc.result, t(8, build.BATCH, 3), [1 << 30], [38], 0, -5, -128, 127)
        body = [nhwc, wc, bc, conv, relu, flat, wf, bf, fc, out]
        return body + (residual_of(conv) if two_results else [])

    results = (lambda ops: [ops[9].results[0], ops[-1].results[0]]) if two_results else None
    return build.function_module(
        [t(8, build.BATCH, 2, 4, 4)],
        ops,
        results,
        arg_qparams=[X_QPARAMS],
        result_qparams=result_qparams
        or ([Y_QPARAMS, SKIP_QPARAMS] if two_results else [Y_QPARAMS]),
    )


INT32 = (-(2**31), 2**31 - 1)


def quantize(x: torch.Tensor, qparams) -> np.ndarray:
    scale, zp = qparams
    return np.clip(np.round(x.numpy() / scale) + zp, -128, 127).astype(np.int8)


def dequantize(q: np.ndarray, qparams) -> np.ndarray:
    scale, zp = qparams
    return ((q.astype(np.float32) - zp) * scale).astype(np.float32)


def random_images(batch: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(batch, 2, 4, 4, generator=torch.Generator().manual_seed(seed)) * 4


def test_qparams_come_from_the_function_attributes():
    program = Program.from_dghw(small_cnn(two_results=True))
    assert program.input_qparams == [X_QPARAMS]
    assert program.output_qparams == [Y_QPARAMS, SKIP_QPARAMS]
    assert all(isinstance(s, float) and isinstance(z, int) for s, z in program.input_qparams)


def test_missing_qparams_are_an_error():
    module = small_cnn()
    module.body.block.first_op.res_attrs = None
    with pytest.raises(ProgramError, match="result #0 needs the host quantization attributes"):
        Program.from_dghw(module)


@pytest.mark.parametrize("batch", [1, 5])
def test_run_is_quantize_run_int_dequantize(batch):
    program = Program.from_dghw(small_cnn())
    x = random_images(batch)
    y = program.run(x)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32 and y.shape == (batch, 3)
    q = program.run_int(quantize(x, X_QPARAMS))
    assert isinstance(q, np.ndarray) and q.dtype == np.int8
    np.testing.assert_array_equal(y.numpy(), dequantize(q, Y_QPARAMS))


def test_run_int_matches_the_scalar_reference():
    module = small_cnn(two_results=True)
    x = quantize(random_images(2, seed=1), X_QPARAMS)
    results = Program.from_dghw(module).run_int(x)
    for actual, expected in zip(results, ref.run_module(module, [x]), strict=True):
        np.testing.assert_array_equal(actual, expected)


def test_observed_and_planned_walks_give_the_same_results():
    """Without listeners the device model runs a block from its plan; with one, op by op.
    Both give the reference's results, and a listener sees every op of the function."""
    from dg.runtime.interpreter import DeviceModel, ValueRecorder

    module = small_cnn(two_results=True)
    device = DeviceModel(module)
    x = quantize(random_images(3, seed=4), X_QPARAMS)
    recorder = ValueRecorder()
    observed = device([x], [recorder])
    planned = device([x])
    assert len(device.interpreter._plans) == 1  # built on the first unobserved call, kept
    for a, b, expected in zip(observed, planned, ref.run_module(module, [x]), strict=True):
        np.testing.assert_array_equal(a, expected)
        np.testing.assert_array_equal(b, expected)
    assert set(recorder.results) == set(device.function.body.block.ops)


def test_batch_items_are_independent():
    program = Program.from_dghw(small_cnn())
    x = random_images(5, seed=2)
    batched = program.run(x)
    for i in range(5):
        torch.testing.assert_close(program.run(x[i : i + 1])[0], batched[i], rtol=0, atol=0)


def test_output_structure():
    single = Program.from_dghw(small_cnn())
    assert single.output_structure == "single"
    pair = Program.from_dghw(small_cnn(two_results=True))
    assert pair.output_structure == "tuple"
    x = random_images(2)
    y, skip = pair.run(x)
    assert isinstance(pair.run(x), tuple) and skip.shape == (2, 4, 4, 4)
    assert isinstance(pair.run_int(quantize(x, X_QPARAMS)), list)
    one_tuple = Program.from_dghw(small_cnn(), output_structure="tuple")
    (only,) = one_tuple.run(x)
    torch.testing.assert_close(only, single.run(x), rtol=0, atol=0)
    with pytest.raises(ProgramError, match="'single' needs one result, @main has 2"):
        Program.from_dghw(small_cnn(two_results=True), output_structure="single")
    with pytest.raises(ProgramError, match="'list' is not one of"):
        Program.from_dghw(small_cnn(), output_structure="list")  # type: ignore[arg-type]


def test_save_load_round_trip(tmp_path):
    # A scale that is not short in decimal: the file must keep every bit of it.
    odd_scale = float(np.float32(1 / 255))
    module = small_cnn(result_qparams=[(odd_scale, 7)])
    program = Program.from_dghw(module, output_structure="tuple")
    path = tmp_path / "model.mlir"
    program.save(path)
    assert OUTPUT_STRUCTURE_ATTR in path.read_text()
    loaded = Program.load(path)
    assert loaded.output_qparams == [(odd_scale, 7)]
    assert loaded.input_qparams == program.input_qparams
    assert loaded.output_structure == "tuple"
    x = random_images(3)
    torch.testing.assert_close(loaded.run(x), program.run(x), rtol=0, atol=0)
    assert dg.load(path).mlir() == loaded.mlir()
    assert OUTPUT_STRUCTURE_ATTR not in program.mlir("dghw")  # save does not touch the program


def test_stages_of_a_loaded_program(tmp_path):
    module = small_cnn()
    full = Program({"dgtorch": module.clone(), "dgq": module.clone(), "dghw": module})
    assert "dghw.conv2d" in full.mlir("dghw") and full.mlir("dgq")
    full.save(tmp_path / "m.mlir")
    loaded = Program.load(tmp_path / "m.mlir")
    with pytest.raises(ValueError, match="no 'dgq' stage, only dghw"):
        loaded.mlir("dgq")
    with pytest.raises(ValueError, match="unknown stage 'llvm'"):
        loaded.mlir("llvm")
    with pytest.raises(ProgramError, match="needs a 'dghw' stage"):
        Program({"dgq": module})


def test_load_rejects_bad_files(tmp_path):
    bad_syntax = tmp_path / "syntax.mlir"
    bad_syntax.write_text("builtin.module { %0 = dghw.bogus }\n")
    with pytest.raises(ParseError, match="dghw.bogus is not registered"):
        Program.load(bad_syntax)
    text = str(small_cnn()).replace("stride = array<i64: 1, 1>", "stride = array<i64: 0, 1>")
    bad_verify = tmp_path / "verify.mlir"
    bad_verify.write_text(text)
    with pytest.raises(VerifyException, match="'stride' entries must be >= 1"):
        Program.load(bad_verify)
    with pytest.raises(FileNotFoundError):
        Program.load(tmp_path / "missing.mlir")


def test_run_checks_its_inputs():
    program = Program.from_dghw(small_cnn())
    with pytest.raises(TypeError, match="takes 1 input"):
        program.run()
    with pytest.raises(TypeError, match="expected a float32 torch tensor, got torch.int64"):
        program.run(torch.zeros(1, 2, 4, 4, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"got an array of shape \[1, 4, 4, 2\]"):
        program.run(torch.zeros(1, 4, 4, 2))


# The host boundary in numpy is torch's quantize/dequantize_per_tensor, bit for bit.


def random_scales(count: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(rng.uniform(0.5, 1.0) * 2.0 ** rng.integers(-20, 6)) for _ in range(count)]


@pytest.mark.filterwarnings("error")  # torch is silent on huge and NaN inputs, and so is dg
def test_host_quantization_is_torchs_bit_for_bit():
    quantize_op, _ = torch_quant_ops()
    rng = np.random.default_rng(11)
    for scale in random_scales(200, 0):
        zero_point = int(rng.integers(-128, 128))
        q = np.arange(-140, 140, dtype=np.float64)
        values = np.concatenate(
            [
                rng.standard_normal(2000) * scale * rng.uniform(1, 200),
                (q + 0.5) * scale,  # halfway points of the grid (as far as float32 holds them)
                np.nextafter((q + 0.5) * scale, np.inf),
                np.nextafter((q + 0.5) * scale, -np.inf),
                [0.0, -0.0, 1e30, -1e30, 3e38, np.inf, -np.inf, np.nan],
            ]
        ).astype(np.float32)
        x = torch.from_numpy(values)
        expected = quantize_op(x, scale, zero_point, -128, 127, torch.int8).numpy()
        np.testing.assert_array_equal(quantize_float32_to_int8(values, scale, zero_point), expected)


def test_host_dequantization_is_torchs_bit_for_bit():
    _, dequantize_op = torch_quant_ops()
    q = np.arange(-128, 128, dtype=np.int8)
    rng = np.random.default_rng(12)
    for scale in random_scales(2000, 1):
        zero_point = int(rng.integers(-128, 128))
        expected = dequantize_op(torch.from_numpy(q), scale, zero_point, -128, 127, torch.int8)
        got = dequantize_int8_to_float32(q, scale, zero_point)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.view(np.int32), expected.numpy().view(np.int32))


def test_run_quantizes_like_torch_for_every_input_dtype():
    program = Program.from_dghw(small_cnn())
    x = random_images(3)
    quantize_op, _ = torch_quant_ops()
    expected = quantize_op(x, *X_QPARAMS, -128, 127, torch.int8).numpy()
    np.testing.assert_array_equal(program.quantize_inputs(x)[0], expected)
    np.testing.assert_array_equal(program.quantize_inputs(x.requires_grad_())[0], expected)
    half = x.detach().to(torch.bfloat16)
    np.testing.assert_array_equal(
        program.quantize_inputs(half)[0],
        quantize_op(half, *X_QPARAMS, -128, 127, torch.int8).numpy(),
    )
    with pytest.raises(TypeError, match="expected a float32 torch tensor"):
        program.quantize_inputs(x.detach().to(torch.float64))


def test_checked_signatures_are_checked_again_when_they_differ():
    program = Program.from_dghw(small_cnn())
    good = program.quantize_inputs(random_images(2))
    program.run_int(*good)
    program.run_int(*good)  # the accepted signature
    with pytest.raises(ValueError, match="expected int8 elements"):
        program.run_int(good[0].astype(np.int32))
    with pytest.raises(ValueError, match="expected a numpy array"):
        program.run_int(torch.from_numpy(good[0]))


def test_users_get_the_program_that_compares(tmp_path):
    """`dg.load` and `dg.Program.from_dghw` give `dg.Program` (with `compare`)."""
    program = dg.Program.from_dghw(small_cnn())
    assert type(program) is dg.Program and hasattr(program, "compare")
    program.save(tmp_path / "m.mlir")
    assert type(dg.load(tmp_path / "m.mlir")) is dg.Program
    assert type(dg.Program.load(tmp_path / "m.mlir")) is dg.Program
    assert type(Program.load(tmp_path / "m.mlir")) is Program  # the runtime's, the device alone


def test_nested_output_structure_is_validated():
    pair = small_cnn(two_results=True)
    nested = '{"dict":[["b",1],["a",{"list":[0]}]]}'
    program = Program.from_dghw(pair, output_structure=nested)
    y = program.run(random_images(2))
    assert list(y) == ["b", "a"] and isinstance(y["a"], list) and len(y["a"]) == 1
    flat = Program.from_dghw(pair, output_structure="tuple").run(random_images(2))
    torch.testing.assert_close(y["b"], flat[1], rtol=0, atol=0)
    torch.testing.assert_close(y["a"][0], flat[0], rtol=0, atol=0)
    with pytest.raises(ProgramError, match="needs 3 results, @main has 2"):
        Program.from_dghw(pair, output_structure='{"tuple":[0,1,2]}')
    with pytest.raises(ProgramError, match="does not number its results"):
        Program.from_dghw(pair, output_structure='{"tuple":[0,0]}')
    with pytest.raises(ProgramError, match="not valid JSON"):
        Program.from_dghw(pair, output_structure="{")


def test_the_device_model_is_loaded_on_first_run(tmp_path):
    """Loading (and so exporting, saving) a program does not import xDSL's interpreters, which
    import every xDSL dialect they run (0.5 s); its first run does."""
    path = tmp_path / "model.mlir"
    path.write_text((Path(__file__).parent / "dg-run.mlir").read_text())
    script = f"""
import sys
import numpy as np
import dg
program = dg.load({str(path)!r})
assert "xdsl.interpreters" not in sys.modules, "loaded on load"
program.run_int(np.zeros((1, 3), np.int8))  # @main of dg-run.mlir: tensor<?x3xi8>
assert "xdsl.interpreters" in sys.modules, "not loaded on run"
"""
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True)
