"""Per-layer fidelity: where between the float model and the device is accuracy lost?

`compare` runs one batch through three models and lines up their values at
every activation quantization of the frozen model (each `quantize_per_tensor`
node, i.e. each int8 tensor a layer hands to the next):

- the **device** (the dghw interpreter), its int8 values recorded by an
  interpreter listener (`ValueRecorder`), saturation counted by another
  (`SaturationCounter`);
- the **fake-quant** (frozen) model, run node by node with `torch.fx.Interpreter`:
  the int8 output of each quantize node;
- the **float** model, optional: the user's float `nn.Module`, prepared with
  dg's own PTQ observers (`dg.prepare_ptq`) so that BatchNorm is folded the same
  way and every observer sits where the frozen model quantizes. The value an
  observer sees is the float value at that point; observers and quantize
  nodes pair up by the node they observe (the same torch.export node names).

Device values pair with quantize nodes by the user's source line (the dghw
op's location, carried through the lowering, against the quantize node's
`source_info`, the same rule the importer uses), the value's shape (NCHW or
the device's NHWC) and its place in the graph: the device values it reads are
those paired with the quantize nodes the node reads (`DeviceValues.match`); a
graph input is the @main argument of the same index. Every difference is measured on the

The package sits above both the frontend (the frozen model's quantize nodes,
dg's PTQ observers) and the runtime (the device model): `rows` and `report` hold
the answer, `frozen` the torch side, `device` the dghw side, `fidelity` pairs
them up, `plot` draws the report.
"""

from dg.compare.fidelity import compare
from dg.compare.plot import plot_report
from dg.compare.report import FidelityReport, format_report, verdict
from dg.compare.rows import MAX_STEPS_OK, LayerRow, sqnr_db
from dg.runtime.plotting import PLOT_EXTRA_HINT

__all__ = [
    "MAX_STEPS_OK",
    "PLOT_EXTRA_HINT",
    "FidelityReport",
    "LayerRow",
    "compare",
    "format_report",
    "plot_report",
    "sqnr_db",
    "verdict",
]
