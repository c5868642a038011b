"""Activation tables (dghw.table)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    impl,
    register_impls,
)

from dg.dialects import dghw
from dg.runtime.kernels.common import KernelFunctions, dense_array_values


@register_impls
@dataclass
class ActivationFunctions(KernelFunctions):
    """The activations family's dghw ops."""

    @impl(dghw.TableOp)
    def run_table(
        self, interpreter: Interpreter, op: dghw.TableOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        table = self.cached(op, lambda: dense_array_values(op.table, "<i1"))
        return (table[x.astype(np.intp) + 128],)
