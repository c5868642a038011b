"""Seed every model test alike (test/conftest.py prints the per-row LSB table of `harness`)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def seeded_weights() -> None:
    """Models get their random weights when the test builds them: make them independent of
    which tests ran before (e.g. under -k)."""
    torch.manual_seed(0)
