"""The patterns of `convert-dgtorch-to-dgq`, one module per op family.

Each family module (`quantization`, `weights`, `elementwise`, `activations`,
`pooling`, `layout`, `sequence`, `norm`, `logic`) defines the patterns of its
rows; the registry's rows name them (`OpRow.to_dgq`) and the pass applies them
in the rows' order. `common` holds what they share. The pass itself is
`dg.lowering.convert_dgtorch_to_dgq`.
"""
