"""dg's integer logic layers: shifts, bitwise ops and thresholds on int32/int8 tensors, bit-exact.

Logic layers live outside the quantized float world. They take and return
``torch.int32`` or ``torch.int8`` tensors (the output keeps the input's dtype;
`Compare` always returns int32 0/1) and are never quantized: the quantizer
leaves them unannotated, and the device computes exactly torch's integer
result (the same bits, int8 left shifts wrapping at 8 bits as torch's do).
Constants must fit the tensor's dtype. What can feed a logic layer:

- an int32 model input (a model may take integer inputs and run logic
  layers only; `Program.run` then passes the tensors through as is; int8
  model inputs are not accepted yet, though the device ops handle int8), or
- the output of another logic layer.

`Bitwise` and `Compare` take their second operand either as a constant
(``Bitwise("and", 5)``: ``x & 5``) or as a second tensor (``Bitwise("and")``
called on ``(x, y)``: ``x & y``; the operators on two tensors compile the same).
Both tensors must be logic tensors as above, of one dtype and the same shape:
dg does not broadcast them (torch would), so tile the smaller one with
``Tensor.repeat`` inside the logic layer. A float or quantized tensor, or a
constant tensor, as either operand is an export error.

A logic layer's output feeds another logic layer or is a model output (an
integer output, returned as is). Float / quantized tensors cannot feed them,
and they cannot feed float layers.

``Tensor.repeat()`` is accepted inside the `forward` of a logic layer (a
subclass of `LogicLayer`, including your own) and nowhere else.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.fx import Node

from dg.dialects.common import BITWISE_KINDS, COMPARE_KINDS, LOGIC_SHIFT_RANGE, SHIFT_DIRECTIONS
from dg.frontend.source import module_types


class LogicLayer(nn.Module):
    """Base of dg's logic layers; subclass it to write your own (``Tensor.repeat`` allowed)."""

    subclasses: dict[str, type[LogicLayer]] = {}
    """Every subclass by qualified name, as ``nn_module_stack`` records module types: a
    class defined in a function or in exec'd code cannot be looked up by that name."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        LogicLayer.subclasses[f"{cls.__module__}.{cls.__qualname__}"] = cls


class BitShift(LogicLayer):
    """Arithmetic shift of an int32 tensor by the constant `shift` bits.

    ``direction="left"``: ``x << shift`` (the low 32 bits, as torch wraps);
    ``direction="right"``: ``x >> shift`` (arithmetic: rounds toward -inf).
    """

    def __init__(self, shift: int, direction: str = "right"):
        super().__init__()
        lo, hi = LOGIC_SHIFT_RANGE
        if not isinstance(shift, int) or not lo <= shift <= hi:
            raise ValueError(f"dg.BitShift: shift must be an int in [{lo}, {hi}], got {shift!r}")
        if direction not in SHIFT_DIRECTIONS:
            raise ValueError(
                f"dg.BitShift: direction must be one of {', '.join(SHIFT_DIRECTIONS)}, "
                f"got {direction!r}"
            )
        self.shift = shift
        self.direction = direction

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x << self.shift if self.direction == "left" else x >> self.shift

    def extra_repr(self) -> str:
        return f"shift={self.shift}, direction={self.direction!r}"


class Bitwise(LogicLayer):
    """Bitwise `kind` ("and" | "or" | "xor") of an int32 tensor with a constant or a second tensor.

    ``Bitwise(kind, value)``: the second operand is the constant `value` (a Python
    int fitting int32), ``forward(x)`` computes ``x & value``, ``x | value`` or ``x ^ value``.

    ``Bitwise(kind)``: ``forward(x, y)`` computes ``x & y``, ``x | y`` or ``x ^ y`` of
    two int32 tensors of the same shape (dg does not broadcast; tile the smaller one
    with ``Tensor.repeat`` inside a `LogicLayer`).
    """

    def __init__(self, kind: str, value: int | None = None):
        super().__init__()
        if kind not in BITWISE_KINDS:
            raise ValueError(
                f"dg.Bitwise: kind must be one of {', '.join(BITWISE_KINDS)}, got {kind!r}"
            )
        if value is not None and not _fits_int32(value):
            raise ValueError(f"dg.Bitwise: value must be an int fitting int32, got {value!r}")
        self.kind = kind
        self.value = value

    def forward(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        other = _second_operand("dg.Bitwise", "value", self.value, y)
        if self.kind == "and":
            return x & other
        if self.kind == "or":
            return x | other
        return x ^ other

    def extra_repr(self) -> str:
        return f"kind={self.kind!r}" + ("" if self.value is None else f", value={self.value}")


class Compare(LogicLayer):
    """Compare an int32 tensor with a constant or a second tensor: 1 where it holds, else 0 (int32).

    `kind` is one of "gt", "ge", "lt", "le", "eq", "ne" (``>``, ``>=``, ...).
    ``Compare(kind, threshold)``: ``forward(x)`` thresholds at the int `threshold`
    (fitting int32), written ``(x > threshold).to(torch.int32)``.
    ``Compare(kind)``: ``forward(x, y)`` compares two int32 tensors of the same
    shape elementwise, ``(x > y).to(torch.int32)``.
    """

    def __init__(self, kind: str, threshold: int | None = None):
        super().__init__()
        if kind not in COMPARE_KINDS:
            raise ValueError(
                f"dg.Compare: kind must be one of {', '.join(COMPARE_KINDS)}, got {kind!r}"
            )
        if threshold is not None and not _fits_int32(threshold):
            raise ValueError(
                f"dg.Compare: threshold must be an int fitting int32, got {threshold!r}"
            )
        self.kind = kind
        self.threshold = threshold

    def forward(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        other = _second_operand("dg.Compare", "threshold", self.threshold, y)
        compare = getattr(torch, self.kind)  # torch.gt, torch.ge, ...
        return compare(x, other).to(torch.int32)

    def extra_repr(self) -> str:
        threshold = "" if self.threshold is None else f", threshold={self.threshold}"
        return f"kind={self.kind!r}{threshold}"


def _fits_int32(value: object) -> bool:
    return isinstance(value, int) and -(1 << 31) <= value < 1 << 31


def _second_operand(
    layer: str, name: str, constant: int | None, y: torch.Tensor | None
) -> int | torch.Tensor:
    """The constant of a layer built with one, else the tensor `y`; exactly one must exist."""
    if constant is not None:
        if y is not None:
            raise TypeError(
                f"{layer} was built with the constant {name}={constant}: call it with one tensor"
            )
        return constant
    if y is None:
        raise TypeError(f"{layer} was built without a {name}: call it with two tensors (x, y)")
    return y


def is_logic_layer_type(qualified_name: str) -> bool:
    """Whether `qualified_name` (as ``nn_module_stack`` records it) is a `LogicLayer` subclass."""
    return qualified_name in LogicLayer.subclasses


def inside_logic_layer(node: Node) -> bool:
    """`node` is an op run by a logic layer's `forward`."""
    return any(is_logic_layer_type(module_type) for _, module_type in module_types(node))
