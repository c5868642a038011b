"""The torch side of dg's op registry: the ATen overloads its rows name.

`dg.lowering.registry` names ATen overloads by string so that it imports no
torch; the frontend matches FX nodes against the overloads themselves.
"""

from __future__ import annotations

from functools import cache

import torch
from torch._ops import OpOverload

from dg.lowering import registry
from dg.lowering.registry import OpRow


@cache
def overload(name: str) -> OpOverload:
    """The ATen overload named `name` (``"aten.conv2d.default"``)."""
    namespace, packet, overload_name = name.split(".")
    return getattr(getattr(getattr(torch.ops, namespace), packet), overload_name)


@cache
def targets(*rows: OpRow) -> frozenset[OpOverload]:
    """The ATen overloads of `rows`, as the FX nodes of ``torch.export`` hold them.

    Cached: handlers ask per node (``node.target in targets(registry.LINEAR)``).
    """
    return frozenset(overload(name) for row in rows for name in row.aten)


MATMUL_OPS = frozenset(overload(name) for name in registry.MATMUL_PRODUCTS)
"""The products of the matmul row (the row without the score scale's division)."""
SCORE_SCALE_OPS = frozenset(overload(name) for name in registry.SCORE_SCALES)
"""`scores * s` or `scores / d` after a matmul: dg folds it into the matmul's requantization."""
