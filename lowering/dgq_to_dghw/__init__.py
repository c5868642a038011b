"""The patterns of `convert-dgq-to-dghw`, one module per op family.

The registry's rows name each family's patterns (`OpRow.to_dghw`). `common`
holds what the families share (lowered values, layouts, the emitter); the pass
itself is `dg.lowering.convert_dgq_to_dghw`.
"""
