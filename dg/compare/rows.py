"""`LayerRow`: the device against the reference models at one activation quantization."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_STEPS_OK = 1
"""A layer within one output step of the fake-quant model everywhere is as exact as dg promises."""


@dataclass(frozen=True)
class LayerRow:
    """The device against the reference models at one activation quantization."""

    index: int
    layer: str
    """The user's module path (e.g. ``block.conv``), or the ops when it ran in the root module."""
    source: str
    """``file:line`` of the user's code, empty when unknown."""
    op: str
    """The frozen model's ops producing the value, e.g. ``conv2d+relu``."""
    device_ops: tuple[str, ...]
    """The dghw ops computing it from the previous layers' values."""
    scale: float
    elements: int
    sqnr_float_db: float | None
    """SQNR of the device value against the float model's (None without a float model)."""
    sqnr_fake_quant_db: float
    """SQNR of the device value against the fake-quant model's (inf: identical)."""
    max_steps: int
    """Largest |device - fake-quant| in steps of `scale`."""
    own_steps: int
    """The same when the layer reads the fake-quant model's values of the layers before it:
    the layer's own error, without the differences it inherits (`DeviceValues.own_result`)."""
    differing: float
    """Share of elements that differ from the fake-quant model at all."""
    saturated: int
    """Values the layer's requantizations clipped to the int8 range (`SaturationCounter`)."""
    saturated_share: float


def sqnr_db(signal: np.ndarray, approximation: np.ndarray) -> float:
    """10 log10(sum signal^2 / sum (approximation - signal)^2); inf when they are equal."""
    s = signal.astype(np.float64)
    noise = float(np.sum((approximation.astype(np.float64) - s) ** 2))
    power = float(np.sum(s**2))
    if noise == 0:
        return math.inf
    if power == 0:
        return -math.inf
    return 10 * math.log10(power / noise)
