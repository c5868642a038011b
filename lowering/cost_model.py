"""The per-op cost model behind `Program.cost_report`: MACs, bytes and estimated cycles.

Everything is per batch item (one inference), from the dghw IR and a `Target` alone:

- MACs: the multiply-accumulates of `dghw.conv2d` (OH*OW*OC * KH*KW*IC),
  `dghw.depthwise_conv2d` (OH*OW*C * KH*KW), `dghw.fully_connected` (result elements * K)
  and `dghw.matmul` (result elements * K); 0 for every other op.
- Bytes: activations read (the operands that are not constants) and written (the result),
  apart from constants read: the `dghw.constant` operands and the parameters an op carries
  (rescale multipliers and shifts, lookup tables, norm coefficients). A reshape moves no
  bytes (the planner aliases it).
- Cycles, a roofline: compute = MACs / `macs_per_cycle` for the four MAC ops, result
  elements / `elements_per_cycle` for the others; memory = activation bytes /
  `sram_bytes_per_cycle` + constant bytes / `constant_bytes_per_cycle`; the estimate is
  the larger of the two, and the op is *compute-bound* or *memory-bound* accordingly.

These are estimates of an example device (`Target`'s docstring), not measurements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from dg.dialects import dghw
from dg.lowering.diagnostics import source_of
from dg.lowering.memory_liveness import item_bytes, item_elements, tensor_bytes
from dg.lowering.target import Target

MAC_OPS = (dghw.Conv2dOp, dghw.DepthwiseConv2dOp, dghw.FullyConnectedOp, dghw.MatmulOp)


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return value.type.get_shape()


def macs(op: Operation) -> int:
    """Multiply-accumulates of one batch item (0 for ops that are not MAC ops)."""
    if not isinstance(op, MAC_OPS):
        return 0
    out = item_elements(op.results[0]) or 0
    match op:
        case dghw.Conv2dOp():
            _, kh, kw, ic = _shape(op.weight)
            return out * kh * kw * ic
        case dghw.DepthwiseConv2dOp():
            kh, kw, _ = _shape(op.weight)
            return out * kh * kw
        case dghw.FullyConnectedOp():
            return out * _shape(op.weight)[1]
        case dghw.MatmulOp():
            return out * _shape(op.lhs)[-1]
    return 0


def parameter_bytes(op: Operation) -> int:
    """Bytes of the constant data an op carries in its properties."""
    match op:
        case dghw.RescaleOp():
            return 4 * (len(op.multiplier.get_values()) + len(op.shift.get_values()))
        case dghw.TableOp():
            return len(op.table.get_values())
        case dghw.SoftmaxOp():
            return 4 * len(op.exp_table.get_values())
        case dghw.NormOp():
            return 4 * len(op.multiplier.get_values()) + 8 * len(op.bias.get_values())
    return 0


def is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, dghw.ConstantOp)


@dataclass(frozen=True)
class OpCost:
    """The cost of one dghw op for one batch item (module docstring)."""

    op: Operation = field(repr=False, compare=False)
    name: str
    source: str
    module_path: str
    macs: int
    activation_bytes_read: int
    activation_bytes_written: int
    constant_bytes_read: int
    compute_cycles: float
    memory_cycles: float

    @property
    def cycles(self) -> float:
        return max(self.compute_cycles, self.memory_cycles)

    @property
    def bound(self) -> str:
        """ "compute" or "memory": which side of the roofline sets `cycles`."""
        return "compute" if self.compute_cycles >= self.memory_cycles else "memory"


def op_cost(op: Operation, target: Target) -> OpCost:
    """The cost of `op` on `target` (module docstring)."""
    module_path, source = source_of(op)
    moves = not isinstance(op, dghw.ReshapeOp)
    read = sum(item_bytes(v) for v in op.operands if not is_constant(v)) if moves else 0
    written = sum(item_bytes(r) for r in op.results) if moves else 0
    constants = sum(tensor_bytes(v) for v in op.operands if is_constant(v)) + parameter_bytes(op)
    op_macs = macs(op)
    if isinstance(op, MAC_OPS):
        compute = op_macs / target.macs_per_cycle
    else:
        elements = sum(item_elements(r) or 0 for r in op.results) if moves else 0
        compute = elements / target.elements_per_cycle
    memory = (read + written) / target.sram_bytes_per_cycle
    memory += constants / target.constant_bytes_per_cycle
    return OpCost(
        op, op.name, source, module_path, op_macs, read, written, constants, compute, memory
    )


def function_costs(function: func.FuncOp, target: Target) -> list[OpCost]:
    """One `OpCost` per dghw op of `function` that runs (constants and the return are none)."""
    return [
        op_cost(op, target)
        for op in function.body.block.ops
        if op.name.startswith("dghw.") and not isinstance(op, dghw.ConstantOp)
    ]
