"""Random models built from the supported rows, and the two checks every one of them must pass.

A model is described by a `Graph`: an input shape and a chain of layer specs
(frozen dataclasses, so a failing case prints as Python that rebuilds it and
can be pasted into a regression test). `image_graphs()` and
`sequence_graphs()` are hypothesis strategies that only draw what the rows of
`shared/spec/supported-pytorch-ops.txt` allow: relu only as a fusion tail,
F.pad only right before a Conv2d or AvgPool2d, no max-pool padding, nearest
resizes by whole factors, slices of sequence tensors only, and so on.

`check_graph` runs one model the way a user does (prepare_ptq -> calibrate ->
freeze -> export -> run) and returns an `Outcome`:

1. the program is within one output step of the frozen model on every element
   (`harness.assert_matches_frozen`, the standard of every model test);
2. the device model (`run_int`) equals the scalar reference
   (`dghw_reference.run_module`) on the same compiled program, exactly.

`rejected_graphs()` draws models that break one row's constraint;
`check_rejected` requires a `dg.ExportError` for them, never another exception
and never a silently compiled program.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

import dghw_reference as ref
import harness
import numpy as np
import torch
import torch.nn.functional as F
from arena_check import arena_mismatch
from fuzz_layers import (  # noqa: F401 - re-exported
    FLATTENS,
    MAX_SIDE,
    REFERENCE_BATCH,
    Attention,
    AttentionBlock,
    AvgPool,
    Cat,
    CatBlock,
    Conv,
    Flatten,
    Graph,
    Interpolate,
    Layer,
    Linear,
    LinearBlock,
    MaxPool,
    MulConstant,
    PaddedConv,
    PaddedPool,
    Parts,
    Residual,
    ResidualBlock,
    SequenceCat,
    SequenceCatBlock,
    SequenceResidual,
    SequenceResidualBlock,
    Shape,
    Sigmoid,
    Slice,
    Softmax,
    TimesConstant,
    TokenMean,
    Transpose,
    window_out,
)
from fuzz_strategies import (  # noqa: F401 - re-exported
    attentions,
    avg_pools,
    cats,
    convs,
    graphs,
    image_graphs,
    image_layers,
    informative,
    interpolations,
    max_pools,
    mul_constants,
    pairs,
    sequence_graphs,
    sequence_layers,
    vector_heads,
)
from hypothesis import strategies as st
from torch import nn

import dg
from dg.runtime.program import torch_quant_ops

# -- the checks ------------------------------------------------------------------------------


PASSING = frozenset({"passed", "lsb-propagated", "diagnosed", "still-valid"})
"""The outcomes that are not failures (`classify_lsb` says why "lsb-propagated" is not);
"diagnosed" and "still-valid" are the dg-opt mutants'."""


@dataclass(frozen=True)
class Outcome:
    """`kind` is "passed" or the kind of failure; `detail` says what happened."""

    kind: str
    detail: str = ""
    max_lsb: int | None = None

    @property
    def passed(self) -> bool:
        return self.kind in PASSING


def check_graph(graph: Graph) -> Outcome:
    """Compile `graph` as a user does; device vs frozen, then device vs scalar reference."""
    try:
        compiled = harness.compile_model(graph.build(), [graph.input_shape])
    except dg.ExportError as error:
        return Outcome("rejected", str(error))
    except Exception:  # noqa: BLE001 - any other exception is a crash of dg (or torch)
        return Outcome("crash-compile", traceback.format_exc(limit=-6))
    try:
        comparison = harness.assert_matches_frozen("fuzz", repr(graph), compiled)
    except AssertionError as error:
        if "output step" in str(error):
            return classify_lsb(graph, str(error))
        return Outcome("vacuous" if "constant" in str(error) else "harness", str(error))
    except Exception:  # noqa: BLE001
        return Outcome("crash-run", traceback.format_exc(limit=-6))
    mismatch = reference_mismatch(compiled) if within_reference_budget(graph) else ""
    if mismatch:
        return Outcome("reference", mismatch, comparison.max_lsb)
    mismatch = arena_mismatch(compiled.program)
    if mismatch:
        return Outcome("arena", mismatch, comparison.max_lsb)
    return Outcome("passed", max_lsb=comparison.max_lsb)


def prefix_lsb(graph: Graph, layers: int) -> int | None:
    """Max output steps between device and frozen model of the first `layers` layers.

    The prefix model is the full model's front: same weights (`Graph.build` seeds
    them in layer order) and same calibration data, so the same grids. None when
    it does not compile or its output is constant.
    """
    prefix = Graph(graph.input_shape, graph.layers[:layers])
    try:
        compiled = harness.compile_model(prefix.build(), [prefix.input_shape])
        return harness.assert_matches_frozen(
            "fuzz prefix", repr(prefix), compiled, max_lsb=255
        ).max_lsb
    except (AssertionError, dg.ExportError):
        return None


def classify_lsb(graph: Graph, message: str) -> Outcome:
    """More than one step off: a layer's own error, or an upstream step grown by later layers?

    docs/dghw.md: dghw and torch round ties differently (rescale: half up vs half
    to even; avg pool: half away from zero), so single elements differ by one step,
    and a later layer that multiplies (a conv, a Linear, a mul by a constant
    larger than one output step) turns one step of its input into several of its
    output. That is the quantized model's own sensitivity, not a miscompile: the
    outcome is "lsb-propagated" when the model up to the layer before the first
    one over one step already differed. "lsb" when a layer is more than one step
    off on inputs that agreed exactly: a compiler bug.
    """
    previous = 0
    for n in range(1, len(graph.layers) + 1):
        lsb = prefix_lsb(graph, n) if n < len(graph.layers) else 2
        if lsb is None or lsb <= 1:
            previous = lsb if lsb is not None else previous
            continue
        layer = graph.layers[n - 1]
        where = f"layer {n} ({type(layer).__name__}) is the first more than one step off"
        if previous >= 1:
            return Outcome("lsb-propagated", f"{where}; its input already differed by {previous}")
        return Outcome("lsb", f"{where}, on inputs that agreed exactly\n{message}")
    return Outcome("lsb", message)


REFERENCE_BUDGET = 2_000_000
"""Multiply-adds per sample up to which the scalar reference re-runs a graph: it loops in
Python over every one, and a 64-channel 32x32 conv alone has tens of millions."""


def within_reference_budget(graph: Graph) -> bool:
    """Whether `graph`'s weight ops cost at most `REFERENCE_BUDGET` multiply-adds a sample."""
    from torch.utils.flop_counter import FlopCounterMode

    model = graph.build().eval()
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(torch.zeros(1, *graph.input_shape))
    return counter.get_total_flops() // 2 <= REFERENCE_BUDGET


def device_inputs(compiled: harness.Compiled, batch: int) -> list[np.ndarray]:
    """Int8 inputs the way the host makes them from a float batch."""
    quantize, _ = torch_quant_ops()
    xs = harness.inputs(compiled.shapes, batch, seed=harness.CHECK_SEED + 1)
    return [
        quantize(x, scale, zp, -128, 127, torch.int8).numpy()
        for x, (scale, zp) in zip(xs, compiled.program.input_qparams, strict=True)
    ]


def reference_mismatch(compiled: harness.Compiled) -> str:
    """ "" if the device model's integers are the scalar reference's, else what differs."""
    arrays = device_inputs(compiled, REFERENCE_BATCH)
    device = compiled.program.run_int(*arrays)
    device = list(device) if isinstance(device, (tuple, list)) else [device]
    expected = ref.run_module(compiled.program.dghw, arrays)
    for i, (got, want) in enumerate(zip(device, expected, strict=True)):
        if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
            return (
                f"output {i}: device {got.dtype}{list(got.shape)} != "
                f"reference {want.dtype}{list(want.shape)}; "
                f"{int(np.count_nonzero(np.asarray(got) != np.asarray(want)))} elements differ"
            )
    return ""


# -- models dg must reject -------------------------------------------------------------------

REJECTED: dict[str, tuple[str, object]] = {
    # name: (domain, tail applied to the conv / linear output)
    "standalone_relu_after_pool": ("image", lambda y: F.relu(F.max_pool2d(y, 2))),
    "gelu": ("image", F.gelu),
    "tanh": ("sequence", torch.tanh),
    "silu": ("image", F.silu),
    "permute": ("image", lambda y: y.permute(0, 1, 3, 2)),
    "standalone_pad": ("image", lambda y: F.pad(y, (1, 1, 1, 1))),
    "pad_before_max_pool": ("image", lambda y: F.max_pool2d(F.pad(y, (1, 1, 1, 1)), 2)),
    "max_pool_padding": ("image", lambda y: F.max_pool2d(y, 3, 1, padding=1)),
    "mul_by_scalar": ("sequence", lambda y: y * 3.0),
    "expand": ("sequence", lambda y: y[:, :1].expand(-1, 4, -1)),
    "repeat": ("sequence", lambda y: y.repeat(1, 2, 1)),
    "slice_of_feature_map": ("image", lambda y: y[:, :, 1:3]),
    "slice_step_2": ("sequence", lambda y: y[:, ::2]),
    "interpolate_bilinear": ("image", lambda y: F.interpolate(y, scale_factor=2, mode="bilinear")),
    "activation_times_activation": ("sequence", lambda y: y * y),
    "transpose_batch_axis": ("sequence", lambda y: y.transpose(0, 1)),
    "cat_batch_axis": ("sequence", lambda y: torch.cat((y, y), dim=0)),
    "batch_hard_coded": ("sequence", lambda y: y.view(2, -1)),
    "pad_nonzero_value_before_conv": ("image", "pad_value"),
    "conv_transpose": ("image", "conv_transpose"),
    "grouped_conv": ("image", "grouped"),
}


class RejectedModel(nn.Module):
    def __init__(self, name: str, features: int, channels: int):
        super().__init__()
        domain, tail = REJECTED[name]
        self.stem = (
            nn.Conv2d(channels, 4, 3, padding=1) if domain == "image" else nn.Linear(features, 6)
        )
        self.tail = tail
        if tail == "pad_value" or tail == "grouped":
            self.conv = nn.Conv2d(4, 4, 3, groups=2 if tail == "grouped" else 1)
        elif tail == "conv_transpose":
            self.conv = nn.ConvTranspose2d(4, 2, 2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.stem(x)
        if self.tail == "pad_value":
            return self.conv(F.pad(y, (1, 1, 1, 1), value=0.5))
        if isinstance(self.tail, str):
            return self.conv(y)
        return self.tail(y)


@dataclass(frozen=True)
class Rejected:
    name: str
    shape: Shape = field(default=(3, 6, 6))

    def input_shape(self) -> Shape:
        return (self.shape[0], *self.shape[1:]) if REJECTED[self.name][0] == "image" else (4, 5)

    def build(self) -> nn.Module:
        torch.manual_seed(0)
        shape = self.input_shape()
        return RejectedModel(self.name, shape[-1], shape[0])


@st.composite
def rejected_graphs(draw) -> Rejected:
    name = draw(st.sampled_from(sorted(REJECTED)))
    return Rejected(
        name, (draw(st.integers(1, 3)), draw(st.integers(4, 7)), draw(st.integers(4, 7)))
    )


def check_rejected(model: Rejected) -> Outcome:
    """dg must raise `ExportError` with at least one problem; anything else is a failure."""
    try:
        harness.compile_model(model.build(), [model.input_shape()])
    except dg.ExportError as error:
        if not error.problems or not all(p.reason for p in error.problems):
            return Outcome("empty-problem", str(error))
        return Outcome("passed", str(error))
    except Exception:  # noqa: BLE001
        return Outcome("crash-reject", traceback.format_exc(limit=-6))
    return Outcome("accepted", f"{model} compiled without an ExportError")


def summarize(outcomes: Sequence[Outcome]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.kind] = counts.get(outcome.kind, 0) + 1
    return counts
