"""Seed the deployment tests' models alike whichever tests ran before."""

import pytest
import torch


@pytest.fixture(autouse=True)
def seeded_weights() -> None:
    torch.manual_seed(0)
