"""`Target`: what dg assumes about the device it compiles for, and the SRAM fit check.

The defaults are an example configuration, not a measured chip: a small NPU at 500 MHz
with 128 int8 MACs per cycle (Arm's Ethos-U55-128 has that many), 1 MiB of SRAM and
the bandwidths below. The cost report's cycles are estimates from these numbers
(`cost_model`), never measurements; give your own device's figures for your own estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from dg.lowering.diagnostics import LoweringProblem, Reason, raise_problems
from dg.lowering.memory_plan import MemoryPlan

LARGEST_SHOWN = 3
"""How many of the tensors live at the peak the SRAM diagnostic names."""


@dataclass(frozen=True)
class Target:
    """The device a program is planned and costed for (an example configuration by default)."""

    sram_bytes: int = 1 << 20
    """On-chip SRAM for the activation arena of one batch item."""
    clock_hz: float = 500e6
    macs_per_cycle: int = 128
    """int8 multiply-accumulates per cycle of conv2d, depthwise, fully connected, matmul."""
    elements_per_cycle: int = 16
    """Result elements per cycle of every other op (rescale, add, pooling, tables, moves)."""
    sram_bytes_per_cycle: float = 16.0
    """Activation bytes read or written per cycle (the arena is in SRAM)."""
    constant_bytes_per_cycle: float = 8.0
    """Constant bytes (weights, biases) read per cycle (from flash or DRAM)."""
    name: str = "example"

    def __post_init__(self) -> None:
        for field_name in (
            "sram_bytes",
            "clock_hz",
            "macs_per_cycle",
            "elements_per_cycle",
            "sram_bytes_per_cycle",
            "constant_bytes_per_cycle",
        ):
            if not getattr(self, field_name) > 0:
                raise ValueError(f"Target.{field_name} must be positive")


OVER_BUDGET = Reason(
    "sram-over-budget",
    "the activation arena peaks here at {peak:,} bytes per batch item, over the SRAM budget "
    "of {budget:,} bytes by {excess:,}; the largest tensors live here: {largest}",
    "make the input smaller, give this layer fewer channels (or split it), or give the "
    "target more SRAM (Target.sram_bytes)",
)


def over_budget(plan: MemoryPlan, budget: int) -> LoweringProblem | None:
    """The problem of a plan whose arena exceeds `budget` bytes, at the op of its peak."""
    if plan.peak_bytes <= budget:
        return None
    live = sorted(plan.live_at(plan.peak_step), key=lambda b: -b.size)[:LARGEST_SHOWN]
    fields = {
        "peak": plan.peak_bytes,
        "budget": budget,
        "excess": plan.peak_bytes - budget,
        "largest": "; ".join(str(b) for b in live),
    }
    return OVER_BUDGET.at(plan.peak_op, **fields)


def check_sram_budget(pass_name: str, plan: MemoryPlan, budget: int) -> None:
    """Fail `pass_name` when the plan's arena does not fit `budget` bytes."""
    problem = over_budget(plan, budget)
    if problem is not None:
        raise_problems(pass_name, [problem])
