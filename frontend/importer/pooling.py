"""Pooling family: max pool, average pool and adaptive average pool (2-D)."""

from __future__ import annotations

from collections.abc import Sequence

from torch.fx import Node
from xdsl.dialects.builtin import (
    Attribute,
    BoolAttr,
)
from xdsl.ir import SSAValue

from dg.dialects import dgtorch
from dg.dialects.common import (
    i64_array,
    window_counts,
)
from dg.frontend.importer.common import (
    as_written,
    import_unary,
    int_attr,
    pair,
    size_text,
    traced_shape,
)
from dg.frontend.importer.core import (
    GraphImporter,
    NodeProblem,
    handles,
)
from dg.frontend.ops import targets
from dg.lowering import registry


@handles(*targets(registry.MAX_POOL2D))
def _max_pool2d(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    kernel = pair(args["kernel_size"], "kernel_size")
    stride = pair(args["stride"] or kernel, "stride")
    padding = pair(args["padding"], "padding")
    dilation = pair(args["dilation"], "dilation")
    ceil_mode = bool(args["ceil_mode"])
    fix = (
        "remove the padding (padding=0): pad with the preceding Conv2d instead, or use a "
        "kernel_size and stride that need none"
    )
    if padding != [0, 0]:
        raise NodeProblem(
            f"{registry.MAX_POOL2D.notes}; got padding={as_written(args['padding'])}",
            fix,
            arguments=f"padding={as_written(args['padding'])}",
        )
    if dilation != [1, 1]:
        raise NodeProblem(
            f"only dilation=1 is supported, got dilation={as_written(args['dilation'])}",
            arguments=f"dilation={as_written(args['dilation'])}",
        )
    spatial = traced_shape(args["input"])[2:]
    counts = [window_counts(n, k, s, 0, 0) for n, k, s in zip(spatial, kernel, stride, strict=True)]
    if ceil_mode and any(ceil != floor for floor, ceil in counts):
        floor_size = [floor for floor, _ in counts]
        ceil_size = [ceil for _, ceil in counts]
        raise NodeProblem(
            f"{registry.MAX_POOL2D.notes}: with ceil_mode=True the last window on the "
            f"{size_text(spatial)} input reads past the edge (output {size_text(ceil_size)} "
            f"instead of {size_text(floor_size)}), which is padding",
            "use ceil_mode=False, or an input size where (size - kernel_size) is a multiple of "
            "the stride",
            arguments="ceil_mode=True",
        )
    # Without an overhang the ceil and floor rules agree: the device has one rule.
    return import_unary(
        imp,
        node,
        dgtorch.MaxPool2dOp,
        kernel=i64_array(kernel),
        stride=i64_array(stride),
        padding=i64_array(padding),
        dilation=i64_array(dilation),
        ceil_mode=BoolAttr.from_bool(False),
    )


@handles(*targets(registry.AVG_POOL2D))
def _avg_pool2d(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    kernel = pair(args["kernel_size"], "kernel_size")
    props: dict[str, Attribute] = {
        "kernel": i64_array(kernel),
        "stride": i64_array(pair(args["stride"] or kernel, "stride")),
        "padding": i64_array(pair(args["padding"], "padding")),
        "ceil_mode": BoolAttr.from_bool(bool(args["ceil_mode"])),
        "count_include_pad": BoolAttr.from_bool(bool(args["count_include_pad"])),
    }
    if args["divisor_override"] is not None:
        props["divisor_override"] = int_attr(args["divisor_override"])
    return import_unary(imp, node, dgtorch.AvgPool2dOp, **props)


@handles(*targets(registry.ADAPTIVE_AVG_POOL2D))
def _adaptive_avg_pool2d(imp: GraphImporter, node: Node) -> SSAValue:
    output_size = pair(node.args[1], "output_size")
    spatial = traced_shape(node.args[0])[2:]
    if any(n % o for n, o in zip(spatial, output_size, strict=True)):
        raise NodeProblem(
            f"the input size {size_text(spatial)} does not divide evenly by the output size "
            f"{size_text(output_size)}, so it is no plain average pool",
            f"{registry.ADAPTIVE_AVG_POOL2D.fix}; {_fitting_sizes(spatial)}",
            arguments=f"output_size={as_written(output_size)}",
        )
    return import_unary(imp, node, dgtorch.AdaptiveAvgPool2dOp, output_size=i64_array(output_size))


def _fitting_sizes(spatial: Sequence[int]) -> str:
    """The output sizes an adaptive pool of `spatial` may have, per axis."""

    def divisors(n: int) -> str:
        return ", ".join(str(d) for d in range(1, n + 1) if n % d == 0)

    height, width = spatial
    if height == width:
        return f"output sizes that divide {height}: {divisors(height)}"
    return f"output heights that divide {height}: {divisors(height)}; widths for {width}: " + (
        divisors(width)
    )
