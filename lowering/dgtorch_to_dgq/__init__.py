"""The patterns of `convert-dgtorch-to-dgq`, one module per op family.

Each family module (`quantization`, `weights`, `elementwise`, `activations`,
`pooling`, `layout`, `sequence`, `norm`, `logic`) exports `PATTERNS`; `common`
holds what they share. The pass itself is `dg.lowering.convert_dgtorch_to_dgq`.
"""
