"""`make fuzz`: many random graphs and mutated .mlir files; counts of outcomes by kind.

    python test/fuzz/run_fuzz.py [--graphs N] [--mutants N] [--seed S] [--failures FILE]

Unlike the bounded tests, a failure does not stop the run: every outcome is
counted by kind, and each failing case is written (as the Python that
rebuilds it) to the failures file, to become a regression test.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "models"), str(HERE.parent / "reference")]

import graphs  # noqa: E402
import mlir_mutations  # noqa: E402
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402


def run(name: str, strategy, check, count: int, rng_seed: int, failures) -> Counter:
    counts: Counter = Counter()
    if count <= 0:
        return counts
    start = time.monotonic()

    @seed(rng_seed)
    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=["generate"],
    )
    @given(strategy)
    def one(case) -> None:
        outcome = check(case)
        counts[outcome.kind] += 1
        if not outcome.passed:
            failures.write(f"## {name}: {outcome.kind}\n{case!r}\n{outcome.detail}\n\n")
            failures.flush()
        done = sum(counts.values())
        if done % 10 == 0:
            rate = done / (time.monotonic() - start)
            print(f"  {name}: {done} ({rate:.1f}/s) {dict(counts)}", flush=True)

    try:
        one()
    except KeyboardInterrupt:  # stopped early (Ctrl-C, or SIGTERM below): count what ran
        counts["(stopped early)"] = 0
        raise StoppedEarly(counts) from None
    return counts


class StoppedEarly(Exception):
    def __init__(self, counts: Counter):
        super().__init__("stopped early")
        self.counts = counts


def stop_on_sigterm(signum, frame) -> None:
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=1000, help="random models (image+sequence)")
    parser.add_argument("--rejected", type=int, default=100, help="models dg must reject")
    parser.add_argument("--mutants", type=int, default=2000, help="mutated .mlir inputs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--failures", type=Path, default=Path("out/fuzz-failures.txt"))
    args = parser.parse_args()
    args.failures.parent.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    fuzzers = [
        ("dg-opt mutants", mlir_mutations.mutants(), mlir_mutations.check_mutant, args.mutants),
        ("rejected models", graphs.rejected_graphs(), graphs.check_rejected, args.rejected),
        ("random graphs", graphs.graphs(), graphs.check_graph, args.graphs),
    ]
    results = {}
    with args.failures.open("w") as failures:
        for name, strategy, check, count in fuzzers:
            try:
                results[name] = run(name, strategy, check, count, args.seed, failures)
            except StoppedEarly as stopped:
                results[name] = stopped.counts
                break
    failed = 0
    print("\n| fuzzer | cases | outcome counts |\n|---|---|---|")
    for name, counts in results.items():
        print(f"| {name} | {sum(counts.values())} | {dict(sorted(counts.items()))} |")
        failed += sum(n for kind, n in counts.items() if kind not in graphs.PASSING)
    print(f"\nfailing cases: {args.failures}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
