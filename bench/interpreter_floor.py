"""The floor of `program.run` on the digits demo CNN: its ops through the xDSL interpreter
with every implementation replaced by a lookup of its recorded result.

What remains is the interpreter's own cost (region walk, environment, dispatch
through `InterpreterFunctions`/`@impl`) for this op count, which no kernel work
can remove. Printed beside `program.run`, the device alone and fp32 eager,
interleaved, CPU time, one thread.

    .venv/bin/python bench/interpreter_floor.py [--batch 1] [--repeats 2000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import torch
from threadpoolctl import threadpool_limits
from xdsl.interpreter import InterpreterFunctions, impl, register_impls
from xdsl.interpreters.func import FuncFunctions

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import measure_side_by_side  # noqa: E402

from bench import digits_network  # noqa: E402
from dg.runtime.interpreter import DeviceInterpreter, ValueRecorder  # noqa: E402


def replaying_functions(results: dict[Any, tuple[Any, ...]]) -> InterpreterFunctions:
    """An `InterpreterFunctions` whose impl of every recorded dghw op returns its results."""

    class Replay(InterpreterFunctions):
        pass

    for op_type in {type(op) for op in results if op.name.startswith("dghw.")}:
        setattr(
            Replay,
            f"run_{op_type.__name__}",
            impl(op_type)(lambda self, interpreter, op, args: results[op]),
        )
    return register_impls(Replay)()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    threadpool_limits(1)
    net = digits_network("digits CNN (demo)", "digits_cnn", "DigitsCNN")
    assert net is not None
    program, x = net.program, net.batch(args.batch)
    arrays = program.quantize_inputs(x)
    recorder = ValueRecorder()
    program.device(arrays, [recorder])
    # The device model's own walk; replayed impls cannot run fused groups, so the
    # residual adds run op by op (the floor then counts their four ops, not one lookup).
    interpreter = DeviceInterpreter(program.dghw, fuse_groups=False)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(replaying_functions(recorder.results))
    main_function, inputs = program.device.function, tuple(arrays)
    with torch.no_grad():
        timings = measure_side_by_side(
            [
                lambda: interpreter.call_op(main_function, inputs),
                lambda: program.device(arrays),
                lambda: program.run(x),
                lambda: net.model(x),
            ],
            args.repeats,
            time.process_time,
        )
    ops = len(list(main_function.body.ops))
    names = [f"{ops} ops, replayed results (floor)", "device model", "program.run", "fp32 eager"]
    eager = timings[-1].median
    for name, timing in zip(names, timings, strict=True):
        print(f"{name:36s} {timing.median * 1e6:8.1f} us  {timing.median / eager:5.2f} x eager")


if __name__ == "__main__":
    main()
