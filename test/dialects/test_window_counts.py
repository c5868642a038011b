"""The pooling window counts of the verifiers agree with torch's, floor and ceil mode."""

from __future__ import annotations

import itertools

import pytest
import torch
from xdsl.utils.exceptions import VerifyException

from dg.dialects.common import window_counts

# Every small configuration torch accepts: padding at most half the kernel.
CASES = [
    (size, kernel, stride, pad)
    for size, kernel, stride, pad in itertools.product(
        range(1, 9), range(1, 5), range(1, 4), (0, 1, 2)
    )
    if 2 * pad <= kernel <= size + 2 * pad
]


@pytest.mark.parametrize("ceil_mode", [False, True], ids=["floor", "ceil"])
def test_counts_match_torch(ceil_mode: bool) -> None:
    mismatches = []
    for size, kernel, stride, pad in CASES:
        x = torch.zeros(1, 1, size, 1)
        window = (kernel, 1)
        torch_counts = {
            torch.nn.functional.max_pool2d(
                x, window, (stride, 1), (pad, 0), ceil_mode=ceil_mode
            ).shape[2],
            torch.nn.functional.avg_pool2d(
                x, window, (stride, 1), (pad, 0), ceil_mode=ceil_mode
            ).shape[2],
        }
        ours = window_counts(size, kernel, stride, pad, pad)[int(ceil_mode)]
        if torch_counts != {ours}:
            mismatches.append(((size, kernel, stride, pad), ours, torch_counts))
    assert not mismatches


def test_ceil_mode_never_drops_below_floor() -> None:
    # A folded F.pad may pad more than the kernel; ceil mode then still has the floor count.
    assert window_counts(4, 2, 2, 0, 2) == (3, 3)


def test_window_larger_than_padded_input() -> None:
    with pytest.raises(VerifyException, match="exceeds the padded input extent 3"):
        window_counts(2, 4, 1, 1, 0)
