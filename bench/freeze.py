"""Time a first `prepare_qat` + `freeze_quantization` in fresh processes, against torchao's flow.

Each measurement runs in its own Python process (a user's first freeze), on
one thread (torch, OpenMP, BLAS), and times the calls only; the imports are
timed apart. Per model:

- dg, cold: an empty cache directory (`DG_CACHE_DIR`): every torchao pattern is
  exported, as on the first freeze after installing or upgrading torch/torchao;
- dg, warm: the same directory again (patterns loaded from `pattern_store`),
  median of `--repeats` processes: every later process;
- torchao: its own flow on the same model, `prepare_qat_pt2e` of `torch.export`
  + `convert_pt2e`, with `X86InductorQuantizer` or `ArmInductorQuantizer`
  (`BASELINES`), in a process that never imports dg, so nothing is cached.

Models: README's five-layer QAT example, and ResNet-18 with batch norm at 224x224
(test/models/user_models.py, the stem max pool without padding as dg asks).
One training step (a forward pass) runs between prepare and freeze, untimed.

    .venv/bin/python bench/freeze.py [--repeats 3] [--models readme,resnet18]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
TARGETS = {"readme": 3.0, "resnet18": 5.0}
"""Seconds for prepare + freeze in a fresh process, dg warm (issue 12)."""


def build(name: str) -> tuple[object, tuple[object, ...]]:
    import torch
    from torch import nn

    torch.manual_seed(0)
    if name == "readme":
        layers = (nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten())
        return nn.Sequential(*layers, nn.Linear(8 * 8 * 8, 10)), (torch.rand(8, 1, 8, 8),)
    sys.path.insert(0, str(ROOT / "test" / "models"))
    from user_models import resnet18

    return resnet18(num_classes=1000, maxpool_padding=0), (torch.rand(2, 3, 224, 224),)


TORCHAO_FLOWS = {
    "torchao-x86": "torchao (X86InductorQuantizer)",
    "torchao-arm": "torchao (ArmInductorQuantizer)",
}
"""torchao's own QAT flows, the baseline."""
BASELINES = {"readme": ("torchao-x86",), "resnet18": ("torchao-arm",)}
"""The flows measured per model. X86InductorQuantizer fails on ResNet-18 QAT in torchao 0.18
("Input partition has more than one output node", annotating conv-bn-add-relu);
ArmInductorQuantizer, the same flow with Arm's configuration, quantizes it. `--all-baselines`
runs every flow on every model."""


def torchao_quantizer(flow: str) -> object:
    """The torchao quantizer of `flow`, configured for QAT."""
    if flow == "torchao-x86":
        from torchao.quantization.pt2e.quantizer import x86_inductor_quantizer as x86

        quantizer = x86.X86InductorQuantizer()
        quantizer.set_global(x86.get_default_x86_inductor_quantization_config(is_qat=True))
        return quantizer
    from torchao.quantization.pt2e.quantizer import arm_inductor_quantizer as arm

    quantizer = arm.ArmInductorQuantizer()
    quantizer.set_global(arm.get_default_arm_inductor_quantization_config(is_qat=True))
    return quantizer


def child(flow: str, name: str) -> dict[str, float]:
    """One measurement, in this (fresh) process: import, prepare and freeze times in seconds."""
    started = time.perf_counter()
    import torch

    torch.set_num_threads(1)
    if flow == "dg":
        import dg
        import dg.frontend.prepare  # noqa: F401  (dg imports it on first use)

        prepare = dg.prepare_qat
        freeze = dg.freeze_quantization
    else:
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e

        def prepare(model, example):
            exported = torch.export.export(model, example).module()
            return prepare_qat_pt2e(exported, torchao_quantizer(flow))

        freeze = convert_pt2e
    imported = time.perf_counter()
    model, example = build(name)
    model.train()
    began, began_cpu = time.perf_counter(), time.process_time()
    prepared = prepare(model, example)
    prepared_at, prepared_cpu = time.perf_counter(), time.process_time()
    prepared(*example)  # one training step: untimed
    frozen_from, frozen_from_cpu = time.perf_counter(), time.process_time()
    freeze(prepared)
    done, done_cpu = time.perf_counter(), time.process_time()
    return {
        "import": imported - started,
        "prepare": prepared_at - began,
        "freeze": done - frozen_from,
        "cpu": (prepared_cpu - began_cpu) + (done_cpu - frozen_from_cpu),
    }


def run_child(flow: str, name: str, cache: str) -> dict[str, float] | None:
    """One fresh process's times; None when the flow fails on the model (its last line said)."""
    env = {**os.environ, **ONE_THREAD, "DG_CACHE_DIR": cache}
    command = [sys.executable, __file__, "--child", flow, "--models", name]
    done = subprocess.run(command, env=env, check=False, capture_output=True, text=True)
    if done.returncode:
        print(f"  ({flow} failed on {name}: {done.stderr.strip().splitlines()[-1]})")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", default="readme,resnet18")
    parser.add_argument("--child", choices=("dg", *TORCHAO_FLOWS), help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="the README model only, 1 repeat")
    parser.add_argument(
        "--all-baselines", action="store_true", help="every torchao flow on every model"
    )
    args = parser.parse_args()
    if args.quick:
        args.models, args.repeats = "readme", 1
    if args.child:
        print(json.dumps(child(args.child, args.models)))
        return

    print(
        "prepare_qat + freeze_quantization in fresh processes, 1 thread every side (s): wall "
        "times, and the CPU time of prepare + freeze, which the target judges (one thread's "
        "work, whatever else runs on the shared machine)"
    )
    print("| model | flow | import | prepare | freeze | prepare + freeze | CPU | target | met |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        with tempfile.TemporaryDirectory(prefix="dg-bench-cache-") as cache:
            rows = {
                "dg, cold cache": [run_child("dg", name, cache)],
                "dg, warm cache": [run_child("dg", name, cache) for _ in range(args.repeats)],
                **{
                    TORCHAO_FLOWS[flow]: [run_child(flow, name, cache)]
                    for flow in (TORCHAO_FLOWS if args.all_baselines else BASELINES[name])
                },
            }
        for flow, measured in rows.items():
            runs = [r for r in measured if r is not None]
            if not runs:
                print(f"| {name} | {flow} | failed | | | | | | |")
                continue
            times = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            total = times["prepare"] + times["freeze"]
            target = TARGETS[name] if flow == "dg, warm cache" else None
            verdict = "" if target is None else ("yes" if times["cpu"] <= target else "NO")
            print(
                f"| {name} | {flow} | {times['import']:.2f} | {times['prepare']:.2f} "
                f"| {times['freeze']:.2f} | {total:.2f} | {times['cpu']:.2f} | {target or ''} "
                f"| {verdict} |"
            )


if __name__ == "__main__":
    main()
