"""`FidelityReport`: the rows of one comparison, as a table with its verdict."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from dg.compare.plot import plot_report
from dg.compare.rows import MAX_STEPS_OK, LayerRow


@dataclass
class FidelityReport:
    """`Program.compare`'s answer: one `LayerRow` per activation quantization, in graph order."""

    rows: list[LayerRow]
    unmatched: list[str] = field(default_factory=list)
    """Quantize nodes of the frozen model with no device value to compare (by node name)."""

    @property
    def first_bad(self) -> LayerRow | None:
        """The first layer whose own error exceeds one step: where to look when accuracy drops.

        Its own error (`LayerRow.own_steps`), because one-step ties of earlier layers
        can add up to more than a step downstream without any layer being wrong.
        """
        return next((row for row in self.rows if row.own_steps > MAX_STEPS_OK), None)

    def to_dict(self) -> dict[str, Any]:
        first = self.first_bad
        return {
            "rows": [asdict(row) for row in self.rows],
            "first_bad": None if first is None else first.index,
            "unmatched": list(self.unmatched),
        }

    def __str__(self) -> str:
        return format_report(self)

    def plot(self, path: str | os.PathLike[str]) -> None:
        """Write a PNG: SQNR per layer (float and fake-quant), saturation per layer."""
        plot_report(self.rows, self.first_bad, path)


COLUMNS = (
    "#",
    "layer",
    "source",
    "op",
    "device ops",
    "SQNR float",
    "SQNR fq",
    "max Δ",
    "own Δ",
    "differ",
    "saturated",
)


def _db(value: float | None) -> str:
    if value is None:
        return "-"
    return "exact" if value == math.inf else f"{value:.1f} dB"


def _share(value: float) -> str:
    """A percentage that does not round a few differing elements away to 0.00%."""
    return "<0.01%" if 0 < value < 0.0001 else f"{value:.2%}"


def format_report(report: FidelityReport) -> str:
    """The report as an aligned text table, followed by its verdict."""
    lines = [
        (
            str(row.index),
            row.layer,
            os.path.basename(row.source) if row.source else "-",
            row.op,
            "+".join(row.device_ops) or "-",
            _db(row.sqnr_float_db),
            _db(row.sqnr_fake_quant_db),
            str(row.max_steps),
            str(row.own_steps),
            _share(row.differing),
            f"{row.saturated} ({_share(row.saturated_share)})" if row.saturated else "0",
        )
        for row in report.rows
    ]
    widths = [max(len(c), *(len(line[i]) for line in lines)) for i, c in enumerate(COLUMNS)]
    right = {0, 5, 6, 7, 8, 9, 10}

    def render(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    text = [render(COLUMNS), render(["-" * w for w in widths]), *(render(line) for line in lines)]
    text.append(verdict(report))
    if report.unmatched:
        text.append(f"not compared (no device value found): {', '.join(report.unmatched)}")
    return "\n".join(text)


def verdict(report: FidelityReport) -> str:
    first = report.first_bad
    if first is None:
        return f"every layer's own error is within {MAX_STEPS_OK} step of the fake-quant model"
    where = f" at {first.source}" if first.source else ""
    return (
        f"first layer whose own error exceeds {MAX_STEPS_OK} step: #{first.index} {first.layer}"
        f"{where} (max {first.own_steps} steps on the fake-quant model's inputs, "
        f"{first.max_steps} end to end; {_share(first.differing)} of its elements differ)"
    )
