"""Make the scalar reference (test/reference) importable from the runtime tests, and run
modules on both GEMM paths (`both_gemm_paths`)."""

import sys
from pathlib import Path

import pytest

from dg.runtime.int8_gemm import NOT_EXACT_HERE, int8_gemm_is_exact, int8_gemms

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))


@pytest.fixture(scope="module", params=["float32-gemms", "int8-gemms"])
def both_gemm_paths(request):
    """A module's tests with conv2d and fully_connected weights prepared for float32 GEMMs,
    then for int8 GEMMs (`int8_gemms`): each path is taken whatever this CPU would choose.
    The int8 path is skipped only where torch's int8 GEMM fails the worst cases."""
    enabled = request.param == "int8-gemms"
    if enabled and not int8_gemm_is_exact():
        pytest.skip(NOT_EXACT_HERE)
    with int8_gemms(enabled):
        yield request.param
