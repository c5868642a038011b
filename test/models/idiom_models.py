"""Models written with everyday idioms that go beyond the spec's wording (issue 13)."""

from __future__ import annotations

import torch
from torch import Tensor, nn


class GlobalMeanHead(nn.Module):
    """A CNN head pooling with `x.mean((2, 3))` (torchvision MobileNetV2 before 0.8)."""

    def __init__(self, keepdim: bool = False, channels: int = 64):
        super().__init__()
        self.keepdim = keepdim
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.fc = nn.Linear(channels, 10)

    def forward(self, x: Tensor) -> Tensor:
        y = torch.relu(self.conv(x))
        if self.keepdim:
            return self.fc(y.mean(dim=(-2, -1), keepdim=True).flatten(1))
        return self.fc(y.mean((2, 3)))


class ChunkedProjection(nn.Module):
    """`q, k, v = self.qkv(x).chunk(3, dim=-1)`, then a hand-written attention."""

    def __init__(self, dim: int = 64):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.scale = dim**-0.5

    def forward(self, x: Tensor) -> Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attention = torch.softmax((q @ k.transpose(-2, -1)) * self.scale, dim=-1)
        return self.proj(attention @ v)


class SplitSizes(nn.Module):
    """`torch.split(x, [a, b], dim=-1)` and `Tensor.split(size)`, joined again by Linear layers."""

    def __init__(self, dim: int = 48):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.left = nn.Linear(16, 8)
        self.right = nn.Linear(dim - 16, 8)

    def forward(self, x: Tensor) -> Tensor:
        a, b = torch.split(self.fc(x), [16, 32], dim=-1)
        halves = self.left(a).split(4, dim=-1)
        return torch.cat([halves[1], halves[0], self.right(b)], dim=-1)


class UnbindTokens(nn.Module):
    """`x.unbind(1)` of [B, S, D] and `x[:, 0]` (a class-token read-out)."""

    def __init__(self, dim: int = 32):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 4)

    def forward(self, x: Tensor) -> Tensor:
        y = self.fc(x)
        first, second, *_ = y.unbind(1)
        return self.head(first + second) + self.head(y[:, -1])


class SpatialChunk(nn.Module):
    """`chunk` of a feature map's channels: the slice row's error."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)

    def forward(self, x: Tensor) -> Tensor:
        a, b = self.conv(x).chunk(2, dim=1)  # dg: spatial chunk
        return a + b


class BatchSplit(nn.Module):
    """`chunk` of the batch axis: refused, dg compiles for any batch size."""

    def __init__(self, dim: int = 32):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: Tensor) -> Tensor:
        a, b = self.fc(x).chunk(2, dim=0)  # dg: batch chunk
        return a + b


class DictHeads(nn.Module):
    """A detector-style model returning a dict of heads, one of them a nested tuple/list."""

    def __init__(self, channels: int = 32):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.boxes = nn.Conv2d(channels, 4, 1)
        self.classes = nn.Linear(channels, 5)

    def forward(self, x: Tensor) -> dict[str, object]:
        features = torch.relu(self.stem(x))
        pooled = features.mean((2, 3))
        return {"logits": self.classes(pooled), "extra": (self.boxes(features), [pooled])}


class SharedBranches(nn.Module):
    """One Linear called on two inputs (which may be the same tensor)."""

    def __init__(self, dim: int = 32):
        super().__init__()
        self.encoder = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, 8)

    def forward(self, a: Tensor, b: Tensor) -> Tensor:
        return self.out(torch.relu(self.encoder(a)) + self.encoder(b))


class TokenMean(nn.Module):
    """Token mean-pooling of a [B, S, D] sequence: `x.mean(1)` (or `dim=-2, keepdim=True`)."""

    def __init__(self, dim: int = 64, keepdim: bool = False):
        super().__init__()
        self.keepdim = keepdim
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: Tensor) -> Tensor:
        if self.keepdim:
            return self.fc(x).mean(dim=-2, keepdim=True)
        return self.fc(x).mean(1)


class LastAxisSum(nn.Module):
    """A sum over features that is no norm: the reduction error, without dg.Norm."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(x).amax(-1) + self.fc(x).sum(-1)  # dg: reductions
