"""`Program`: a compiled model, runnable on the host like the frozen model it came from.

The device computes on int8 tensors only; the host side of a `Program` does
what the frozen model's first `quantize_per_tensor` and last
`dequantize_per_tensor` do, with torch's own ops, so the float boundary is
bit-identical to the frozen model and every difference comes from the device.

A program saves to (and loads from) its dghw module text: the host
quantization parameters are `func.func @main` argument/result attributes and
the Python output structure a function attribute, so the file alone runs.
"""

from __future__ import annotations

import functools
import math
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self, cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Builtin,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import Func, FuncOp
from xdsl.ir import Attribute
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError

from dg.dialects.common import (
    FLAT_STRUCTURES,
    OUTPUT_STRUCTURE_ATTR,
    nest_outputs,
    structure_leaves,
)
from dg.dialects.dghw import SCALE_ATTR, ZERO_POINT_ATTR, Dghw
from dg.lowering.cost_model import function_costs
from dg.lowering.diagnostics import LoweringError
from dg.lowering.memory_plan import MemoryPlan, plan_totals
from dg.lowering.plan_memory import planned_copy
from dg.lowering.target import Target
from dg.resources import Blobs, read_mlir, to_resources, write_resources
from dg.runtime.arena import ArenaDeviceModel
from dg.runtime.cost_report import CostReport, CostRow
from dg.runtime.ethos_u import EthosUSummary, compile_for_ethos_u, save_tosa
from dg.runtime.interpreter import DeviceModel, find_function, numpy_dtype
from dg.source import LocatedParseError, load_module, parse_module

if TYPE_CHECKING:
    import torch
    from torch.fx import GraphModule

OutputStructure = str
""""single", "tuple", or a nested structure as JSON (`dg.dialects.common.nest_outputs`)."""
OUTPUT_STRUCTURES: tuple[OutputStructure, ...] = FLAT_STRUCTURES

STAGES = ("dgtorch", "dgq", "dghw")

QParams = tuple[float, int]
"""(scale, zero_point) of a per-tensor affine int8 quantization."""

INTEGER_BOUNDARY = None
"""The `input_qparams` / `output_qparams` entry of an integer (logic-layer) tensor.

An i32 `@main` argument or result without host quantization attributes is an
integer tensor of the model (dg.BitShift, dg.Bitwise, ...): the host passes
it to and from the device as is, no float conversion.
"""


class ProgramError(ValueError):
    """A dghw module that cannot serve as a program (missing qparams, bad structure, ...)."""


class Program:
    """A compiled model: the module of each compilation stage, and the device model of dghw.

    `run` takes and returns float torch tensors like the frozen model; `run_int`
    takes and returns the int8 numpy arrays the device sees. Integer (logic
    layer) inputs and outputs are int32 tensors in both, passed through as is. Only the "dghw"
    stage is needed to run; the others are kept for inspection (`mlir`).
    `dg.Program` (`dg/program.py`), the one users get, adds `compare`.
    """

    def __init__(
        self,
        stages: Mapping[str, ModuleOp],
        output_structure: OutputStructure | None = None,
    ):
        if "dghw" not in stages:
            raise ProgramError(f"a program needs a 'dghw' stage, got {sorted(stages)}")
        self.stages = dict(stages)
        self.dghw = self.stages["dghw"]
        self.dghw.verify()
        self.main = find_function(self.dghw, "main")
        self.output_structure = resolve_output_structure(self.main, output_structure)
        input_types, output_types = self.main.function_type.inputs, self.main.function_type.outputs
        self.input_qparams = host_qparams(self.main.arg_attrs, input_types, "argument")
        self.output_qparams = host_qparams(self.main.res_attrs, output_types, "result")
        self._input_bounds = [element_bounds(t) for t in input_types]
        self._output_bounds = [element_bounds(t) for t in output_types]
        self.target = Target()
        """The device `cost_report` estimates for (an example; `dg.export(target=)` sets it)."""
        self._arena: ArenaDeviceModel | None = None
        self._memory_plan: MemoryPlan | None = None
        if plan_totals(self.main) is not None:  # a planned module: its plan must be valid
            _ = self.memory_plan

    @functools.cached_property
    def device(self) -> DeviceModel:
        """The interpreter of dghw's @main that `run` and `run_int` call, made on first use:
        a program that is only saved or lowered to TOSA never loads the device model's
        kernels (`register_device_functions`)."""
        return DeviceModel(self.dghw)

    @classmethod
    def from_dghw(cls, module: ModuleOp, output_structure: OutputStructure | None = None) -> Self:
        """The program of a dghw module alone (the other stages are for inspection only)."""
        return cls({"dghw": module}, output_structure)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """Parse and verify a saved dghw module (ParseError, VerifyException, ProgramError).

        The errors say where (`load_dghw`): `file:line:col: error: message` and the line.
        """
        return cls.from_dghw(read_dghw(path))

    def __repr__(self) -> str:
        return (
            f"Program(inputs={self.input_qparams}, outputs={self.output_qparams}, "
            f"output_structure={self.output_structure!r}, stages={list(self.stages)})"
        )

    @property
    def memory_plan(self) -> MemoryPlan:
        """Where each tensor lives on the device, per batch item (`dghw-plan-memory`): the
        module's own plan when it carries one, else one made now (the module is unchanged)."""
        if self._memory_plan is None:
            self._plan_arena()
        assert self._memory_plan is not None
        return self._memory_plan

    def cost_report(
        self, target: Target | None = None, ethos_u: EthosUSummary | None = None
    ) -> CostReport:
        """Per-op MACs, bytes and estimated cycles of one inference on `target` (default:
        `self.target`), with the memory plan; `ethos_u` (`compile_for_ethos_u`'s summary)
        shows Vela's figures beside. Cycles are estimates, not measurements."""
        chosen = self.target if target is None else target
        rows = [CostRow(i, c) for i, c in enumerate(function_costs(self.main, chosen))]
        return CostReport(rows, chosen, self.memory_plan, ethos_u)

    def save_tosa(self, path: str | os.PathLike[str], batch: int = 1) -> None:
        """Write the program as a TOSA 1.0 flatbuffer at batch `batch` (needs tosa-tools)."""
        save_tosa(self.dghw, path, batch)

    def compile_for_ethos_u(
        self,
        accelerator: str = "ethos-u55-128",
        output_dir: str | os.PathLike[str] = "out/ethos-u",
        system_config: str | None = None,
        memory_mode: str | None = None,
        config: str | None = None,
    ) -> EthosUSummary:
        """Compile the program (batch 1) for Arm Ethos-U with Vela (the ethos-u-vela
        package); Vela's system configuration, memory mode and .ini default to Vela's own.
        Returns Vela's summary; its warnings are kept there, not printed."""
        return compile_for_ethos_u(
            self.dghw, output_dir, accelerator, system_config, memory_mode, config
        )

    def _plan_arena(self) -> ArenaDeviceModel:
        if self._arena is None:
            try:
                planned, plan = planned_copy(self.dghw)
            except LoweringError as error:
                raise ProgramError(f"invalid memory plan: {error}") from error
            self._arena, self._memory_plan = ArenaDeviceModel(planned, plan), plan
        return self._arena

    def _device_for(self, arena: bool) -> DeviceModel | ArenaDeviceModel:
        """The normal device walk, or the device inside its memory plan (`arena=True`)."""
        return self._plan_arena() if arena else self.device

    def run_int(self, *arrays: np.ndarray, arena: bool = False) -> np.ndarray | list[np.ndarray]:
        """Run the device on int8 arrays in the model's own layout (e.g. NCHW).

        With `arena=True` every op reads and writes its planned bytes of one arena per
        batch item (`memory_plan`, `dg.runtime.arena`): bit-identical, slower.
        """
        return self._structure(self._device_for(arena)(arrays), list)

    def check_int_inputs(self, arrays: Sequence[np.ndarray]) -> None:
        """Raise a ValueError unless `arrays` fit @main's arguments (as `run_int` takes them)."""
        self.device.check(arrays)

    def quantize_inputs(self, *tensors: torch.Tensor) -> list[np.ndarray]:
        """The arrays the device reads in `run(*tensors)`: the frozen model's input quantization."""
        import torch

        if len(tensors) != len(self.input_qparams):
            raise TypeError(
                f"the program takes {len(self.input_qparams)} input(s), got {len(tensors)}"
            )
        arrays = []
        for i, (tensor, qparams, (lo, hi, width)) in enumerate(
            zip(tensors, self.input_qparams, self._input_bounds, strict=True)
        ):
            if qparams is INTEGER_BOUNDARY:
                arrays.append(integer_input(tensor, i, width))
                continue
            scale, zp = qparams
            if isinstance(tensor, torch.Tensor) and tensor.dtype == torch.float32 and width == 8:
                arrays.append(quantize_float32_to_int8(tensor.detach().cpu().numpy(), scale, zp))
                continue
            if not isinstance(tensor, torch.Tensor) or tensor.dtype not in (
                torch.float32,
                torch.float16,
                torch.bfloat16,
            ):
                got = tensor.dtype if isinstance(tensor, torch.Tensor) else type(tensor).__name__
                raise TypeError(f"input #{i}: expected a float32 torch tensor, got {got}")
            quantize, _ = torch_quant_ops()
            int_dtype = {8: torch.int8, 32: torch.int32}[width]
            quantized = quantize(tensor.detach().cpu(), scale, zp, lo, hi, int_dtype)
            arrays.append(quantized.numpy())
        return arrays

    def dequantize_inputs(self, *arrays: np.ndarray) -> list[torch.Tensor]:
        """The float tensors whose input quantization is `arrays` (integer inputs as they are)."""
        import torch

        _, dequantize = torch_quant_ops()
        int_dtypes = {8: torch.int8, 32: torch.int32}
        tensors = []
        for array, qparams, (lo, hi, width) in zip(
            arrays, self.input_qparams, self._input_bounds, strict=True
        ):
            tensor = torch.from_numpy(np.require(array, requirements="W"))
            if qparams is not INTEGER_BOUNDARY:
                scale, zp = qparams
                tensor = dequantize(tensor, scale, zp, lo, hi, int_dtypes[width])
            tensors.append(tensor)
        return tensors

    def run(
        self, *tensors: torch.Tensor, arena: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, ...]:
        """Run on float tensors of any batch size; returns what the frozen model returns.

        `arena=True` runs the device inside its memory plan, as `run_int` does.
        """
        import torch

        arrays = self.quantize_inputs(*tensors)
        results = []
        for array, qparams, (lo, hi, width) in zip(
            self._device_for(arena)(arrays), self.output_qparams, self._output_bounds, strict=True
        ):
            if qparams is INTEGER_BOUNDARY:
                # torch.from_numpy shares memory and wants it writable; a constant result is not.
                results.append(torch.from_numpy(np.require(array, requirements="W")))
                continue
            scale, zp = qparams
            if width == 8:
                results.append(torch.from_numpy(dequantize_int8_to_float32(array, scale, zp)))
                continue
            _, dequantize = torch_quant_ops()
            device_tensor = torch.from_numpy(np.require(array, requirements="W"))
            results.append(dequantize(device_tensor, scale, zp, lo, hi, torch.int32))
        return cast("torch.Tensor | tuple[torch.Tensor, ...]", self._structure(results, tuple))

    __call__ = run

    def mlir(self, stage: str = "dghw") -> str:
        """The text of the module of `stage` ("dgtorch" | "dgq" | "dghw")."""
        if stage not in STAGES:
            raise ValueError(f"unknown stage '{stage}', expected one of {', '.join(STAGES)}")
        if stage not in self.stages:
            raise ValueError(
                f"this program has no '{stage}' stage, only {', '.join(self.stages)} "
                "(a loaded program keeps only dghw)"
            )
        return str(self.stages[stage])

    def save(
        self,
        path: str | os.PathLike[str],
        reference: GraphModule | None = None,
        float_model: torch.nn.Module | None = None,
    ) -> None:
        """Write the dghw module, with everything `load` needs to run it again.

        Op locations (the user's module path and line) are kept. With `reference`
        (the frozen model), also write it as a torch.export program to
        `reference_path(path)`, and `float_model` (in eval mode) to
        `reference_path(path, FLOAT_SUFFIX)`: what `dg-run --compare` reads.
        """
        module = self.dghw.clone()
        find_function(module, "main").attributes[OUTPUT_STRUCTURE_ATTR] = StringAttr(
            self.output_structure
        )
        resources = list(to_resources(module))  # the weights, after the module (dg.resources)
        with open(path, "w", encoding="utf-8") as f:
            Printer(stream=f, print_debuginfo=True).print_op(module)
            f.write("\n")
            write_resources(f, resources)
        if reference is not None:
            save_reference(self, reference, reference_path(path))
        if float_model is not None:
            save_reference(self, float_model, reference_path(path, FLOAT_SUFFIX))

    def _structure(self, results: Sequence[Any], container: type[list] | type[tuple]) -> Any:
        """The results as the model returns them: the one result for "single", all results in
        `container` for "tuple", else the model's own nesting (`nest_outputs`)."""
        return nest_outputs(self.output_structure, results, container)


REFERENCE_SUFFIX = ".frozen.pt2"
"""`Program.save(path, reference=frozen)` writes the frozen model next to `path`, so named."""

REFERENCE_BATCH = 2
"""Batch extent of the example inputs the reference is re-exported with (dynamic anyway)."""


FLOAT_SUFFIX = ".float.pt2"
"""... and the float model, with `float_model=`."""


def reference_path(path: str | os.PathLike[str], suffix: str = REFERENCE_SUFFIX) -> str:
    """Where `Program.save` puts a reference model of the program saved at `path`."""
    text = os.fspath(path)
    return (text[: -len(".mlir")] if text.endswith(".mlir") else text) + suffix


def save_reference(program: Program, model: torch.nn.Module, path: str) -> None:
    """`model` as a torch.export program in eval mode (batch axis dynamic) at `path`."""
    import torch
    from torch.export import Dim

    examples = program.dequantize_inputs(*example_arrays(program))
    batch = Dim("batch")
    was_training = model.training
    model.eval()
    try:
        exported = torch.export.export(
            model, tuple(examples), dynamic_shapes=tuple({0: batch} for _ in examples)
        )
    finally:
        model.train(was_training)
    torch.export.save(exported, path)


def load_reference(path: str | os.PathLike[str]) -> GraphModule:
    """The model `save_reference` wrote; raises OSError / ProgramError."""
    import torch

    torch_quant_ops()  # registers the quantized_decomposed ops the archive names
    if not os.path.exists(path):
        raise FileNotFoundError(os.fspath(path))
    try:
        with warnings.catch_warnings():  # torch's own deprecations, nothing the user can fix
            warnings.simplefilter("ignore", FutureWarning)
            return cast("GraphModule", torch.export.load(path).module())
    except Exception as error:  # torch.export.load raises many kinds for a bad archive
        raise ProgramError(f"'{os.fspath(path)}' is not a saved model: {error}") from error


def example_arrays(program: Program) -> list[np.ndarray]:
    """Zero arrays of @main's argument types, the batch axis `REFERENCE_BATCH`."""
    arrays = []
    for t in program.main.function_type.inputs:
        assert isinstance(t, TensorType)
        shape = [REFERENCE_BATCH if d == DYNAMIC_INDEX else d for d in t.get_shape()]
        arrays.append(np.zeros(shape, dtype=numpy_dtype(t)))
    return arrays


def dghw_context() -> Context:
    """A context that knows exactly what a dghw program may contain."""
    ctx = Context()
    for dialect in (Builtin, Func, Dghw):
        ctx.load_dialect(dialect)
    return ctx


def parse_dghw(text: str, name: str = "<string>") -> ModuleOp:
    """Parse dghw module text (not verified); `name` appears in diagnostics.

    A ParseError is a `LocatedParseError` (see `load_dghw`).
    """
    try:
        return parse_module(dghw_context(), text, name)[0]
    except ParseError as error:
        raise located(LocatedParseError(error.span, error.msg), name) from None


def read_dghw(path: str | os.PathLike[str]) -> ModuleOp:
    """`load_dghw` of a file, its resources decoded from the file a chunk at a time
    (`dg.resources.read_mlir`): the text of the weights is never held whole."""
    name = os.fspath(path)
    with open(path, "rb") as f:
        try:
            text, blobs = read_mlir(f, name)
        except ParseError as error:
            raise LocatedParseError(error.span, error.msg) from None
    return load_dghw(text, name, blobs)


def load_dghw(text: str, name: str = "<string>", blobs: Blobs | None = None) -> ModuleOp:
    """Parse and verify dghw module text; errors say where, quoting the line.

    A ParseError (`LocatedParseError`) on a module of another stage names that
    stage and the `dg-opt` command that lowers it; a VerifyException
    (`LocatedVerifyException`) is at the op that does not verify.
    """
    try:
        return load_module(dghw_context(), text, name, blobs)
    except LocatedParseError as error:
        raise located(error, name) from None


OTHER_STAGES = {"dgtorch": "dgtorch", "dgq": "dgq", "tosa": "TOSA"}
"""Dialects of the modules that are not dghw, by the stage they belong to."""

_UNREGISTERED_OP = re.compile(r"Operation (?P<dialect>[\w$]+)\.\S+ is not registered")


def located(error: LocatedParseError, name: str) -> LocatedParseError:
    """`error`, saying which stage the module is when its op is of another stage's dialect."""
    match = _UNREGISTERED_OP.fullmatch(error.msg)
    stage = OTHER_STAGES.get(match["dialect"]) if match else None
    if stage is None:
        return error
    if stage == "TOSA":
        hint = "a TOSA module is an export of a dghw module: run that dghw module instead"
    else:
        lowered = re.sub(r"(\.\w+)?\.mlir$", "", name) + ".dghw.mlir"
        hint = f"lower it to dghw first: dg-opt {name} -p dg-pipeline -o {lowered}"
    message = f"{error.msg}: '{name}' is a {stage} module and dg runs dghw modules; {hint}"
    return LocatedParseError(error.span, message)


def resolve_output_structure(main: FuncOp, requested: OutputStructure | None) -> OutputStructure:
    """The requested structure, else the module's, else "single" for one result."""
    structure: str
    if requested is not None:
        structure = requested
    elif isinstance(saved := main.attributes.get(OUTPUT_STRUCTURE_ATTR), StringAttr):
        structure = saved.data
    else:
        structure = "single" if len(main.function_type.outputs) == 1 else "tuple"
    try:
        leaves = structure_leaves(structure)
    except ValueError as error:
        raise ProgramError(
            f"output structure '{structure}' is not one of {', '.join(OUTPUT_STRUCTURES)} "
            f"nor a nested structure ({error})"
        ) from error
    results = len(main.function_type.outputs)
    if leaves is not None and leaves != results:
        raise ProgramError(
            f"output structure '{structure}' needs "
            f"{'one result' if leaves == 1 else f'{leaves} results'}, @main has {results}"
        )
    return structure


def host_qparams(attrs: Any, types: Sequence[Attribute], what: str) -> list[QParams | None]:
    """(scale, zero_point) of each @main argument or result, from its attribute dictionary.

    `INTEGER_BOUNDARY` (None) for an i32 tensor without them: a logic-layer tensor.
    """
    dicts: Sequence[DictionaryAttr] = attrs.data if attrs is not None else ()
    qparams: list[QParams | None] = []
    for i, value_type in enumerate(types):
        entries = dicts[i].data if i < len(dicts) else {}
        scale, zero_point = entries.get(SCALE_ATTR), entries.get(ZERO_POINT_ATTR)
        if scale is None and zero_point is None and is_integer_boundary(value_type):
            qparams.append(INTEGER_BOUNDARY)
            continue
        if not isinstance(scale, FloatAttr) or not isinstance(zero_point, IntegerAttr):
            raise ProgramError(
                f"@main {what} #{i} needs the host quantization attributes "
                f"{{{SCALE_ATTR} = <f64>, {ZERO_POINT_ATTR} = <i32>}}"
            )
        value = float(scale.value.data)
        if not (math.isfinite(value) and value > 0):
            raise ProgramError(f"@main {what} #{i}: {SCALE_ATTR} must be positive, got {value}")
        qparams.append((value, int(zero_point.value.data)))
    return qparams


def is_integer_boundary(t: Attribute) -> bool:
    """An i32 tensor: the type of a logic-layer input or output.

    Not i8: an i8 boundary without host quantization attributes is a quantized
    value that lost them (an error), never an int8 logic tensor.
    """
    return (
        isinstance(t, TensorType)
        and isinstance(t.element_type, IntegerType)
        and t.element_type.width.data == 32
    )


def integer_input(tensor: object, index: int, width: int = 32) -> np.ndarray:
    """The array of an integer (logic-layer) input, a torch.int32 (or torch.int8) tensor."""
    import torch

    dtype = {8: torch.int8, 32: torch.int32}[width]
    if not isinstance(tensor, torch.Tensor) or tensor.dtype != dtype:
        got = tensor.dtype if isinstance(tensor, torch.Tensor) else type(tensor).__name__
        raise TypeError(
            f"input #{index}: expected a {dtype} torch tensor (logic layers), got {got}"
        )
    return tensor.detach().cpu().numpy()


def element_bounds(t: Attribute) -> tuple[int, int, int]:
    """(quant_min, quant_max, width) of a host-boundary tensor: the full signed range."""
    if not isinstance(t, TensorType) or not isinstance(t.element_type, IntegerType):
        raise ProgramError(f"@main must take and return integer tensors, got {t}")
    width = t.element_type.width.data
    return -(1 << (width - 1)), (1 << (width - 1)) - 1, width


def torch_quant_ops() -> tuple[Any, Any]:
    """torch's quantize/dequantize_per_tensor, the very ops of a frozen PT2E model."""
    import torch
    import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)

    ops = torch.ops.quantized_decomposed
    return ops.quantize_per_tensor.default, ops.dequantize_per_tensor.default


def quantize_float32_to_int8(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """torch's `quantize_per_tensor(x, scale, zero_point, -128, 127, int8)`, bit for bit, in numpy.

    torch computes `clamp(round(x * (1.0 / scale)) + zero_point, -128, 127).to(int8)`
    on a float32 tensor: the Python-float factor is rounded to float32 and every
    step is a float32 operation (measured: it equals float32 arithmetic on 10^7
    random values and differs from float64 arithmetic on half a million). numpy
    runs the same IEEE float32 operations in the same order: the product x *
    float32(1 / scale) (correctly rounded, no FMA), round half to even (`rint`,
    as torch.round), the add of float32(zero_point), the clamp (NaN stays NaN in
    both) and the truncating cast of an integer-valued float in [-128, 127] (NaN:
    the same C float-to-int conversion in both, which gives 0 on x86-64).
    `test/runtime/test_program.py` compares the two on halfway points, huge,
    infinite and NaN inputs and random scales.
    """
    # A product beyond float32 becomes inf and clamps, and NaN converts, as torch does both,
    # silently: no numpy warning either.
    with np.errstate(over="ignore", invalid="ignore"):
        y = np.multiply(x, np.float32(1.0 / scale), dtype=np.float32)
        np.rint(y, out=y)
        y += np.float32(zero_point)
        np.maximum(y, np.float32(-128), out=y)
        np.minimum(y, np.float32(127), out=y)
        return y.astype(np.int8)


def dequantize_int8_to_float32(q: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """torch's `dequantize_per_tensor(q, scale, zero_point, -128, 127, int8)`, bit for bit.

    torch computes `(q.to(float32) - zero_point) * scale` in float32: the
    subtraction is exact (integers below 2^24) and the product is float32(q -
    zero_point) * float32(scale), correctly rounded, as numpy computes it here.
    Exhaustively tested over the 256 int8 values for random scales.
    """
    y = np.subtract(q, np.float32(zero_point), dtype=np.float32)
    y *= np.float32(scale)
    return y
