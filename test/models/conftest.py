"""Seed every model test alike, and print the per-row LSB table at the end of the session."""

from __future__ import annotations

import harness
import pytest
import torch


@pytest.fixture(autouse=True)
def seeded_weights() -> None:
    """Models get their random weights when the test builds them: make them independent of
    which tests ran before (e.g. under -k)."""
    torch.manual_seed(0)


def pytest_terminal_summary(terminalreporter) -> None:
    if not harness.RESULTS:
        return
    terminalreporter.section("dg model rows: program vs frozen model, in output LSB")
    for line in harness.format_results(harness.RESULTS):
        terminalreporter.write_line(line)
