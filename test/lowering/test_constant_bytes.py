"""`little_endian_bytes` (dgq_to_dghw's constants) copies a permuted weight a block of rows at a
time: the same bytes as one contiguous copy, whatever the block size."""

from __future__ import annotations

import numpy as np
import pytest

from dg.lowering.dgq_to_dghw import common


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 24])
@pytest.mark.parametrize("dtype", [np.int8, np.int32])
def test_blocks_give_the_bytes_of_one_copy(block, dtype, monkeypatch) -> None:
    weights = np.arange(5 * 3 * 4 * 2, dtype=dtype).reshape(5, 3, 4, 2) - 17
    permuted = weights.transpose(0, 2, 3, 1)  # OIHW -> OHWI: a view, not contiguous
    monkeypatch.setattr(common, "BYTES_BLOCK", block)
    assert (
        common.little_endian_bytes(permuted)
        == np.ascontiguousarray(permuted, "<i" + str(weights.itemsize)).tobytes()
    )
    assert common.little_endian_bytes(weights[1]) == weights[1].tobytes()
