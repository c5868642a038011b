"""`compare`: one batch through the device, the frozen and the float model, a row per layer."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch.fx import GraphModule
from xdsl.ir import BlockArgument, Operation, SSAValue

from dg.compare.device import DeviceValues
from dg.compare.frozen import (
    QuantizationPoint,
    float_values,
    pair_float_values,
    quantization_points,
)
from dg.compare.report import FidelityReport
from dg.compare.rows import LayerRow, sqnr_db
from dg.lowering.diagnostics import source_of
from dg.runtime.interpreter import Saturation, SaturationCounter, ValueRecorder
from dg.runtime.program import Program


def compare(
    program: Program,
    frozen: GraphModule,
    device_inputs: Sequence[np.ndarray],
    frozen_inputs: Sequence[torch.Tensor],
    float_model: torch.nn.Module | None = None,
) -> FidelityReport:
    """The per-layer report of `program` on one batch (the `dg.compare` docstring).

    `device_inputs` are what the device reads (int8 / int32 arrays), `frozen_inputs`
    what the frozen and float models read; their int8 quantization is `device_inputs`.
    """
    points = quantization_points(frozen, frozen_inputs)
    floats = float_values(float_model, frozen_inputs) if float_model is not None else {}
    paired = pair_float_values(points, floats)
    recorder, saturation = ValueRecorder(), SaturationCounter()
    program.device(device_inputs, listeners=(recorder, saturation))
    device = DeviceValues(program, device_inputs, recorder)
    rows: list[LayerRow] = []
    unmatched: list[str] = []
    for point, float_value in zip(points, paired, strict=True):
        value = device.match(point)
        if value is None:
            unmatched.append(point.node_name)
            continue
        rows.append(layer_row(len(rows), point, device, value, float_value, saturation))
    return FidelityReport(rows, unmatched)


def layer_row(
    index: int,
    point: QuantizationPoint,
    device: DeviceValues,
    value: SSAValue,
    float_value: np.ndarray | None,
    saturation: SaturationCounter,
) -> LayerRow:
    array = device.reading(value, point)
    steps = np.abs(array.astype(np.int64) - point.values.astype(np.int64))
    own = device.layouts[value].to_model(device.own_result(value))
    own_steps = np.abs(own.astype(np.int64) - point.values.astype(np.int64))
    dequantized = (array.astype(np.float64) - point.zero_point) * point.scale
    fake_quant = (point.values.astype(np.float64) - point.zero_point) * point.scale
    ops = device.layer_ops(value) if isinstance(value.owner, Operation) else []
    counts = [saturation.counts.get(op, Saturation(0, 0, 0)) for op in ops]
    saturated = sum(c.total for c in counts)
    elements = max((c.elements for c in counts), default=0)
    module_path, where = source_of(value.owner) if isinstance(value.owner, Operation) else ("", "")
    if isinstance(value, BlockArgument):
        layer = f"input #{value.index}"
    else:
        layer = module_path or point.module_path or point.op
    return LayerRow(
        index=index,
        layer=layer,
        source=where or (f"{point.file}:{point.line}" if point.file else ""),
        op=point.op,
        device_ops=tuple(op.name.removeprefix("dghw.") for op in ops),
        scale=point.scale,
        elements=int(array.size),
        sqnr_float_db=None if float_value is None else sqnr_db(float_value, dequantized),
        sqnr_fake_quant_db=sqnr_db(fake_quant, dequantized),
        max_steps=int(steps.max(initial=0)),
        own_steps=int(own_steps.max(initial=0)),
        differing=float(np.count_nonzero(steps) / max(steps.size, 1)),
        saturated=saturated,
        saturated_share=saturated / elements if elements else 0.0,
    )
