"""The patterns of `convert-dghw-to-tosa`, one module per op family.

Each family module defines the pattern classes of its dghw ops, which the
registry's rows name (`OpRow.to_tosa`); they take the pass option `batch`
(TOSA has no dynamic extents). `common` holds what the families share
(`TosaBuilder`, exact windows, the base class). The pass itself is
`dg.lowering.convert_dghw_to_tosa`.
"""
