"""The torch side of dg's op registry: the ATen overloads its rows name.

`dg.lowering.registry` names ATen overloads by string so that it imports no
torch; the frontend matches FX nodes against the overloads themselves.
"""

from __future__ import annotations

from functools import cache

import torch
from torch._ops import OpOverload

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
