"""Make the scalar reference (test/reference) importable from the runtime tests, and run
modules on both GEMM paths (`both_gemm_paths`), in both pass forms (`both_pass_forms`), and
with numpy kernels split over two threads (`numpy_parts`); `spy` records a function's calls."""

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dg.runtime import threads
from dg.runtime.int8_gemm import NOT_EXACT_HERE, int8_gemm_is_exact, int8_gemms
from dg.runtime.kernels import common
from dg.runtime.kernels.requantization import ScaledGemm

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


@pytest.fixture(scope="module", params=["numpy-passes", "torch-passes"])
def both_pass_forms(request):
    """A module's tests with every pass that has a numpy and a torch form (`runs_in_torch`)
    in numpy's, then in torch's, whatever the size of their maps."""
    least = 1 << 62 if request.param == "numpy-passes" else 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(common, "TORCH_MIN_ELEMENTS", least)
        yield request.param


@pytest.fixture(params=[1, 2], ids=["one-thread", "numpy-parts-on-two-threads"])
def numpy_parts(request, monkeypatch):
    """A test on one caller's thread, then on two with every numpy kernel's blocks split over
    them whatever the map's size (`PARALLEL_NUMPY_WORK` 0): the thread count it ran with."""
    monkeypatch.setattr(threads, "PARALLEL_NUMPY_WORK", 0)
    with threads.torch_threads(request.param):
        yield request.param


@pytest.fixture
def spy(monkeypatch) -> Callable[..., list[Any]]:
    """`spy(owner, name, record)`: `owner.name` replaced by itself recording `record(*args,
    **kwargs)` of each call (True by default), or with `returns`, `record(result)` (the
    result by default), in the list it returns, in order; `into` shares one list between
    spies. Restored after the test."""

    def wrap(
        owner: Any,
        name: str,
        record: Callable[..., Any] | None = None,
        into: list[Any] | None = None,
        returns: bool = False,
    ) -> list[Any]:
        calls: list[Any] = [] if into is None else into
        original = getattr(owner, name)
        kept = record or ((lambda result: result) if returns else (lambda *a, **kw: True))

        def recorded(*args: Any, **kwargs: Any) -> Any:
            if not returns:
                calls.append(kept(*args, **kwargs))
                return original(*args, **kwargs)
            result = original(*args, **kwargs)
            calls.append(kept(result))
            return result

        monkeypatch.setattr(owner, name, recorded)
        return calls

    return wrap


@pytest.fixture
def scaled_gemm_calls(spy) -> list[tuple[int, int]]:
    """(rows, columns) of each `ScaledGemm.apply` the test makes, in order."""
    return spy(ScaledGemm, "apply", lambda self, rows: (len(rows), self.matrix.shape[1]))
