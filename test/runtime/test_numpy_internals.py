"""What dg's device model relies on inside numpy, pinned: `numpy._core.umath.clip`, the ufunc
`np.clip` calls, which `clip_in_place` calls directly (runtime/kernels/common.py). A numpy
upgrade that moves or changes it fails here first."""

from __future__ import annotations

import numpy as np
import pytest
from numpy._core import umath

from dg.runtime.kernels.common import clip_in_place


def test_the_clip_ufunc_is_the_one_np_clip_calls(spy):
    assert isinstance(umath.clip, np.ufunc) and umath.clip.nin == 3
    calls = spy(umath, "clip")
    np.clip(np.zeros(4), 0.0, 1.0)
    assert len(calls) == 1


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_clip_in_place_is_np_clip(dtype):
    """In place, over the bounds and between them, NaN-free inputs as dg gives it."""
    v = np.array([-300.5, -128, -1.5, 0, 0.25, 254.75, 255, 256, 1e30], np.float64)
    v = v.astype(dtype) if dtype != np.int64 else np.array([-(1 << 62), -1, 0, 7, 1 << 62])
    want = np.clip(v, 0, 255)
    clip_in_place(v, 0, 255)
    np.testing.assert_array_equal(v, want)
