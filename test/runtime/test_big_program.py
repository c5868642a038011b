"""A program with a VGG-16-sized weight (102.8 M elements) saves and loads, bit for bit.

VGG-16's first Linear has a [4096, 25088] int8 weight. The module is built
directly (a Linear's dghw: constant weight and bias, fully_connected, rescale),
not compiled from the 138 M-weight network, so the test costs the literal only.
The parser's guard against a huge splat (`dg.xdsl_fixes`) must read it: its
elements are all in the file. Save and load are timed against generous bounds
(`make bench` reports the real times: at most 5 s each for all of VGG-16).
"""

from __future__ import annotations

import time
from functools import partial
from typing import TypeVar, cast

import dghw_testing as build
import numpy as np
import pytest
from xdsl.utils.exceptions import ParseError

from dg.dialects import dghw
from dg.runtime.program import Program, parse_dghw
from dg.xdsl_fixes import MAX_DENSE_ELEMENTS

T = TypeVar("T")

pytestmark = pytest.mark.usefixtures("both_gemm_paths")

OUT_FEATURES, IN_FEATURES = 4096, 25088
SECONDS = 30.0
"""Bound on each of save and load of the module here (about 1 s each on a quiet machine;
before dg.xdsl_fixes' printer and lexer fixes, 20 s, and the load was refused)."""


def weight_bytes(program: Program) -> bytes:
    """The bytes of the program's first constant: the weight."""
    weight = next(op for op in program.dghw.walk() if isinstance(op, dghw.ConstantOp))
    return weight.value.data.data


def test_a_vgg_sized_weight_round_trips_bit_exactly(tmp_path) -> None:
    """... as a dialect resource (`dg.resources`), and neither save, load nor the first run
    copies the weight more than once: saving holds no hex string of it, loading decodes the
    blob from the file a chunk at a time (never the file's text whole, which is twice the
    weight), and the GEMM reads the int8 weight as it is (int8 GEMMs) or widens it a block
    at a time (float32 GEMMs, `WIDEN_PER_BLOCK_ABOVE`)."""
    rng = np.random.default_rng(0)
    weight = rng.integers(-127, 128, size=(OUT_FEATURES, IN_FEATURES), dtype=np.int8)
    bias = rng.integers(-5000, 5000, size=OUT_FEATURES, dtype=np.int32)
    program = Program.from_dghw(parse_dghw(build.linear_module(weight, bias)))
    assert weight_bytes(program) == weight.tobytes()
    assert OUT_FEATURES * IN_FEATURES > MAX_DENSE_ELEMENTS  # the guard's bound is passed
    path = tmp_path / "linear.mlir"
    started = time.perf_counter()
    _, save_peak = build.traced_peak(partial(program.save, path))
    saved = time.perf_counter() - started
    del program
    started = time.perf_counter()
    loaded, load_peak = build.traced_peak(partial(Program.load, path))
    load_time = time.perf_counter() - started
    assert weight_bytes(loaded) == weight.tobytes()
    assert saved < SECONDS and load_time < SECONDS, (saved, load_time)
    assert save_peak < weight.nbytes // 8, save_peak  # was 4x: the hex, then its upper case
    assert path.stat().st_size > 2 * weight.nbytes  # the weight is in the file, as hex
    # The weight once, with BytesIO's growth and a chunk (1.09x; was 5x: the text, as bytes
    # and str, then the weight).
    assert load_peak < weight.nbytes * 9 // 8, (load_peak, weight.nbytes)
    x = rng.integers(-128, 128, size=(2, IN_FEATURES), dtype=np.int8)
    got, run_peak = build.traced_peak(partial(loaded.run_int, x))
    assert run_peak < weight.nbytes // 8, run_peak  # a float32 copy would be 4x
    assert cast(np.ndarray, got).shape == (2, OUT_FEATURES)  # exactness: test_gemm_exactness
    with open(path, "rb") as f:
        head = f.read(4096).decode()
    assert f"dense_resource<constant_0> : tensor<{OUT_FEATURES}x{IN_FEATURES}xi8>" in head
    with open(path, "r+b") as f:  # the weight names the bias's blob: read, then checked
        f.seek(head.index("dense_resource<constant_0>"))
        f.write(b"dense_resource<constant_1>")
    with pytest.raises(ParseError, match=f"blob 'constant_1' holds {bias.nbytes} bytes"):
        Program.load(path)
