"""What dg's device model relies on inside xDSL's interpreter framework, pinned.

`DeviceInterpreter` (runtime/interpreter.py) replaces xDSL's walk of a single-block
region with a planned one, and so uses these non-public parts of `xdsl.interpreter`:
- `Interpreter._impls.run(interpreter, op, args) -> OpImplResult` (values,
  terminator_value), which also locates an impl's error at its op;
- `Interpreter._run_op(op, inputs)`, which calls the listeners around an op;
- `Interpreter._ctx`, the scoped environment it saves and restores around a region;
- `run_ssacfg_region(region, args, name)` as the hook `call_op` goes through;
- `Interpreter.listeners` and the `Listener` hooks `will_interpret_op` / `did_interpret_op`.
An xDSL upgrade that changes any of them fails here first.
"""

import inspect

import numpy as np
from interpreter_cases import pair_table_module
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    OpImplResult,
    ReturnedValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation
from xdsl.utils.scoped_dict import ScopedDict

from dg.dialects import dghw
from dg.runtime.interpreter import DeviceInterpreter, DeviceModel
from dg.runtime.kernels import KERNEL_FUNCTIONS


def test_interpreter_has_the_private_members_dg_uses() -> None:
    interpreter = Interpreter(
        pair_table_module((1 << 30, 10, -3), (1 << 30, 10, 7), (1 << 30, 40, 0, -128))
    )
    assert callable(interpreter._impls.run)
    assert isinstance(interpreter._ctx, ScopedDict)
    assert inspect.signature(Interpreter._run_op).parameters.keys() == {"self", "op", "inputs"}
    assert list(inspect.signature(Interpreter.run_ssacfg_region).parameters) == [
        "self",
        "region",
        "args",
        "name",
    ]
    assert interpreter.listeners == ()
    assert set(OpImplResult._fields) == {"values", "terminator_value"}
    assert ReturnedValues((1,)).values == (1,)
    assert callable(Interpreter.Listener.will_interpret_op)
    assert callable(Interpreter.Listener.did_interpret_op)


def test_impls_run_dispatches_by_op_type_to_a_family_instance() -> None:
    module = pair_table_module((1 << 30, 10, -3), (1 << 30, 10, 7), (1 << 30, 40, 0, -128))
    device = DeviceModel(module)
    add = next(op for op in module.walk() if isinstance(op, dghw.AddOp))
    x = np.zeros((1,), dtype=np.int32)
    result = device.interpreter._impls.run(device.interpreter, add, (x, x))
    assert isinstance(result, OpImplResult) and result.terminator_value is None


def test_every_kernel_family_registers_its_impls() -> None:
    """`register_impls` collects the `@impl`s of a subclass of a dataclass base."""
    for family in KERNEL_FUNCTIONS:
        assert issubclass(family, InterpreterFunctions)
        assert family._impls(), family.__name__


def test_impls_run_wraps_an_impls_error_at_its_op() -> None:
    @register_impls
    class Failing(InterpreterFunctions):
        @impl(dghw.AddOp)
        def run_add(self, interpreter: Interpreter, op: Operation, args: tuple[object, ...]):
            raise ValueError("boom")

    module = pair_table_module((1 << 30, 10, -3), (1 << 30, 10, 7), (1 << 30, 40, 0, -128))
    interpreter = DeviceInterpreter(module)
    interpreter.register_implementations(Failing())
    add = next(op for op in module.walk() if isinstance(op, dghw.AddOp))
    try:
        interpreter._impls.run(interpreter, add, ())
    except Exception as error:  # xDSL raises a DiagnosticException naming the op
        assert "boom" in str(error) or "boom" in repr(error.__cause__)
    else:
        raise AssertionError("the impl's error was swallowed")
