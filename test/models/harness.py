"""The end-to-end standard every model test applies: quantize, compile, run, compare.

`compile_model` quantizes a float model with dg (PTQ on random calibration
batches, or a few QAT steps), freezes it and compiles it with `dg.export`.
`assert_matches_frozen` then runs the program and the frozen model on a batch
the export never saw and compares them in units of the output quantization
step (LSB): every element must be within one step, and the device's integer
output (`run_int`) must be exactly what `run` dequantizes. Each comparison is
recorded in `RESULTS`; the conftest prints them as one table.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.fx import GraphModule, Node

import dg
import dg.compare
import dg.frontend.quantizer  # noqa: F401  (registers the quantized_decomposed ops)
from dg.program import Program
from dg.runtime.program import torch_quant_ops

qd = torch.ops.quantized_decomposed

EXPORT_BATCH = 2
CHECK_BATCH = 5
CHECK_SEED = 1234
"""The comparison batch differs from the export and calibration batches in size and values."""

MAX_LSB = 1
"""The standard for one row: every element within one output step."""

DEEP_MAX_LSB = 4
"""End-to-end tolerance of a deep network, where one step per op no longer bounds the output.

The frozen model computes each conv in float32: at an exact rounding tie (y / scale
= -46.5 in the ResNet stem) float32 lands on either side, the device's integer
arithmetic is exact. Such a 1-step difference (0.04% of the stem's outputs) is
amplified by every conv downstream of it: 3 steps after ResNet's layer1, 7 after
layer4, 2 on the logits, all within the receptive field of the stem difference.
The row tests hold every op to one step; here the bound only has to catch
integration errors (layouts, wrong grids), which are off by far more.
`assert_layers_match_frozen` holds a deep network's every layer to one step.
"""
QPARAM_RTOL = 1e-6

QUANTIZE_PER_TENSOR = (qd.quantize_per_tensor.default, qd.quantize_per_tensor.tensor)
DEQUANTIZE_PER_TENSOR = (qd.dequantize_per_tensor.default, qd.dequantize_per_tensor.tensor)

Shapes = Sequence[tuple[int, ...]]
"""The shape of one sample of each model input, without the batch axis."""


@dataclass(frozen=True)
class Comparison:
    """How far the program's output is from the frozen model's, for one row of the spec."""

    row: str
    case: str
    max_lsb: int
    differing: float
    """Share of output elements that differ at all (in [0, 1])."""
    elements: int

    def __str__(self) -> str:
        return (
            f"{self.row} [{self.case}]: max {self.max_lsb} LSB, "
            f"{self.differing:.2%} of {self.elements} elements differ"
        )


RESULTS: list[Comparison] = []


@dataclass(frozen=True)
class Compiled:
    """A quantized model at the two ends of dg: frozen (torch) and compiled (device)."""

    frozen: GraphModule
    program: Program
    shapes: tuple[tuple[int, ...], ...]


class Lambda(nn.Module):
    """A functional op as a module, so that parametrized cases stay one-liners."""

    def __init__(self, function: Callable[[torch.Tensor], torch.Tensor]):
        super().__init__()
        self.function = function

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.function(x)


def inputs(shapes: Shapes, batch: int, seed: int) -> tuple[torch.Tensor, ...]:
    """A deterministic random batch for each input shape."""
    generator = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(batch, *shape, generator=generator) for shape in shapes)


def quantize(
    model: nn.Module,
    shapes: Shapes,
    *,
    mode: str = "ptq",
    steps: int = 3,
    calibration_batch: int = 16,
    prepare_train: bool = False,
) -> GraphModule:
    """`model` quantized by dg and frozen.

    PTQ calibrates on `steps` random batches. QAT runs `steps` SGD steps on a
    dummy loss in train mode (so batch norm statistics and observers move).
    """
    torch.manual_seed(0)
    example = inputs(shapes, EXPORT_BATCH, seed=1)
    if mode == "ptq":
        model.eval()
        prepared = dg.prepare_ptq(model, example)
        with torch.no_grad():
            for step in range(steps):
                prepared(*inputs(shapes, calibration_batch, seed=10 + step))
    elif mode == "qat":
        prepared = dg.prepare_qat(model, example)
        optimizer = torch.optim.SGD(prepared.parameters(), lr=0.01)
        for step in range(steps):
            optimizer.zero_grad()
            output = prepared(*inputs(shapes, calibration_batch, seed=10 + step))
            outputs = output if isinstance(output, tuple) else (output,)
            sum(o.square().mean() for o in outputs).backward()  # type: ignore[union-attr]
            optimizer.step()
    else:
        raise ValueError(f"unknown quantization mode {mode!r}")
    return dg.freeze_quantization(prepared)


def compile_model(
    model: nn.Module, shapes: Shapes, *, mode: str = "ptq", steps: int = 3, **export_options
) -> Compiled:
    """Quantize (`quantize`) and `dg.export` `model`, exported on a batch of `EXPORT_BATCH`."""
    shapes = tuple(tuple(s) for s in shapes)
    frozen = quantize(model, shapes, mode=mode, steps=steps)
    program = dg.export(frozen, inputs(shapes, EXPORT_BATCH, seed=2), **export_options)
    return Compiled(frozen, program, shapes)


def check_model(
    row: str, case: str, model: nn.Module, shapes: Shapes, *, mode: str = "ptq", steps: int = 3
) -> Compiled:
    """`compile_model`, then `assert_matches_frozen`: the whole standard in one call."""
    compiled = compile_model(model, shapes, mode=mode, steps=steps)
    assert_matches_frozen(row, case, compiled)
    return compiled


def assert_matches_frozen(
    row: str,
    case: str,
    compiled: Compiled,
    reference: Callable[..., object] | None = None,
    batch: int = CHECK_BATCH,
    max_lsb: int = MAX_LSB,
) -> Comparison:
    """Every output element of the program within `max_lsb` output steps of the frozen model's.

    Also: the program's host quantization parameters are the frozen model's,
    `run_int` on the frozen model's input integers gives exactly the integers
    `run` dequantized, and the frozen output is not constant (a vacuous test).
    `reference` replaces the frozen model as the expected function (same graph,
    e.g. the frozen model switched back to eval mode).
    """
    frozen, program = compiled.frozen, compiled.program
    xs = inputs(compiled.shapes, batch, seed=CHECK_SEED)
    with torch.no_grad():
        expected = _as_tuple((reference or frozen)(*xs))
    actual = _as_tuple(program.run(*xs))
    in_qparams, out_qparams = input_qparams(frozen), output_qparams(frozen)
    _assert_same_qparams(program.input_qparams, in_qparams, "input")
    _assert_same_qparams(program.output_qparams, out_qparams, "output")
    assert len(actual) == len(expected)

    quantize_op, _ = torch_quant_ops()
    stored = [
        quantize_op(x, scale, zp, -128, 127, torch.int8).numpy()
        for x, (scale, zp) in zip(xs, in_qparams, strict=True)
    ]
    device = _as_tuple(program.run_int(*stored))

    worst, differing, elements = 0, 0, 0
    for i, (got, want, ints, (scale, zp)) in enumerate(
        zip(actual, expected, device, out_qparams, strict=True)
    ):
        assert isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor)
        assert got.shape == want.shape, f"output {i}: shape {got.shape} != {want.shape}"
        want_int = on_grid(want, scale, zp, f"frozen output {i}")
        got_int = on_grid(got, scale, zp, f"program output {i}")
        assert np.array_equal(np.asarray(ints, np.int64), got_int), (
            f"output {i}: run_int disagrees with run"
        )
        assert len(np.unique(want_int)) > 1, f"output {i} of the frozen model is constant"
        lsb = np.abs(got_int - want_int)
        worst = max(worst, int(lsb.max()))
        differing += int(np.count_nonzero(lsb))
        elements += lsb.size
    comparison = Comparison(row, case, worst, differing / elements, elements)
    RESULTS.append(comparison)
    print(comparison)
    assert worst <= max_lsb, f"{comparison}: more than {max_lsb} output step(s) off"
    return comparison


def assert_layers_match_frozen(compiled: Compiled, batch: int = 1) -> dg.compare.FidelityReport:
    """Every layer's own error within `dg.compare.MAX_STEPS_OK` output steps (`Program.compare`).

    A layer's own error is measured on the frozen model's inputs to it, so it
    does not grow with depth as the end-to-end difference can: the standard of
    one step holds for every layer of any network. The model's output must be
    among the compared values (the check is not vacuous at the end).
    """
    xs = inputs(compiled.shapes, batch, seed=CHECK_SEED)
    report = compiled.program.compare(compiled.frozen, *xs)
    assert report.rows, "no layer compared"
    assert report.first_bad is None, dg.compare.verdict(report)
    return report


def on_grid(values: torch.Tensor, scale: float, zero_point: int, what: str) -> np.ndarray:
    """The integers q with values == (q - zero_point) * scale; fails if values are off the grid."""
    steps = values.detach().double().numpy() / scale + zero_point
    rounded = np.round(steps)
    assert np.allclose(steps, rounded, atol=1e-3), f"{what} is not on its quantization grid"
    return rounded.astype(np.int64)


def _as_tuple(value: object) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _assert_same_qparams(
    got: Sequence[tuple[float, int]], want: Sequence[tuple[float, int]], what: str
) -> None:
    assert len(got) == len(want), f"{len(got)} {what}s, the frozen model has {len(want)}"
    for i, ((got_scale, got_zp), (scale, zp)) in enumerate(zip(got, want, strict=True)):
        assert np.isclose(got_scale, scale, rtol=QPARAM_RTOL) and got_zp == zp, (
            f"{what} {i}: program quantizes with ({got_scale}, {got_zp}), "
            f"the frozen model with ({scale}, {zp})"
        )


# -- frozen graph queries ------------------------------------------------------------


def _scalar(gm: GraphModule, arg: object) -> float:
    if isinstance(arg, Node):
        value = gm
        for name in str(arg.target).split("."):
            value = getattr(value, name)
        return float(value)  # type: ignore[arg-type]
    return float(arg)  # type: ignore[arg-type]


def qparams_of(gm: GraphModule, node: Node) -> tuple[float, int]:
    """(scale, zero_point) of a quantize/dequantize_per_tensor node."""
    return _scalar(gm, node.args[1]), int(_scalar(gm, node.args[2]))


def input_qparams(gm: GraphModule) -> list[tuple[float, int]]:
    """The quantization the frozen model applies to each of its inputs."""
    qparams = []
    for placeholder in gm.graph.find_nodes(op="placeholder"):
        quantizes = [u for u in placeholder.users if u.target in QUANTIZE_PER_TENSOR]
        if placeholder.users:
            assert len(quantizes) == 1, f"input {placeholder} is not quantized once"
            qparams.append(qparams_of(gm, quantizes[0]))
    return qparams


GRID_PRESERVING = (
    "max_pool2d",
    "flatten",
    "view",
    "reshape",
    "permute",
    "upsample_nearest",
    "dropout",
    "clone",
    "aten.cat",
)
"""Ops that only select or move values: their float result is on their input's grid."""


def output_qparams(gm: GraphModule) -> list[tuple[float, int]]:
    """The grid of each frozen model output.

    An output comes out of a dequantize_per_tensor, possibly followed by ops
    that only move values (a final max pool or flatten need no requantize).
    """
    outputs = gm.graph.output_node().args[0]
    nodes = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    return [_grid_of(gm, node) for node in nodes]


def _grid_of(gm: GraphModule, node: object) -> tuple[float, int]:
    assert isinstance(node, Node), f"frozen output {node} is not a tensor"
    if node.target in DEQUANTIZE_PER_TENSOR:
        return qparams_of(gm, node)
    assert node.op == "call_function" and any(f in str(node.target) for f in GRID_PRESERVING), (
        f"frozen output {node} is neither dequantized from int8 nor moved from such values"
    )
    sources = node.args[0] if isinstance(node.args[0], (list, tuple)) else [node.args[0]]
    grids = {_grid_of(gm, source) for source in sources}
    assert len(grids) == 1, f"the inputs of {node} are on different grids {grids}"
    return grids.pop()


def calls_matching(gm: GraphModule, fragment: str) -> list[Node]:
    """The call_function nodes whose target's name contains `fragment`."""
    return [n for n in gm.graph.nodes if n.op == "call_function" and fragment in str(n.target)]


def line_of(function: object, snippet: str) -> int:
    """The line number (in its file) of the one line of `function` containing `snippet`."""
    lines, first = inspect.getsourcelines(function)  # type: ignore[arg-type]
    matches = [first + i for i, line in enumerate(lines) if snippet in line]
    assert len(matches) == 1, f"{snippet!r} occurs {len(matches)} times"
    return matches[0]


def format_results(results: Sequence[Comparison]) -> list[str]:
    """`results` as a Markdown table, one line per comparison."""
    lines = ["| row | case | max LSB | elements differing |", "|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r.row} | {r.case} | {r.max_lsb} | {r.differing:.2%} of {r.elements} |")
    return lines


def with_scaled_rescale(program: dg.Program, layer: str, factor: float) -> dg.Program:
    """A copy of `program` whose i8 rescale of `layer` multiplies by `factor` more."""
    from xdsl.dialects.builtin import DenseArrayBase, NameLoc, i32

    from dg.dialects import dghw

    module = program.dghw.clone()
    (op,) = [
        op
        for op in module.walk()
        if isinstance(op, dghw.RescaleOp)
        and isinstance(op.location, NameLoc)
        and op.location.desc.data == layer
        and "i8" in str(op.result.type)
    ]
    multipliers = [round(m * factor) for m in op.multiplier.get_values()]
    op.properties["multiplier"] = DenseArrayBase.from_list(i32, multipliers)
    return Program.from_dghw(module)
