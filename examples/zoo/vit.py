"""A ViT-style encoder (ViT-Ti/16 sizes), written as timm writes a VisionTransformer.

Patches by a strided Conv2d (timm's PatchEmbed), then tokens: pre-norm blocks
``x = x + attn(norm1(x)); x = x + mlp(norm2(x))``, a final norm, pooling over
the tokens, a Linear head. Three edits where a spec row forces one:

- positions: timm adds a learned position embedding (``x + self.pos_embed``),
  but the device adds only two activation streams, never a parameter; the
  attention applies RoPE instead (`dg.SelfAttention(rope=True)`, as timm's
  RoPE ViTs do), over the 196 patches in raster order. No class token either
  (a cat of a parameter with activations): the head reads the average of all
  tokens (timm's ``global_pool="avg"``);
- the average is ``x.mean(1)``, as in timm: dg compiles the token mean as an
  average pool;
- `dg.Norm` for `nn.LayerNorm`, `dg.SelfAttention` for timm's Attention
  (the same q/k/v/out Linears, softmax(q k^T / sqrt(d)) v), ReLU in the MLP
  for GELU (ReLU, sigmoid and softmax are dg's activations).
"""

from __future__ import annotations

from torch import Tensor, nn
from torch.nn import functional as F

import dg


class PatchEmbed(nn.Module):
    """Image to patch tokens: a Conv2d with kernel = stride = patch size, [B, N, D] out."""

    def __init__(self, img_size: int = 224, patch_size: int = 16, embed_dim: int = 192) -> None:
        super().__init__()
        self.grid_size = img_size // patch_size
        self.num_patches = self.grid_size**2
        self.proj = nn.Conv2d(3, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x: Tensor) -> Tensor:
        x = self.proj(x)
        return x.flatten(2).transpose(1, 2)  # BCHW -> BNC


class Mlp(nn.Module):
    """fc1, activation, fc2, as timm's Mlp (ReLU for GELU: module docstring)."""

    def __init__(self, in_features: int, hidden_features: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.fc2 = nn.Linear(hidden_features, in_features)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(F.relu(self.fc1(x)))


class Block(nn.Module):
    """A pre-norm transformer encoder block."""

    def __init__(self, dim: int, num_heads: int, mlp_ratio: float, num_tokens: int) -> None:
        super().__init__()
        self.norm1 = dg.Norm(dim, eps=1e-6)
        self.attn = dg.SelfAttention(dim, num_heads, rope=True, max_seq_len=num_tokens)
        self.norm2 = dg.Norm(dim, eps=1e-6)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class VisionTransformer(nn.Module):
    """ViT-Ti/16 by default: 224x224 in, 196 tokens of 192, 12 blocks of 3 heads."""

    def __init__(
        self,
        img_size: int = 224,
        patch_size: int = 16,
        num_classes: int = 1000,
        embed_dim: int = 192,
        depth: int = 12,
        num_heads: int = 3,
        mlp_ratio: float = 4.0,
    ) -> None:
        super().__init__()
        self.embed_dim = embed_dim
        self.patch_embed = PatchEmbed(img_size, patch_size, embed_dim)
        tokens = self.patch_embed.num_patches
        self.blocks = nn.Sequential(
            *[Block(embed_dim, num_heads, mlp_ratio, tokens) for _ in range(depth)]
        )
        self.norm = dg.Norm(embed_dim, eps=1e-6)
        self.head = nn.Linear(embed_dim, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward_features(self, x: Tensor) -> Tensor:
        x = self.patch_embed(x)
        x = self.blocks(x)
        return self.norm(x)

    def forward_head(self, x: Tensor) -> Tensor:
        return self.head(x.mean(dim=1))  # the average token (module docstring)

    def forward(self, x: Tensor) -> Tensor:
        return self.forward_head(self.forward_features(x))
