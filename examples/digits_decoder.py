"""A decoder-style transformer block on scikit-learn's 8x8 digits, read as sequences of 8 rows.

Each image is a sequence of 8 tokens (its rows) of 8 pixels. The model is one
pre-norm transformer block with a classifier on top:

    token embedding (nn.Linear 8 -> dim)
    h = h + SelfAttention(Norm(h))         dg.Norm, dg.SelfAttention with RoPE
    h = h + Linear(ReLU(Linear(Norm(h))))  the MLP, ReLU as the first Linear's tail
    logits = Linear(flatten(h))

The attention has no causal mask (a mask is an add of a constant tensor or a
masked_fill, which dg does not compile): a digit is classified from all of its
rows. Steps as in the CNN demo (examples/digits_cnn.py, whose data split,
training loop and report this reuses): float training, QAT with dg's
quantizer, freeze, export, then the held-out split on the bit-accurate device
model. Prints float, fake-quant and device accuracy, top-1 agreement, and the
device model's time against the frozen model's, measured in the same run.
Each stage's IR is written to out/decoder.{dgtorch,dgq,dghw}.mlir.

    python examples/digits_decoder.py [--out out] [--epochs 20] [--qat-epochs 4]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn
from torch.fx import GraphModule
from torch.nn import functional as F

import dg

ROOT = Path(__file__).resolve().parents[1]
for helpers in (ROOT / "examples", ROOT / "bench"):  # also when loaded by path, not run
    if str(helpers) not in sys.path:
        sys.path.insert(0, str(helpers))
import digits_cnn  # noqa: E402  (the CNN demo: data split, training loop, report)
from timing import Timing, measure  # noqa: E402

TOKENS = 8
"""A digit image has 8 rows: the sequence length."""
PIXELS = 8
"""Each row has 8 pixels: the token width."""


class DigitsDecoder(nn.Module):
    """Token embedding, one pre-norm transformer block (attention with RoPE, ReLU MLP), classifier.

    Input [B, 8, 8]: 8 tokens of 8 pixels. Output [B, classes] logits.
    """

    def __init__(self, dim: int = 32, heads: int = 2, hidden: int = 64, classes: int = 10):
        super().__init__()
        self.embed = nn.Linear(PIXELS, dim)
        self.attn_norm = dg.Norm(dim)
        self.attn = dg.SelfAttention(dim, heads, rope=True, max_seq_len=TOKENS)
        self.mlp_norm = dg.Norm(dim)
        self.mlp_up = nn.Linear(dim, hidden)
        self.mlp_down = nn.Linear(hidden, dim)
        self.classify = nn.Linear(TOKENS * dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x)
        h = h + self.attn(self.attn_norm(h))
        h = h + self.mlp_down(F.relu(self.mlp_up(self.mlp_norm(h))))
        return self.classify(torch.flatten(h, 1))


def load_data(seed: int) -> tuple[torch.Tensor, ...]:
    """The CNN demo's split of the digits, each image [1, 8, 8] read as 8 tokens [8, 8]."""
    x_train, x_test, y_train, y_test = digits_cnn.load_data(seed)
    return x_train.squeeze(1), x_test.squeeze(1), y_train, y_test


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Run torch on one thread inside the block, then restore the thread count.

    The model's ops are tiny (batch 64, width 32): a second intra-op thread
    gains little, and on a machine whose cores are busy it makes every step
    several times slower while the threads wait for each other.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class Trained(NamedTuple):
    """The float model, its QAT-trained frozen quantization and the compiled program.

    (A NamedTuple, not a dataclass: this file is also loaded by path, by the
    test and the benchmark, without being registered in `sys.modules`.)
    """

    model: DigitsDecoder
    frozen: GraphModule
    program: dg.Program


def train_and_compile(
    x_train: torch.Tensor, y_train: torch.Tensor, epochs: int, qat_epochs: int, seed: int
) -> Trained:
    """Float training, QAT from the float weights, freeze and `dg.export`."""
    torch.manual_seed(seed)
    model = DigitsDecoder()
    with one_torch_thread():
        digits_cnn.train(model, x_train, y_train, epochs, 3e-3, "float training")
        model.eval()
        prepared = dg.prepare_qat(model, (x_train[:8],))
        digits_cnn.train(prepared, x_train, y_train, qat_epochs, 5e-4, "QAT")
    frozen = dg.freeze_quantization(prepared)
    return Trained(model, frozen, dg.export(frozen, (x_train[:8],)))


def time_device_and_frozen(trained: Trained, x: torch.Tensor, repeats: int) -> tuple[Timing, ...]:
    """Device model and frozen model on the same batch, one after the other in this run."""
    with torch.no_grad():
        return (
            measure(lambda: trained.program.run(x), repeats),
            measure(lambda: trained.frozen(x), repeats),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out"))
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--qat-epochs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5, help="timed runs after the warm-up")
    args = parser.parse_args()

    x_train, x_test, y_train, y_test = load_data(args.seed)
    started = time.perf_counter()
    trained = train_and_compile(x_train, y_train, args.epochs, args.qat_epochs, args.seed)
    with torch.no_grad():
        float_acc = digits_cnn.accuracy(trained.model(x_test), y_test)
        fake_quant = trained.frozen(x_test)
    device = trained.program.run(x_test)

    digits_cnn.write_stages(trained.program, args.out, "decoder")
    digits_cnn.print_accuracies(float_acc, fake_quant, device, y_test)
    ((scale, _),) = trained.program.output_qparams
    lsb = ((device - fake_quant).abs() / scale).round().max().item()
    print(f"largest logit difference: {lsb:.0f} output step(s) (device vs frozen(x))")
    on_device, frozen = time_device_and_frozen(trained, x_test, args.repeats)
    print(
        f"device model {on_device.median * 1e3:.1f} ms, frozen(x) {frozen.median * 1e3:.1f} ms "
        f"per batch of {len(x_test)} (median of {args.repeats} after a warm-up, "
        f"{torch.get_num_threads()} torch threads): {on_device.median / frozen.median:.2f}x"
    )
    print(f"IR written to {args.out}/decoder.{{dgtorch,dgq,dghw}}.mlir")
    print(f"total time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
