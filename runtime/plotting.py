"""matplotlib for the reports' `plot` methods: an optional dependency (the `plot` extra)."""

from __future__ import annotations

from typing import Any

PLOT_EXTRA_HINT = "pip install 'dg[plot]' (or: pip install matplotlib)"


def pyplot(what: str) -> Any:
    """`matplotlib.pyplot` on the Agg backend (files only, no display), or an ImportError
    saying that `what` needs matplotlib and how to install it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(f"{what} needs matplotlib: {PLOT_EXTRA_HINT}") from error
    return plt
