"""Ops that move elements without arithmetic: reshape, transpose, slice, concat,
nearest resize.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.dialects.builtin import (
    TensorType,
)
from xdsl.interpreter import (
    Interpreter,
    impl,
    impl_external,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from dg.dialects import dghw
from dg.runtime.kernels.common import KernelFunctions
from dg.runtime.kernels.pooling import spatial_extents


def nearest_source_indices(in_size: int, out_size: int, mode: str) -> np.ndarray:
    """Source index of every output index of a nearest resize along one axis (exact rationals).

    nearest: floor(o * in / out); nearest-exact: min(floor((o + 1/2) * in / out), in - 1),
    i.e. floor((2o + 1) * in / (2 out)) in integers.
    """
    o = np.arange(out_size, dtype=np.int64)
    if mode == "nearest":
        return (o * in_size) // out_size
    return np.minimum(((2 * o + 1) * in_size) // (2 * out_size), in_size - 1)


def slice_index(op: dghw.SliceOp) -> tuple[slice, ...]:
    """The numpy index that takes `op`'s range along its axis."""
    picked = slice(op.start.value.data, op.end.value.data)
    return (slice(None),) * op.axis.value.data + (picked,)


def view_of(op: Operation) -> Callable[[np.ndarray], np.ndarray]:
    """What a reshape, transpose or slice does to its input, prepared once: a numpy view
    where numpy makes one (a reshape of a non-contiguous input copies, as numpy does)."""
    if isinstance(op, dghw.ReshapeOp):
        # The result type's batch extent is `?`: keep the runtime one.
        item_shape = cast(TensorType[Attribute], op.result.type).get_shape()[1:]
        return lambda x: x.reshape(x.shape[0], *item_shape)
    if isinstance(op, dghw.TransposeOp):
        perm = tuple(op.perm.get_values())
        return lambda x: x.transpose(perm)
    index = slice_index(cast(dghw.SliceOp, op))
    return lambda x: x[index]


VIEW_CHAIN = "dghw.view_chain"
"""The external impl (`impl_external`) the device model's plan runs a `view_chain` with:
the chain's input in, its last op's result out."""

CHAINED_VIEWS = (dghw.ReshapeOp, dghw.TransposeOp)
"""The ops a `view_chain` links: slices stay apart, for `slices_of_one_value`."""


def view_chain(op: Operation) -> tuple[Operation, ...] | None:
    """The reshapes and transposes that end at `op`, each feeding the next and read only by
    it (an attention's heads split or merged: reshape then transpose): at least two, first
    to last. One step of the plan then applies their views in turn (`VIEW_CHAIN`)."""
    if not isinstance(op, CHAINED_VIEWS):
        return None
    chain = [op]
    while isinstance(producer := chain[-1].operands[0].owner, CHAINED_VIEWS):
        if len(list(producer.results[0].uses)) != 1:
            break
        chain.append(producer)
    return tuple(reversed(chain)) if len(chain) > 1 else None


def chain_views(last: Operation) -> tuple[Callable[[np.ndarray], np.ndarray], ...]:
    """`view_of` each op of the `view_chain` ending at `last`, first to last."""
    chain = view_chain(last)
    assert chain is not None
    return tuple(view_of(op) for op in chain)


CONCAT_OF_SLICES = "dghw.concat_of_slices"
"""The external impl (`impl_external`) the device model's plan runs a `slices_of_one_value`
concat with: the sliced value in, the concat's result out."""


def slices_of_one_value(op: Operation) -> tuple[dghw.SliceOp, ...] | None:
    """The inputs of a `dghw.concat` when each is a `dghw.slice` of one value along the
    concat's axis, read only by it (RoPE's halves, swapped): one step of the plan then
    slices that value and concatenates the pieces (`CONCAT_OF_SLICES`)."""
    if not isinstance(op, dghw.ConcatOp):
        return None
    slices = tuple(value.owner for value in op.inputs)
    if not all(isinstance(piece, dghw.SliceOp) for piece in slices):
        return None
    pieces = cast(tuple[dghw.SliceOp, ...], slices)
    if len({piece.input for piece in pieces}) != 1:
        return None
    if any(piece.axis.value.data != op.axis.value.data for piece in pieces):
        return None
    if any(len(list(piece.result.uses)) != 1 for piece in pieces):
        return None
    return pieces


def pieces_and_axis(op: dghw.ConcatOp) -> tuple[tuple[tuple[slice, ...], ...], int]:
    """The numpy index of each slice of a `slices_of_one_value` concat, and its axis."""
    pieces = cast(tuple[dghw.SliceOp, ...], tuple(value.owner for value in op.inputs))
    return tuple(slice_index(piece) for piece in pieces), op.axis.value.data


@register_impls
@dataclass
class LayoutFunctions(KernelFunctions):
    """The layout family's dghw ops."""

    @impl(dghw.ConcatOp)
    def run_concat(
        self, interpreter: Interpreter, op: dghw.ConcatOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        return (np.concatenate(args, axis=op.axis.value.data),)

    @impl(dghw.ResizeNearestOp)
    def run_resize_nearest(
        self, interpreter: Interpreter, op: dghw.ResizeNearestOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args

        def indices() -> tuple[np.ndarray, np.ndarray]:
            out_h, out_w = spatial_extents(op)
            mode = op.mode.data
            return (
                nearest_source_indices(x.shape[1], out_h, mode),
                nearest_source_indices(x.shape[2], out_w, mode),
            )

        rows, columns = self.cached(op, indices)
        return (np.take(np.take(x, rows, axis=1), columns, axis=2),)

    @impl(dghw.ReshapeOp)
    def run_reshape(
        self, interpreter: Interpreter, op: dghw.ReshapeOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (self.planned(op, view_of)(x),)

    @impl(dghw.TransposeOp)
    def run_transpose(
        self, interpreter: Interpreter, op: dghw.TransposeOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (self.planned(op, view_of)(x),)

    @impl(dghw.SliceOp)
    def run_slice(
        self, interpreter: Interpreter, op: dghw.SliceOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (self.planned(op, view_of)(x),)

    @impl_external(CONCAT_OF_SLICES)
    def run_concat_of_slices(
        self, interpreter: Interpreter, op: Operation, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        """`op`, a `slices_of_one_value` concat, of its slices' source `args`: the slices'
        views concatenated (np.take along the axis was slower over a transposed view: 27
        against 17 us on the digits transformer's RoPE at batch 32)."""
        (x,) = args
        concat = cast(dghw.ConcatOp, op)
        indices, axis = self.planned(concat, pieces_and_axis)
        return (np.concatenate([x[index] for index in indices], axis=axis),)

    @impl_external(VIEW_CHAIN)
    def run_view_chain(
        self, interpreter: Interpreter, op: Operation, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        """`op`, the last op of a `view_chain`, of the chain's input `args`: each op's view
        in turn, in one step."""
        (x,) = args
        # In `_cache`, not `_plans`: the last op's own plan is its view alone (`view_of`),
        # which an observed run uses.
        for view in self.cached(op, lambda: chain_views(op)):
            x = view(x)
        return (x,)
