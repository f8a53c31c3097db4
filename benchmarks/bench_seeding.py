"""Seeding the OpenCL search from the static cost model (issue 30): per kernel, the same
evolutionary search (same seed, budget and engine) without and with the model's picks in its first
population; how many candidates each measured before its best, and before it came within 10% of
the best either found. The second search of a kernel finds the pool's workers prepared (analysis,
inputs, the original's outputs), so it measures more in the same budget: `--seeded-first` swaps::

    nice python benchmarks/bench_seeding.py [--kernels gemm,2mm] [--budget 60] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_tune import KERNELS, POLYBENCH  # noqa: E402
from core_compiler.frontend import ParseOptions  # noqa: E402
from core_compiler.tune.driver import TuneOptions, TuneResult, tune  # noqa: E402
from core_compiler.tune.engine import LATE, open_engine  # noqa: E402
from core_compiler.tune.measure import Task  # noqa: E402


def main() -> None:
    args = _arguments()
    os.environ["HEXPLORE_CACHE_DIR"] = tempfile.mkdtemp(prefix="hexplore-bench-seeding-")
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    with open_engine("pool", args.jobs) as engine:
        print(f"budget {args.budget:g} s per search, seed {args.seed}, on {engine.name}", flush=True)
        print(
            f"{'kernel':10} {'seeded':6} {'best':>10} {'to best':>8} {'to 10%':>7} {'measured':>8}  load  best configuration"
        )
        for kernel in args.kernels.split(","):
            function, _, sizes = KERNELS[kernel]
            parse = ParseOptions((str(POLYBENCH / "utilities"),), tuple(f"{k.upper()}={v}" for k, v in sizes.items()))
            task = Task.of(str(POLYBENCH / kernel / f"{kernel}.c"), function, "opencl", sizes, parse)
            runs = {}
            for seeded in (True, False) if args.seeded_first else (False, True):
                options = TuneOptions(budget_s=args.budget, seed=args.seed, store=False, model_seeds=seeded)
                runs[seeded] = tune(task, options, engine=engine)
            target = min(_trials(r)[i][1] for r in runs.values() for i in range(len(_trials(r))))
            for seeded, result in runs.items():
                print(_line(kernel, seeded, result, target), flush=True)


def _trials(result: TuneResult) -> list[tuple[int, float]]:
    """(position, seconds) of each measured candidate, in the order measured, before the runoff."""
    measured = [t for t in result.search.trials if t.message != LATE]
    return [(k + 1, t.seconds if t.counts else math.inf) for k, t in enumerate(measured)]


def _line(kernel: str, seeded: bool, result: TuneResult, target: float) -> str:
    trials = _trials(result)
    best = min(s for _, s in trials)
    to_best = next(k for k, s in trials if s == best)
    near = next((str(k) for k, s in trials if s <= 1.10 * target), "-")
    label = result.label(result.best.config)
    return (f"{kernel:10} {'yes' if seeded else 'no':6} {best * 1e3:7.2f} ms {to_best:8} {near:>7} {len(trials):8}  "
            f"{os.getloadavg()[0]:4.1f}  {label}")  # fmt: skip


def _arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernels", default="gemm,2mm,syrk,jacobi-2d,heat-3d")
    p.add_argument("--budget", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument(
        "--seeded-first", action="store_true", help="the seeded search first (the second finds workers warm)"
    )
    return p.parse_args()


if __name__ == "__main__":
    main()
