"""The shape of dg's op registry: one `OpRow` per row of the product's op table.

A row is the unit every stage of dg is organized by: it names the PyTorch ops it
covers (ATen overloads, by name), its op `Family` (the module that holds its code
in every stage: `frontend/importer/<family>.py`, `lowering/dgtorch_to_dgq/<family>.py`,
`lowering/dgq_to_dghw/<family>.py`, `lowering/dghw_to_tosa/<family>.py`,
`runtime/kernels/<family>.py`), how the quantizer annotates it (`QuantRule`), its
dialect ops and the rewrite patterns that carry it through the conversion passes.

The registry lives below the frontend and imports no torch: ATen overloads are
named by strings (``"aten.conv2d.default"``, written ``aten.conv2d.default`` with
the `aten` namespace below), which the frontend resolves (`dg.frontend.ops`).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from enum import Enum
from typing import TypeAlias

from xdsl.pattern_rewriter import RewritePattern

from dg.lowering.dghw_to_tosa.common import PatternFactory


class OpNames:
    """``aten.conv2d.default`` -> ``"aten.conv2d.default"``: ATen overloads named without torch."""

    def __init__(self, namespace: str):
        self._namespace = namespace

    def __getattr__(self, packet: str) -> OverloadNames:
        return OverloadNames(f"{self._namespace}.{packet}")


class OverloadNames:
    """The overloads of one ATen op, by name (``.default``, ``.Tensor``, ...)."""

    def __init__(self, packet: str):
        self._packet = packet

    def __getattr__(self, overload: str) -> str:
        return f"{self._packet}.{overload}"


aten = OpNames("aten")


class Section(Enum):
    """The tables of the spec, in its order; `BEYOND_SPEC` holds what dg adds."""

    LAYERS = "Layers"
    ACTIVATIONS = "Activations"
    SHAPE = "Shape & Elementwise Operations"
    NOT_SUPPORTED = "Not Supported"
    SPECIAL_CASES = "Special Cases"
    BEYOND_SPEC = "Beyond the spec"


class Status(Enum):
    """What dg does with a row today."""

    SUPPORTED = "supported"
    PLANNED = "not yet implemented"
    """A supported row of the spec that a later dg release implements; export rejects it."""
    NOT_SUPPORTED = "rejected at export"


class Family(Enum):
    """An op family: the name of the module that holds a row's code in every stage."""

    QUANTIZATION = "quantization"
    WEIGHTS = "weights"
    ELEMENTWISE = "elementwise"
    ACTIVATIONS = "activations"
    POOLING = "pooling"
    LAYOUT = "layout"
    SEQUENCE = "sequence"
    NORM = "norm"
    LOGIC = "logic"


class QuantRule(Enum):
    """How dg's quantizer annotates the ops of a row (`dg.frontend.quantizer`)."""

    WEIGHTED = "weighted"
    """Conv2d / Linear: int8 per-channel weight, int32 bias, int8 output (with fusion tails)."""
    RESIDUAL = "residual"
    """A residual add of two quantized activations, its own output grid (with a fusion tail)."""
    FUSION_TAIL = "fusion tail"
    """Quantized only as the tail of the op before it (relu)."""
    SHARED_GRID = "shared grid"
    """The output holds (some of, the maximum of, or the mean of) the input's values: it shares
    the input's quantization instead of being requantized."""
    CONCAT_GRID = "concat grid"
    """Inputs and output share one grid."""
    FIXED_GRID = "fixed grid"
    """The output lies in [0, 1]: pinned to the fixed grid the device computes it on."""


class Stage(Enum):
    """The conversion passes, in pipeline order: each applies the patterns its rows name."""

    TO_DGQ = "convert-dgtorch-to-dgq"
    TO_DGHW = "convert-dgq-to-dghw"
    TO_TOSA = "convert-dghw-to-tosa"


PatternClass: TypeAlias = type[RewritePattern] | PatternFactory
"""A row's pattern: a class the pass instantiates (TOSA's take the pass option `batch`)."""


@dataclass(frozen=True)
class OpRow:
    """One row of the op table.

    `op` and `notes` are the spec's two columns, verbatim ("" when the spec
    has no note). `aten` names the ATen overloads ``torch.export`` produces for
    it, `module_types` the ``nn.Module`` classes (qualified names) whose whole
    body the row covers, e.g. ``nn.MultiheadAttention``, which exports as
    many small ops. `dgtorch`/`dgq`/`dghw` name the dialect ops implementing
    the row at each stage; `to_dgq`, `to_dghw` and `to_tosa` are the pattern
    classes of the three conversion passes that carry it (each pass applies
    the patterns of every row, in the registry's order).
    `spellings` are the names users write for it (``F.interpolate``), used to
    name the op in error messages when the ATen name is not what they wrote.
    For rejected rows, `fix` says what to write instead; `reason` is what
    error messages say.
    """

    section: Section
    op: str
    notes: str = ""
    _: KW_ONLY
    family: Family
    quantization: QuantRule | None = None
    """None: nothing to annotate, or a rule of the quantizer's own (matmul, mul, norm)."""
    aten: tuple[str, ...] = ()
    module_types: tuple[str, ...] = ()
    dgtorch: tuple[str, ...] = ()
    dgq: tuple[str, ...] = ()
    dghw: tuple[str, ...] = ()
    to_dgq: tuple[type[RewritePattern], ...] = ()
    to_dghw: tuple[type[RewritePattern], ...] = ()
    to_tosa: tuple[PatternFactory, ...] = ()
    status: Status = Status.SUPPORTED
    fix: str | None = None
    spellings: tuple[str, ...] = ()
    message: str | None = None
    """What errors say when the spec's note is not the right sentence for them."""
    remark: str = ""
    """dg's reading of the row where the spec leaves room (shown on the supported-ops page)."""

    @property
    def in_spec(self) -> bool:
        return self.section is not Section.BEYOND_SPEC

    @property
    def reason(self) -> str:
        """The reason error messages give: the spec's note, or a generic one."""
        if self.message is not None:
            return self.message
        if self.status is Status.PLANNED:
            return (
                f"is a supported row of the spec ({self.op}) that this dg release does not "
                "implement yet"
            )
        return self.notes or "is not supported"

    @property
    def patterns(self) -> tuple[PatternClass, ...]:
        """The pattern classes of every conversion pass that carry this row."""
        return (*self.to_dgq, *self.to_dghw, *self.to_tosa)

    def patterns_of(self, stage: Stage) -> tuple[PatternClass, ...]:
        """The pattern classes that carry this row through the conversion pass `stage`."""
        match stage:
            case Stage.TO_DGQ:
                return self.to_dgq
            case Stage.TO_DGHW:
                return self.to_dghw
            case Stage.TO_TOSA:
                return self.to_tosa

    def covers(self, target: object) -> bool:
        """Whether `target` (an ATen overload, or its name) is one of this row's ops."""
        return str(target) in self.aten
