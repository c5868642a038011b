"""The patterns of `convert-dgq-to-dghw`, one module per op family.

`common` holds what the families share (lowered values, layouts, the emitter);
the pass itself is `dg.lowering.convert_dgq_to_dghw`.
"""
