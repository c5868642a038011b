"""`CostReport`: `Program.cost_report`'s answer, one row per dghw op and the totals.

The numbers come from `dg.lowering.cost_model` (MACs, bytes, a roofline of estimated
cycles on a `Target`) and the memory plan (`Program.memory_plan`). Cycles and latency are
estimates for the target's figures, not measurements. An Ethos-U compilation
(`Program.compile_for_ethos_u`) can be shown beside them: Vela counts by its own rules.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from dg.lowering.cost_model import OpCost
from dg.lowering.memory_plan import MemoryPlan
from dg.lowering.target import Target
from dg.runtime.ethos_u import EthosUSummary
from dg.runtime.plotting import pyplot

ESTIMATE_NOTE = (
    "cycles and latency are estimates from the target's figures (a roofline: the larger of "
    "compute and memory time per op), not measurements"
)

COLUMNS = (
    "#",
    "op",
    "layer",
    "source",
    "MACs",
    "act read",
    "act written",
    "const read",
    "cycles",
    "bound",
)


COST_FIELDS = tuple(f.name for f in fields(OpCost) if f.compare and f.name != "name")
"""The figures of an `OpCost` a row shows (not its op, which is named by `CostRow.op`)."""
ROW_FIELDS = ("index", "op", *COST_FIELDS, "cycles", "bound")
"""A row's columns in `to_csv` and `to_dict`, in order."""


@dataclass(frozen=True)
class CostRow:
    """One dghw op's cost for one batch item: its `cost_model.OpCost` and its index among
    the ops (`row.cost.macs`, `row.cost.cycles`, ...); `row.op` is the op's name."""

    index: int
    cost: OpCost

    @property
    def op(self) -> str:
        return self.cost.name

    def to_dict(self) -> dict[str, Any]:
        """The row's `ROW_FIELDS` and their values."""
        figures = {name: getattr(self.cost, name) for name in ROW_FIELDS[2:]}
        return {"index": self.index, "op": self.op, **figures}


@dataclass
class CostReport:
    """Per-op MACs, bytes and estimated cycles of one inference, with the memory plan."""

    rows: list[CostRow]
    target: Target
    memory_plan: MemoryPlan
    ethos_u: EthosUSummary | None = field(default=None)
    """Vela's figures for the same program, when given."""

    @property
    def total_macs(self) -> int:
        return sum(row.cost.macs for row in self.rows)

    @property
    def total_cycles(self) -> float:
        return sum(row.cost.cycles for row in self.rows)

    @property
    def latency_seconds(self) -> float:
        """Estimated time of one inference at the target's clock."""
        return self.total_cycles / self.target.clock_hz

    def totals(self) -> dict[str, Any]:
        plan = self.memory_plan
        return {
            "macs": self.total_macs,
            "cycles": self.total_cycles,
            "latency_seconds": self.latency_seconds,
            "peak_bytes": plan.peak_bytes,
            "lower_bound_bytes": plan.lower_bound_bytes,
            "constant_bytes": plan.constant_bytes,
            "sram_bytes": self.target.sram_bytes,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": asdict(self.target),
            "rows": [row.to_dict() for row in self.rows],
            "totals": self.totals(),
            "ethos_u": None if self.ethos_u is None else self.ethos_u.to_dict(),
            "note": ESTIMATE_NOTE,
        }

    def to_csv(self, path: str | os.PathLike[str]) -> None:
        """One line per op, the columns `ROW_FIELDS`."""
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=ROW_FIELDS)
            writer.writeheader()
            for row in self.rows:
                writer.writerow(row.to_dict())

    def __str__(self) -> str:
        return format_cost_report(self)

    def plot(self, path: str | os.PathLike[str]) -> None:
        """Write a PNG: arena occupancy over the op sequence (peak marked), cycles per op."""
        plot_cost_report(self, path)


def _bytes(n: int) -> str:
    return f"{n:,}"


def table(rows: Sequence[Sequence[str]], header: Sequence[str], right: set[int]) -> list[str]:
    """Rows as aligned text columns under `header` (columns in `right` right-aligned)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def render(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [render(header), render(["-" * w for w in widths]), *(render(r) for r in rows)]


def format_cost_report(report: CostReport) -> str:
    lines = [
        (
            str(row.index),
            row.op.removeprefix("dghw."),
            cost.module_path or "-",
            os.path.basename(cost.source) if cost.source else "-",
            _bytes(cost.macs),
            _bytes(cost.activation_bytes_read),
            _bytes(cost.activation_bytes_written),
            _bytes(cost.constant_bytes_read),
            f"{cost.cycles:,.0f}",
            cost.bound,
        )
        for row in report.rows
        for cost in (row.cost,)
    ]
    text = table(lines, COLUMNS, {0, 4, 5, 6, 7, 8}) if lines else []
    target, plan = report.target, report.memory_plan
    text += [
        f"total: {report.total_macs:,} MACs, {report.total_cycles:,.0f} cycles, "
        f"{report.latency_seconds * 1e3:.3f} ms at {target.clock_hz / 1e6:g} MHz "
        f"(target '{target.name}')",
        f"memory: {plan.summary()}; SRAM {target.sram_bytes:,} B",
        f"note: {ESTIMATE_NOTE}",
    ]
    if report.ethos_u is not None:
        text.append(f"Ethos-U (Vela, its own counts): {report.ethos_u.summary()}")
    return "\n".join(text)


def plot_cost_report(report: CostReport, path: str | os.PathLike[str]) -> None:
    plt = pyplot("CostReport.plot")
    plan = report.memory_plan
    steps = list(range(len(plan.step_ops) + 1))
    figure, (top, bottom) = plt.subplots(
        2, 1, sharex=True, figsize=(max(7.0, 0.12 * len(steps) + 4), 6.5)
    )
    top.step(steps, plan.occupancy(), where="mid", label="highest byte in use")
    top.step(steps, plan.live_bytes(), where="mid", label="bytes live")
    top.axhline(plan.peak_bytes, color="red", linestyle="--", label=f"peak {plan.peak_bytes:,} B")
    top.axvline(plan.peak_step, color="red", linestyle=":")
    sram, highest = report.target.sram_bytes, max(plan.peak_bytes, 1)
    if sram <= 2 * highest:  # else far above the plot: the title gives it
        top.axhline(sram, color="gray", linestyle="-.", label=f"SRAM {sram:,} B")
        highest = max(highest, sram)
    top.set_ylim(0, highest * 1.15)
    top.set_ylabel("bytes per batch item")
    top.set_title(f"activation arena (SRAM {sram:,} B)")
    top.legend(fontsize="small")
    colors = ["tab:blue" if r.cost.bound == "compute" else "tab:orange" for r in report.rows]
    # Row i is the op of step i + 1 (step 0 is the inputs), as in the arena panel.
    bottom.bar(
        [r.index + 1 for r in report.rows], [r.cost.cycles for r in report.rows], color=colors
    )
    bottom.set_xlabel(
        "step: 0 the inputs, then one per op (blue: compute-bound, orange: memory-bound)"
    )
    bottom.set_ylabel("estimated cycles")
    bottom.set_title(f"cycles per op: estimates, {report.total_cycles:,.0f} in total")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
