"""`blas_threads`: the threads of the BLAS numpy's matmul calls, not of another package's BLAS,
read once per device call; what `one_thread_matmul` decides by it."""

from __future__ import annotations

import os
from types import SimpleNamespace

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_limits

from dg.runtime import exact
from dg.runtime.exact import SMALL_GEMM_MACS, blas_threads_read_once, numpys_blas
from dg.runtime.interpreter import DeviceModel

D = 32
ROWS = SMALL_GEMM_MACS // (D * D) + 64
"""FC rows past `SMALL_GEMM_MACS` multiply-adds: `one_thread_matmul` reads the BLAS threads."""


def library(path: str) -> SimpleNamespace:
    return SimpleNamespace(filepath=path)


def test_numpys_own_blas_is_the_one_in_its_wheels_directory():
    site = os.path.dirname(os.path.dirname(os.path.abspath(np.__file__)))
    own = library(os.path.join(site, "numpy.libs", "libscipy_openblas64_-abc.so"))
    other = library(os.path.join(site, "scipy.libs", "libscipy_openblas-def.so"))
    assert numpys_blas(SimpleNamespace(lib_controllers=[other, own])) == [own]


def test_every_blas_counts_for_a_numpy_without_its_own():
    libraries = [library("/usr/lib/libopenblas.so.0"), library("/opt/lib/libmkl_rt.so")]
    assert numpys_blas(SimpleNamespace(lib_controllers=libraries)) == libraries


def test_another_packages_blas_threads_do_not_split_numpys_gemms(spy):
    """scipy's OpenBLAS at two threads, numpy's at one (a process limited before scipy
    loaded): one numpy call for the GEMM, as for any BLAS of one thread."""
    pytest.importorskip("scipy.linalg", reason="scipy (scikit-learn's) brings the second BLAS")
    with threadpool_limits(1, user_api="blas"):
        others = [
            lib
            for lib in ThreadpoolController().select(user_api="blas").lib_controllers
            if lib.filepath not in {own.filepath for own in numpys_blas(exact._blas())}
        ]
        assert others, "scipy's OpenBLAS is loaded beside numpy's"
        for lib in others:
            lib.set_num_threads(2)
        calls = spy(np, "matmul", lambda a, b, **kwargs: len(a))
        lhs, rhs = np.ones((ROWS, D)), np.ones((D, D))
        assert exact.blas_threads() == 1
        np.testing.assert_array_equal(exact.one_thread_matmul(lhs, rhs), np.full((ROWS, D), D))
    assert calls == [ROWS]


def two_fcs_module(rng: np.random.Generator):
    """x [?, D] -> FC -> rescale -> FC -> rescale, and the reference's weights."""
    layers = [
        (rng.integers(-128, 128, (D, D), dtype=np.int8), rng.integers(-999, 999, D, np.int32))
        for _ in range(2)
    ]

    def ops(args):
        made, x = [], args[0]
        for w, b in layers:
            wc, bc = build.constant(w), build.constant(b)
            fc = build.fully_connected(x, wc.result, bc.result, build.batched(32, (0, D)), 0, 0)
            out = build.rescale(
                fc.result, build.batched(8, (0, D)), [1 << 30], [38], 0, 0, -128, 127
            )
            made += [wc, bc, fc, out]
            x = out.result
        return made

    return build.function_module([build.batched(8, (0, D))], ops), layers


def test_a_device_call_reads_the_blas_threads_once(spy):
    """Two GEMMs past `SMALL_GEMM_MACS` in one call: one reading; outside a call, one each."""
    rng = np.random.default_rng(0)
    module, layers = two_fcs_module(rng)
    readings = spy(exact, "_read_blas_threads")
    x = rng.integers(-128, 128, (ROWS, D), dtype=np.int8)
    (got,) = DeviceModel(module)([x])
    want = x
    for w, b in layers:
        want = ref.rescale(
            ref.fully_connected(want, w, b, 0, 0), [1 << 30], [38], 0, 0, -128, 127, 8
        )
    np.testing.assert_array_equal(got, want)
    assert len(readings) == 1
    readings.clear()
    lhs, rhs = np.ones((ROWS, D)), np.ones((D, D))
    exact.one_thread_matmul(lhs, rhs)
    exact.one_thread_matmul(lhs, rhs)
    assert len(readings) == 2
    readings.clear()
    with blas_threads_read_once():
        exact.one_thread_matmul(lhs, rhs)
        exact.one_thread_matmul(lhs, rhs)
    assert len(readings) == 1
