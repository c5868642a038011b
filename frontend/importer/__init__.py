"""Import a frozen torchao PT2E graph into the `dgtorch` dialect.

The result is one ``builtin.module`` with one ``func.func @main``: graph
inputs become block arguments, every computing node becomes the `dgtorch` op
of the same name (see docs/architecture.md), the graph outputs are returned.
Axis 0 of every activation is the batch axis and is dynamic (``?``).

Ops are imported by the handlers of `HANDLERS` (ATen op -> handler), which
are registered per row of dg's op registry (`dg.lowering.registry`). The
driver is `core`; each op family has its module (`quantization`, `weights`,
`elementwise`, `activations`, `pooling`, `layout`, `sequence`, `norm`,
`logic`), which registers its handlers when this package imports it. A node
that cannot be imported is not an exception but a `Problem`; the importer
carries on, so that `ExportError` lists every problem of the model at once.
Ops without a handler get the reason and fix of the registry row that
rejects them, or, for ops dg does not know at all, a message naming them.

The same importer vets a float model before quantization
(`require_quantized=False`, used by `dg.check` and `dg.prepare_*`): every
check that does not depend on quantization runs the same way, so a model
that passes will not fail at export for an op it uses.
"""

# Every family module registers its handlers on import.
from dg.frontend.importer import (
    activations,
    elementwise,
    layout,
    logic,
    norm,
    pooling,
    quantization,
    sequence,
    weights,
)
from dg.frontend.importer.common import consumers, producer
from dg.frontend.importer.core import (
    CONSTANT_LAYOUT_OPS,
    DEQUANTIZE_OPS,
    HANDLERS,
    QUANTIZE_OPS,
    GraphImporter,
    NodeProblem,
    collect_problems,
    handles,
    import_graph,
)
from dg.frontend.importer.elementwise import MUL_ACTIVATIONS_FIX
from dg.frontend.importer.graph import (
    OUTPUT_STRUCTURE_ATTR,
    module_output_structure,
    output_structure,
)
from dg.frontend.importer.logic import (
    LOGIC_BROADCAST_FIX,
    LOGIC_INPUT_FIX,
    LOGIC_OPERANDS_FIX,
    REPEAT_OUTSIDE_LOGIC_FIX,
)
from dg.frontend.importer.sequence import SCORE_SCALE_FIX

__all__ = [
    "CONSTANT_LAYOUT_OPS",
    "DEQUANTIZE_OPS",
    "HANDLERS",
    "LOGIC_BROADCAST_FIX",
    "LOGIC_INPUT_FIX",
    "LOGIC_OPERANDS_FIX",
    "MUL_ACTIVATIONS_FIX",
    "OUTPUT_STRUCTURE_ATTR",
    "QUANTIZE_OPS",
    "REPEAT_OUTSIDE_LOGIC_FIX",
    "SCORE_SCALE_FIX",
    "GraphImporter",
    "NodeProblem",
    "activations",
    "collect_problems",
    "consumers",
    "elementwise",
    "handles",
    "import_graph",
    "layout",
    "logic",
    "module_output_structure",
    "norm",
    "output_structure",
    "pooling",
    "producer",
    "quantization",
    "sequence",
    "weights",
]
