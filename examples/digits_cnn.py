"""The dg demo: QAT-train a small CNN on scikit-learn's 8x8 digits and run it on the device model.

Steps: float training, QAT with dg's quantizer, freeze, export, then the held-out
split on the bit-accurate device model. Prints float, fake-quant and device
accuracy, how often device and fake-quant agree on the top-1 class, and the
per-layer fidelity table (`program.compare`, plotted to out/layers.png).
Each stage's IR is written to out/.

    python examples/digits_cnn.py [--out out] [--epochs 12] [--qat-epochs 4]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn
from torch.nn import functional as F
from tqdm import tqdm

import dg


class DigitsCNN(nn.Module):
    """Conv-BN-ReLU stem, a residual block, a strided conv, then a two-layer MLP head."""

    def __init__(self, width: int = 16, classes: int = 10):
        super().__init__()
        self.stem = nn.Conv2d(1, width, 3, padding=1)
        self.stem_bn = nn.BatchNorm2d(width)
        self.block = nn.Conv2d(width, width, 3, padding=1)
        self.block_bn = nn.BatchNorm2d(width)
        self.down = nn.Conv2d(width, 2 * width, 3, stride=2, padding=1)
        self.fc1 = nn.Linear(2 * width * 4 * 4, 64)
        self.fc2 = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.stem_bn(self.stem(x)))
        x = F.relu(self.block_bn(self.block(x)) + x)
        x = F.relu(self.down(x))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def load_data(seed: int) -> tuple[torch.Tensor, ...]:
    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.tensor(digits.target, dtype=torch.long)
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=0.25, random_state=seed, stratify=labels
    )
    return x_train, x_test, y_train, y_test


def train(model, x, y, epochs: int, lr: float, desc: str, batch: int = 64) -> None:
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(0)
    steps = epochs * ((len(x) + batch - 1) // batch)
    # disable=None: a bar on a terminal, nothing in a log (a redirected run, CI).
    with tqdm(total=steps, desc=desc, unit="step", disable=None) as bar:
        for _ in range(epochs):
            order = torch.randperm(len(x), generator=generator)
            for i in range(0, len(x), batch):
                idx = order[i : i + batch]
                loss = F.cross_entropy(model(x[idx]), y[idx])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                bar.set_postfix(loss=f"{loss.item():.3f}")
                bar.update()


def accuracy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    return (logits.argmax(1) == labels).float().mean().item() * 100


def agreement(device: torch.Tensor, fake_quant: torch.Tensor) -> float:
    """How often (in %) the device and the fake-quantized model pick the same top-1 class."""
    return (device.argmax(1) == fake_quant.argmax(1)).float().mean().item() * 100


def print_accuracies(
    float_acc: float, fake_quant: torch.Tensor, device: torch.Tensor, labels: torch.Tensor
) -> None:
    """The demos' report: accuracy of each model on the held-out split, and top-1 agreement."""
    print(f"held-out images:       {len(labels)}")
    print(f"float accuracy:        {float_acc:6.2f} %")
    print(f"fake-quant accuracy:   {accuracy(fake_quant, labels):6.2f} %")
    print(f"device accuracy:       {accuracy(device, labels):6.2f} %")
    print(f"top-1 agreement:       {agreement(device, fake_quant):6.2f} % (device vs fake-quant)")


def write_stages(program: dg.Program, out: Path, stem: str) -> None:
    """Each stage's IR to out/<stem>.{dgtorch,dgq,dghw}.mlir, and the program to reload;
    the deployment summary printed, and its plot written beside (out/<stem>.cost.png)."""
    out.mkdir(parents=True, exist_ok=True)
    for stage in ("dgtorch", "dgq", "dghw"):
        (out / f"{stem}.{stage}.mlir").write_text(program.mlir(stage))
    program.save(out / f"{stem}.dghw.program.mlir")
    print_deployment(program, out / f"{stem}.cost.png")


def print_deployment(program: dg.Program, plot: Path) -> None:
    """Will it fit, how fast: the memory plan and cost totals on the example dg.Target."""
    report = program.cost_report()
    plan = report.memory_plan
    print(
        f"peak arena {plan.peak_bytes:,} B per image (lower bound {plan.lower_bound_bytes:,} B),"
        f" constants {plan.constant_bytes:,} B, {report.total_macs:,} MACs,"
        f" estimated latency {report.latency_seconds * 1e6:.1f} us at"
        f" {report.target.clock_hz / 1e6:g} MHz (example target; an estimate, not a measurement)"
    )
    report.plot(plot)
    print(f"arena and cycles per op plotted to {plot}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out"))
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--qat-epochs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x_train, x_test, y_train, y_test = load_data(args.seed)
    started = time.perf_counter()

    model = DigitsCNN()
    train(model, x_train, y_train, args.epochs, 3e-3, "float training")
    model.eval()
    with torch.no_grad():
        float_acc = accuracy(model(x_test), y_test)

    prepared = dg.prepare_qat(model, (x_train[:8],))
    train(prepared, x_train, y_train, args.qat_epochs, 5e-4, "QAT")
    frozen = dg.freeze_quantization(prepared)
    program = dg.export(frozen, (x_test[:8],))

    with torch.no_grad():
        fake_quant = frozen(x_test)
    device = program.run(x_test)

    write_stages(program, args.out, "model")
    print_accuracies(float_acc, fake_quant, device, y_test)

    # Where does the accuracy go? One row per layer: device vs float and fake-quant model.
    report = program.compare(frozen, x_test, float_model=model)
    report.plot(args.out / "layers.png")
    print(f"IR written to {args.out}/model.{{dgtorch,dgq,dghw}}.mlir")
    print(f"per layer (plot: {args.out}/layers.png):\n{report}")
    print(f"total time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
