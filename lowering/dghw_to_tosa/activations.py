"""`convert-dghw-to-tosa`, activations family: the 256-entry lookup table."""

from __future__ import annotations

import numpy as np
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw
from dg.dialects import tosa as tosa1
from dg.lowering.dghw_to_tosa.common import DghwToTosaPattern


class TableToTosa(DghwToTosaPattern):
    """`dghw.table` -> `tosa.table` with the 256 i8 entries as a `tosa.const`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.TableOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        table = np.array(op.table.get_values(), dtype=np.int8)
        lookup = tosa1.TableOp.build(
            operands=[op.input, b.const(table)], result_types=[b.result_type()]
        )
        rewriter.replace(op, [], [b.emit(lookup)])
