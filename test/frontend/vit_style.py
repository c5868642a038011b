"""A small Vision Transformer written the usual way (class token, LayerNorm, GELU, SDPA).

`ViT` is what users copy from tutorials; every line that dg rejects is marked
with the comment ``# dg:`` and the tests find them by those snippets.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class Attention(nn.Module):
    def __init__(self, dim: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: Tensor) -> Tensor:
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads)
        qkv = qkv.permute(2, 0, 3, 1, 4)  # dg: rank-5 permute
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v)  # dg: fused attention
        x = x.permute(0, 2, 1, 3)  # dg: rank-4 permute
        x = x.reshape(B, N, C)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim: int, num_heads: int, mlp_ratio: int = 4) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim * mlp_ratio)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(dim * mlp_ratio, dim)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.norm1(x))
        x = x + self.fc2(self.act(self.fc1(self.norm2(x))))
        return x


class ViT(nn.Module):
    def __init__(
        self,
        image_size: int = 32,
        patch_size: int = 8,
        dim: int = 64,
        depth: int = 2,
        num_heads: int = 4,
        num_classes: int = 10,
    ) -> None:
        super().__init__()
        num_patches = (image_size // patch_size) ** 2
        self.patch_embed = nn.Conv2d(3, dim, kernel_size=patch_size, stride=patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, num_patches + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[Block(dim, num_heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x: Tensor) -> Tensor:
        B = x.shape[0]
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        cls_tokens = self.cls_token.expand(B, -1, -1)  # dg: expand
        x = torch.cat((cls_tokens, x), dim=1)  # dg: class token
        x = x + self.pos_embed  # dg: position embedding
        x = self.blocks(x)
        x = self.norm(x)
        return self.head(x[:, 0])
