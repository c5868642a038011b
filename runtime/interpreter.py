"""The dghw interpreter: the bit-accurate device model of the dg accelerator.

Every dghw op has one implementation on xDSL's interpreter framework; values
are numpy arrays (int8 / int32). `docs/dghw.md` is the specification each
implementation follows; `test/reference/dghw_reference.py` is an independent
scalar transcription of it that the tests compare against.

The accumulating ops run their integer dot products as float32 GEMMs, because
BLAS is the fastest dot product numpy has. This is exact, not approximate:
every partial sum a float32 GEMM can form is kept below 2^24 by splitting the
reduction axis into chunks (`exact_weight_splits`), and the chunks are added
in int32 when no partial sum can leave it, else in int64 (`GemmWeights`).
Rescales of int8 inputs are 256-entry tables; requantizations of int32 clip
their input and run in exact float64 (`ClippedFloatRescale`); other rescales
fold their zero points (`FoldedRescale`); an accumulate op read only by its
requantization runs with it as one step, the rescale applied to the exact float32
sums with the bias folded in (`requantized_accumulate`), for a small GEMM folded
into its float64 weights (`ScaledGemm`); FCs of one input run as one GEMM of their
weights side by side (`sibling_fcs`); docs/dghw.md ("Exactness of ...") has the proofs.
Everything derivable from an op and its constant operands is prepared once
per op (`KernelFunctions._cache`, `_plans`, in `runtime/kernels/`). The
windowed ops (depthwise conv, pooling) loop over the kernel taps, never over
elements: each tap is one operation on a strided view of the whole batch, in
integers wide enough never to wrap, or (depthwise conv, by a static bound) in
float32 whose partial sums stay exact integers below 2^24. Elementwise chains
over a whole map (the clipped float64 rescale) run block by block, in cache.
A rescale to int8 of a product with a constant is one lookup of the int8 pair
(`ProductTable`), a residual add of two such products one step of three lookups
(`ProductPair`, RoPE; `runtime/kernels/pair_tables.py`); a matmul read only by its
requantization runs with it a group of matrices at a time (`requantized_matmul`).
During a call torch's kernels run on one intra-op thread, a big GEMM or map on the
caller's (`dg.runtime.threads`): most are many and small.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ModuleOp,
    TensorType,
)
from xdsl.interpreter import (
    Interpreter,
    ReturnedValues,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.traits import CallableOpInterface
from xdsl.utils.exceptions import InterpretationError

from dg.dialects import dghw
from dg.runtime.exact import blas_threads_read_once
from dg.runtime.kernels import register_device_functions
from dg.runtime.kernels.common import numpy_dtype
from dg.runtime.kernels.layout import (
    CONCAT_OF_SLICES,
    VIEW_CHAIN,
    slices_of_one_value,
    view_chain,
)
from dg.runtime.kernels.pair_tables import (
    MUL_THEN_RESCALE,
    PRODUCT_PAIR,
    pair_lookup,
    pair_table,
    pair_table_group,
    product_pair_group,
    product_table_group,
)
from dg.runtime.kernels.sequence import MATMUL_THEN_RESCALE, requantized_matmul
from dg.runtime.kernels.weights import (
    ACCUMULATE_THEN_RESCALE,
    SIBLING_FCS,
    requantized_accumulate,
    sibling_fcs,
)
from dg.runtime.listeners import Saturation, SaturationCounter, ValueRecorder
from dg.runtime.threads import one_intra_op_thread

__all__ = [
    "DeviceInterpreter",
    "DeviceModel",
    "Saturation",
    "SaturationCounter",
    "ValueRecorder",
    "check_arguments",
    "describe_type",
    "find_function",
    "numpy_dtype",
    "register_device_functions",
    "run_dghw",
]


@dataclass(frozen=True)
class PlannedOp:
    """One op of a block with its operands and results, read once (`DeviceInterpreter`).

    With a `pair_table`, the step stands for a fused residual add (`pair_table_group`):
    its operands are the two int8 inputs, `op` the final rescale. With an `external`
    name, it stands for a group of ops run by that external impl of their family
    (`DeviceInterpreter._plan_groups`): an op and the rescale reading it (`EXTERNAL_STEPS`),
    a residual add of two rescaled products, a concat of slices, a chain of views, FCs of
    one input. Its operands are the group's inputs, `op` its last op (FCs of one input: the
    first FC), its results the group's.
    """

    op: Operation
    operands: tuple[SSAValue, ...]
    results: tuple[SSAValue, ...]
    pair_table: np.ndarray | None = None
    external: str | None = None


EXTERNAL_STEPS: tuple[tuple[Callable[[Operation], dghw.RescaleOp | None], str], ...] = (
    (requantized_accumulate, ACCUMULATE_THEN_RESCALE),
    (product_table_group, MUL_THEN_RESCALE),
    (requantized_matmul, MATMUL_THEN_RESCALE),
)
"""Ops that run with the rescale reading them as one step of an external impl: each
function returns that rescale for such an op (else None), the name is the impl's."""


@dataclass(frozen=True)
class BlockPlan:
    """How `DeviceInterpreter` runs a block unobserved: constants' values, then the other ops.

    A run keeps every value in a slot of one list, not in a dict keyed by SSA value: each
    key's hash is a Python call, and the slots made the digits transformer's run at batch
    1 about 5% faster (one process, interleaved)."""

    constants: dict[SSAValue, Any]
    steps: tuple[PlannedOp, ...]
    initial: tuple[Any, ...]
    """Each slot's value before a run: a constant's, else None."""
    argument_slots: tuple[int, ...]
    step_slots: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    """Per step, its operands' slots and its results'."""

    @staticmethod
    def build(
        constants: dict[SSAValue, Any], steps: tuple[PlannedOp, ...], arguments: Sequence[SSAValue]
    ) -> BlockPlan:
        """The plan of `steps` after `constants`, a slot per value they or `arguments` define.
        A step's operand defined nowhere else (inside another group) fails here, not in a run."""
        slots: dict[SSAValue, int] = {}
        for value in (*constants, *arguments, *(r for step in steps for r in step.results)):
            slots.setdefault(value, len(slots))
        initial: list[Any] = [None] * len(slots)
        for value, array in constants.items():
            initial[slots[value]] = array
        step_slots = tuple(
            (tuple(slots[v] for v in step.operands), tuple(slots[v] for v in step.results))
            for step in steps
        )
        argument_slots = tuple(slots[a] for a in arguments)
        return BlockPlan(constants, steps, tuple(initial), argument_slots, step_slots)


@dataclass
class DeviceInterpreter(Interpreter):
    """xDSL's interpreter with a leaner walk of single-block regions (a dghw function).

    Per op, xDSL's `run_ssacfg_region` walks the block's linked list, reads
    and writes operands through the scoped environment, formats an assertion
    message (evaluated whether or not the check fails), and `_run_op` checks
    counts and loops over listeners. On a small model at batch 1 that
    bookkeeping was a third of the device model's time
    (`bench/interpreter_floor.py`).

    Unobserved (no listeners), a block runs from a plan built once: the values
    of its constants (their `@impl` run once), and its other ops with their
    operands' and results' slots in one list of values for the call (`BlockPlan`).
    Every op still runs through the registered `@impl`, dispatched by
    xDSL (`_impls.run`, which also locates an impl's error at its op). With
    listeners (compare, saturation counts) each op goes through `_run_op`, so
    the listeners see every op; regions with several blocks take xDSL's path.
    A plan holds a block's ops as they were when it was first run: the device
    model runs a module it does not change (`Program` clones before editing).
    """

    _plans: dict[Block, BlockPlan] = field(default_factory=dict)
    fuse_groups: bool = True
    """Plan groups of ops as one step each (`_plan_groups`): residual adds as pair tables,
    which the registered impls compute, the other groups as external impls of their
    families. Off where the impls are not the device's own (`bench/interpreter_floor.py`
    replays results)."""

    def run_ssacfg_region(
        self, region: Region, args: tuple[Any, ...], name: str = "unknown"
    ) -> tuple[Any, ...]:
        block = region.blocks.first
        if block is None or block.next_block is not None:
            return super().run_ssacfg_region(region, args, name)
        if self.listeners:
            return self._run_observed(block, args, name)
        return self._run_planned(block, args)

    def _plan(self, block: Block) -> BlockPlan:
        plan = self._plans.get(block)
        if plan is None:
            plan = self._plans[block] = self._make_plan(block)
        return plan

    def _make_plan(self, block: Block) -> BlockPlan:
        """The block's ops, its constants run once (a constant's value never changes),
        each residual-add group as one lookup (`pair_table_group`) or, of two rescaled
        products, one step (`product_pair_group`), each concat of slices of one value
        (`slices_of_one_value`) and each chain of reshapes and transposes (`view_chain`) as
        one step, each requantized accumulate op and each rescaled product with a constant
        as one step (`EXTERNAL_STEPS`), requantized FCs of one input as one step
        (`sibling_fcs`)."""
        constants: dict[SSAValue, Any] = {}
        fused: dict[Operation, PlannedOp] = {}
        inside: set[Operation] = set()
        for op in block.ops:
            if self.fuse_groups and op not in inside:  # a later member of a sibling group
                self._plan_groups(op, fused, inside)
        steps = []
        for op in block.ops:
            if isinstance(op, dghw.ConstantOp):
                constants[op.result] = self._impls.run(self, op, ()).values[0]
            elif op in fused:
                steps.append(fused[op])
            elif op not in inside:
                steps.append(PlannedOp(op, tuple(op.operands), tuple(op.results)))
        return BlockPlan.build(constants, tuple(steps), block.args)

    def _plan_groups(
        self, op: Operation, fused: dict[Operation, PlannedOp], inside: set[Operation]
    ) -> None:
        """The groups that end at `op` (or, `EXTERNAL_STEPS`, start there): each becomes
        `fused`'s step at its last op, its other ops `inside` (run by that step)."""
        for group_of, external in EXTERNAL_STEPS:
            rescale = group_of(op)
            if rescale is not None:
                operands = tuple(op.operands)
                fused[rescale] = PlannedOp(rescale, operands, (rescale.result,), None, external)
                inside.add(op)
        siblings = sibling_fcs(op)
        if siblings is not None:
            fused[op] = self._siblings_step(siblings, fused, inside)
        slices = slices_of_one_value(op)
        if slices is not None:
            gather = (slices[0].input,)
            fused[op] = PlannedOp(op, gather, tuple(op.results), None, CONCAT_OF_SLICES)
            inside.update(slices)
        chain = view_chain(op)
        if chain is not None:
            for earlier in chain[:-1]:
                fused.pop(earlier, None)  # a shorter chain, planned at an earlier op
            fused[op] = PlannedOp(op, (chain[0].operands[0],), tuple(op.results), None, VIEW_CHAIN)
            inside.update(chain[:-1])
        group = pair_table_group(op) if isinstance(op, dghw.AddOp) else None
        if group is not None:
            fused[group[-1]] = self._pair_step(group, fused, inside)
            inside.update((*group[:2], op))

    @staticmethod
    def _siblings_step(
        siblings: tuple[dghw.FullyConnectedOp, ...],
        fused: dict[Operation, PlannedOp],
        inside: set[Operation],
    ) -> PlannedOp:
        """A `sibling_fcs` group's step, at its first FC: every member's result is made
        there, before any of their rescales' places, so before any use. The members' own
        steps (`ACCUMULATE_THEN_RESCALE`; the later ones not planned yet) are taken in."""
        rescales = [cast(dghw.RescaleOp, requantized_accumulate(fc)) for fc in siblings]
        fused.pop(rescales[0], None)
        inside.update((*siblings, *rescales))
        operands = (siblings[0].input, *(v for fc in siblings for v in fc.operands[1:]))
        results = tuple(r.result for r in rescales)
        return PlannedOp(siblings[0], operands, results, None, SIBLING_FCS)

    def _pair_step(
        self,
        group: tuple[dghw.RescaleOp, ...],
        fused: dict[Operation, PlannedOp],
        inside: set[Operation],
    ) -> PlannedOp:
        """A residual add's step: a pair table (`pair_table_group`); of two rescaled products
        with constants (`product_pair_group`), one step with theirs (`PRODUCT_PAIR`), their
        own steps (`MUL_THEN_RESCALE`, planned before: the muls come first) taken in."""
        lhs, rhs, final = group
        sides = product_pair_group(group)
        if sides is None:
            table = pair_table(self, group)
            return PlannedOp(final, (lhs.input, rhs.input), (final.result,), table)
        for mul, rescale in sides:
            del fused[rescale]
            inside.update((mul, rescale))
        operands = tuple(value for mul, _ in sides for value in mul.operands)
        return PlannedOp(final, operands, (final.result,), None, PRODUCT_PAIR)

    def _run_planned(self, block: Block, args: tuple[Any, ...]) -> tuple[Any, ...]:
        plan = self._plan(block)
        values = list(plan.initial)
        for slot, arg in zip(plan.argument_slots, args, strict=True):
            values[slot] = arg
        run = self._impls.run
        for step, (operands, results) in zip(plan.steps, plan.step_slots, strict=True):
            if step.pair_table is not None:
                lhs, rhs = operands
                values[results[0]] = pair_lookup(step.pair_table, values[lhs], values[rhs])
                continue
            inputs = tuple([values[slot] for slot in operands])
            if step.external is not None:
                outputs = self.call_external(step.external, step.op, inputs)
                for slot, value in zip(results, outputs, strict=True):
                    values[slot] = value
                continue
            result = run(self, step.op, inputs)
            if result.terminator_value is not None:
                return self._returned(step.op, result.terminator_value)
            if len(result.values) != len(results):
                raise InterpretationError(
                    f"'{step.op.name}' gave {len(result.values)} results, expected {len(results)}"
                )
            for slot, value in zip(results, result.values, strict=True):
                values[slot] = value
        return ()

    def _run_observed(self, block: Block, args: tuple[Any, ...], name: str) -> tuple[Any, ...]:
        initial_scope = self._ctx
        self.push_scope(name)
        try:
            self.set_values(zip(block.args, args, strict=False))
            for op in block.ops:
                result = self._run_op(op, self.get_values(op.operands))
                self.set_values(zip(op.results, result.values, strict=False))
                if result.terminator_value is not None:
                    return self._returned(op, result.terminator_value)
            return ()
        finally:
            self._ctx = initial_scope

    @staticmethod
    def _returned(op: Operation, terminator_value: object) -> tuple[Any, ...]:
        if not isinstance(terminator_value, ReturnedValues):  # no dghw op branches
            raise InterpretationError(f"'{op.name}' branches inside a single block")
        return terminator_value.values


class DeviceModel:
    """A dghw module ready to run one of its functions on numpy arrays.

    Holds one interpreter, so the per-op caches persist across calls: the
    first call pays for reading weights, later calls only compute.
    """

    def __init__(self, module: ModuleOp, function: str = "main"):
        self.interpreter = DeviceInterpreter(module)
        register_device_functions(self.interpreter)
        self.function = find_function(module, function)
        trait = self.function.get_trait(CallableOpInterface)
        assert trait is not None
        self.argument_types = trait.get_argument_types(self.function)
        self._fitting: set[tuple[Any, ...]] = set()
        """Signatures (type, dtype, shape per array) that `check` has accepted."""

    def check(self, arrays: Sequence[np.ndarray]) -> None:
        """Raise a ValueError unless `arrays` fit the function's arguments.

        Whether they fit depends only on each array's type, dtype and shape: a
        signature that passed once passes again without the checks.
        """
        try:
            signature = tuple((type(a), a.dtype, a.shape) for a in arrays)
        except AttributeError:  # not arrays: the checks say what is wrong
            signature = None
        if signature is not None and signature in self._fitting:
            return
        check_arguments(self.function.sym_name.data, self.argument_types, arrays)
        if signature is not None:
            if len(self._fitting) >= 64:  # many batch sizes: keep the set small
                self._fitting.clear()
            self._fitting.add(signature)

    def __call__(
        self, arrays: Sequence[np.ndarray], listeners: Sequence[Interpreter.Listener] = ()
    ) -> list[np.ndarray]:
        """Run the function; `listeners` observe this call only (none: no cost at all)."""
        self.check(arrays)
        self.interpreter.listeners = tuple(listeners)
        try:
            with one_intra_op_thread(), blas_threads_read_once():
                results = self.interpreter.call_op(self.function, tuple(arrays))
        finally:
            self.interpreter.listeners = ()
        return [np.ascontiguousarray(r) for r in results]


def find_function(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise InterpretationError(f"the module has no function @{name}")


def describe_type(t: Attribute) -> str:
    assert isinstance(t, TensorType)
    dims = "x".join("?" if d == DYNAMIC_INDEX else str(d) for d in t.get_shape())
    return f"tensor<{dims}x{t.element_type}>"


def check_arguments(
    function: str, types: Sequence[Attribute], arrays: Sequence[np.ndarray]
) -> None:
    """Raise a ValueError unless `arrays` fit the argument `types` of `@function`.

    Dynamic extents (the batch axis) take the arrays' extent, which must be the
    same for every argument: the device runs one batch at a time.
    """
    if len(arrays) != len(types):
        raise ValueError(f"@{function} takes {len(types)} argument(s), got {len(arrays)}")
    batch: int | None = None
    for i, (array, t) in enumerate(zip(arrays, types, strict=True)):
        # The name is built only for an error: describing the type costs more than the checks.
        def where(i: int = i, t: Attribute = t) -> str:
            return f"argument #{i} of @{function} ({describe_type(t)})"

        if not isinstance(array, np.ndarray):
            raise ValueError(f"{where()}: expected a numpy array, got {type(array).__name__}")
        if array.dtype != numpy_dtype(t):
            raise ValueError(f"{where()}: expected {numpy_dtype(t)} elements, got {array.dtype}")
        shape = cast(TensorType[Attribute], t).get_shape()
        if array.ndim != len(shape) or any(
            d != DYNAMIC_INDEX and d != a for d, a in zip(shape, array.shape, strict=True)
        ):
            raise ValueError(f"{where()}: got an array of shape {list(array.shape)}")
        for d, a in zip(shape, array.shape, strict=True):
            if d == DYNAMIC_INDEX:
                if batch is not None and a != batch:
                    raise ValueError(f"{where()}: batch extent {a} differs from {batch}")
                batch = a


def run_dghw(
    module: ModuleOp, arrays: Sequence[np.ndarray], function: str = "main"
) -> list[np.ndarray]:
    """Run `@function` (default `@main`) of a dghw module on int8/int32 numpy arrays."""
    return DeviceModel(module, function)(arrays)
