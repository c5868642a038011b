"""The report as a PNG: SQNR and saturation per layer (matplotlib, the `plot` extra)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np

from dg.compare.rows import MAX_STEPS_OK, LayerRow
from dg.runtime.plotting import pyplot


def plot_report(
    rows: Sequence[LayerRow], first_bad: LayerRow | None, path: str | os.PathLike[str]
) -> None:
    """SQNR and saturation per layer as a PNG (matplotlib, the `plot` extra).

    `first_bad` (`FidelityReport.first_bad`) is marked on both panels.
    """
    plt = pyplot("FidelityReport.plot")

    x = np.arange(len(rows))
    ceiling = exact_ceiling(rows)

    def shown(values: Sequence[float | None]) -> list[float]:
        return [math.nan if v is None else min(v, ceiling) for v in values]

    figure, (top, bottom) = plt.subplots(
        2, 1, sharex=True, figsize=(max(6.0, 0.6 * len(rows) + 2), 6)
    )
    top.plot(x, shown([r.sqnr_fake_quant_db for r in rows]), "o-", label="vs fake-quant model")
    if any(r.sqnr_float_db is not None for r in rows):
        top.plot(x, shown([r.sqnr_float_db for r in rows]), "s-", label="vs float model")
    top.axhline(ceiling, color="grey", linestyle=":", linewidth=0.8)
    top.annotate(
        "exact (= fake-quant)",
        (1, ceiling),
        xycoords=("axes fraction", "data"),
        xytext=(-4, 4),
        textcoords="offset points",
        ha="right",
        color="grey",
    )
    top.set_ylim(top=ceiling + 0.12 * ceiling)
    top.set_ylabel("SQNR of the device (dB)")
    top.set_title("Where does my accuracy go? (per layer)")
    top.legend(loc="lower left")
    bottom.bar(x, [100 * r.saturated_share for r in rows], color="tab:red")
    bottom.set_ylabel("saturated values (%)")
    if first_bad is not None:
        for axis in (top, bottom):
            axis.axvline(first_bad.index, color="tab:red", linestyle="--", linewidth=1)
        top.annotate(
            f"first > {MAX_STEPS_OK} step",
            (first_bad.index, ceiling),
            xytext=(4, -14),
            textcoords="offset points",
            color="tab:red",
        )
    bottom.set_xticks(x, [f"{row.index} {row.layer}" for row in rows], rotation=45, ha="right")
    figure.tight_layout()
    figure.savefig(os.fspath(path), format="png", dpi=100)
    plt.close(figure)


def exact_ceiling(rows: Sequence[LayerRow]) -> float:
    """Where "exact" (an infinite SQNR) is drawn: 10 dB above the best finite SQNR."""
    finite = [
        v
        for row in rows
        for v in (row.sqnr_float_db, row.sqnr_fake_quant_db)
        if v is not None and math.isfinite(v)
    ]
    return (max(finite) if finite else 40.0) + 10.0
