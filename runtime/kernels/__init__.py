"""The device model's kernels: one `InterpreterFunctions` class per op family.

Each family module holds its ops' `@impl`s and the plans they prepare once per op;
`common` holds the base class with the per-op caches. `register_device_functions`
registers them all (with xDSL's `func` impls) on an interpreter.
"""

from xdsl.interpreter import Interpreter, InterpreterFunctions

from dg.runtime.kernels.activations import ActivationFunctions
from dg.runtime.kernels.elementwise import ElementwiseFunctions
from dg.runtime.kernels.layout import LayoutFunctions
from dg.runtime.kernels.logic import LogicFunctions
from dg.runtime.kernels.norm import NormFunctions
from dg.runtime.kernels.pooling import PoolingFunctions
from dg.runtime.kernels.quantization import QuantizationFunctions
from dg.runtime.kernels.sequence import SequenceFunctions
from dg.runtime.kernels.weights import WeightsFunctions

KERNEL_FUNCTIONS: tuple[type[InterpreterFunctions], ...] = (
    QuantizationFunctions,
    WeightsFunctions,
    ElementwiseFunctions,
    ActivationFunctions,
    PoolingFunctions,
    LayoutFunctions,
    SequenceFunctions,
    NormFunctions,
    LogicFunctions,
)
"""Every dghw kernel family, one `@register_impls` class each."""


def register_device_functions(interpreter: Interpreter) -> None:
    """Register xDSL's `func` impls and a fresh instance of every kernel family."""
    # Imported here, when a device model is made: `xdsl.interpreters` imports every xDSL
    # interpreter (RISC-V's dialects among them), 0.5-0.7 s measured, which `dg.export`,
    # `dg.load` and the CLI tools, importing this package for its plans and dtypes, never need.
    from xdsl.interpreters.func import FuncFunctions

    interpreter.register_implementations(FuncFunctions())
    for functions in KERNEL_FUNCTIONS:
        interpreter.register_implementations(functions())
