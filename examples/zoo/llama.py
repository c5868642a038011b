"""A Llama-style decoder stack (llama2.c's 15M "stories" sizes), as the Llama reference writes it.

Each layer is ``h = x + attention(attention_norm(x)); out = h + feed_forward(ffn_norm(h))``
with RMS norms, RoPE on q and k, no biases; a final RMS norm and the output
Linear to the vocabulary. The edits where a spec row forces one:

- the token embedding (`nn.Embedding`, a gather) is no row: the stack takes
  the embedded tokens, ``[B, S, dim]`` floats, as its input;
- the feed-forward is ``w2(relu(w1(x)))``: Llama's SwiGLU, ``w2(silu(w1(x)) * w3(x))``,
  needs SiLU and a product of two activations, neither a row;
- no causal mask: a mask is an add of a constant tensor (or a masked_fill),
  which the device does not compile; `dg.SelfAttention` attends to every position;
- `dg.Norm(kind="rms")` for Llama's RMSNorm, `dg.SelfAttention(rope=True)` for its
  attention (Llama's half-split RoPE layout, `examples/rope.py`);
- a vocabulary of 512 (llama2.c's small tokenizer) keeps the logits of a batch
  of 32 x 256 tokens at 16 MB.
"""

from __future__ import annotations

from torch import Tensor, nn
from torch.nn import functional as F

import dg


class FeedForward(nn.Module):
    """w2(relu(w1(x))) (module docstring: SwiGLU is not a row)."""

    def __init__(self, dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.w2(F.relu(self.w1(x)))


class TransformerBlock(nn.Module):
    """One decoder layer: RMS-normed attention with RoPE, then the RMS-normed feed-forward."""

    def __init__(self, dim: int, n_heads: int, hidden_dim: int, max_seq_len: int, eps: float):
        super().__init__()
        self.attention = dg.SelfAttention(
            dim, n_heads, bias=False, rope=True, max_seq_len=max_seq_len
        )
        self.feed_forward = FeedForward(dim, hidden_dim)
        self.attention_norm = dg.Norm(dim, eps=eps, kind="rms")
        self.ffn_norm = dg.Norm(dim, eps=eps, kind="rms")

    def forward(self, x: Tensor) -> Tensor:
        h = x + self.attention(self.attention_norm(x))
        out = h + self.feed_forward(self.ffn_norm(h))
        return out


class Transformer(nn.Module):
    """The decoder stack: layers, final RMS norm, output projection to `vocab_size` logits."""

    def __init__(
        self,
        dim: int = 288,
        n_layers: int = 6,
        n_heads: int = 6,
        hidden_dim: int = 768,
        vocab_size: int = 512,
        max_seq_len: int = 256,
        norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            TransformerBlock(dim, n_heads, hidden_dim, max_seq_len, norm_eps)
            for _ in range(n_layers)
        )
        self.norm = dg.Norm(dim, eps=norm_eps, kind="rms")
        self.output = nn.Linear(dim, vocab_size, bias=False)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, h: Tensor) -> Tensor:
        for layer in self.layers:
            h = layer(h)
        return self.output(self.norm(h))
