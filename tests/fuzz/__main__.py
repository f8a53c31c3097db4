"""The fuzzer's long mode, for bug hunting:

    python -m tests.fuzz --seeds 0:500 [--jobs 2] [--only c,opencl,llvm,cuda,ad] [--timeout 300] [--quick]
    python -m tests.fuzz --seeds 17:18 --show      # print a program

prints each failure (the program and its seed) as it is found, then a table: programs, modeled,
refused by reason, checks passed and mismatches / crashes per back end, hangs, time. Exits 1
when anything failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from tests.fuzz.generator import generate, size_sets
from tests.fuzz.run import BACKENDS, QUICK, Outcome, Pool


def _seeds(text: str) -> range:
    lo, _, hi = text.partition(":")
    return range(int(lo), int(hi) if hi else int(lo) + 1)


def table(outcomes: list[Outcome], seconds: float) -> str:
    """The summary of a run."""
    modeled = [o for o in outcomes if o.modeled]
    refused = Counter(r for o in outcomes if not o.modeled for r in o.refusals)
    skipped = Counter(s for o in outcomes for s in o.skipped)
    checks: Counter[str] = Counter()
    for o in outcomes:
        checks.update(o.checks)
    failures = Counter((f.backend, f.kind) for o in outcomes for f in o.failures)
    rows = [
        f"programs           {len(outcomes)}",
        f"modeled            {len(modeled)}",
        f"refused            {len(outcomes) - len(modeled)}",
    ]
    rows += [f"  {name:<32} {n}" for name, n in refused.most_common()]
    rows.append("back end refusals (label: reason)")
    rows += [f"  {name:<40} {n}" for name, n in skipped.most_common()]
    rows.append("checks passed      " + ", ".join(f"{b} {checks[b]}" for b in BACKENDS))
    kinds = ("mismatch", "crash", "hang")
    for kind in kinds:
        per = {b: n for (b, k), n in failures.items() if k == kind}
        total = sum(per.values())
        rows.append(f"{kind + 'es' if kind.endswith('h') else kind + 's':<18} {total}" + (
            "  (" + ", ".join(f"{b} {n}" for b, n in sorted(per.items())) + ")" if per else ""))
    bad = sorted(o.seed for o in outcomes if not o.ok)
    rows.append(f"failing seeds      {bad}")
    rows.append(f"time               {seconds:.0f} s ({sum(o.seconds for o in outcomes):.0f} s in workers)")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="0:50", help="A:B, the seeds A..B-1 (default 0:50)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (at most 2 on a shared machine)")
    p.add_argument("--only", default=",".join(BACKENDS), help=f"back ends (default {','.join(BACKENDS)})")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per program before it counts as a hang")
    p.add_argument("--quick", action="store_true", help="each back end once (C at two sizes; no CUDA, no grad)")
    p.add_argument("--show", action="store_true", help="print the programs and their sizes, run nothing")
    p.add_argument("--quiet", action="store_true", help="no line per program")
    args = p.parse_args(argv)
    seeds = _seeds(args.seeds)
    if args.show:
        for seed in seeds:
            prog = generate(seed)
            print(f"// seed {seed}: sizes {size_sets(prog, seed)}, wrt {', '.join(prog.wrt)}")
            print(f"// features: {', '.join(prog.features)}")
            print(prog.source)
        return 0
    only = tuple(b.strip() for b in args.only.split(",") if b.strip())
    if args.quick:
        only = (*only, QUICK)
    unknown = set(only) - set(BACKENDS) - {QUICK}
    if unknown:
        p.error(f"unknown back ends {sorted(unknown)}: choose from {', '.join(BACKENDS)}")
    start = time.monotonic()
    outcomes: list[Outcome] = []
    try:
        with Pool(args.jobs, args.timeout) as pool:
            for o in pool.run(seeds, only):
                outcomes.append(o)
                if not args.quiet:
                    state = "refused" if not o.modeled else ("ok" if o.ok else "FAILED")
                    print(f"[{len(outcomes)}/{len(seeds)}] seed {o.seed}: {state} ({o.seconds:.1f} s)", flush=True)
                if not o.ok:
                    print(o.report(), flush=True)
    except KeyboardInterrupt:  # the table of what finished
        print(f"interrupted after {len(outcomes)} programs")
    print(table(sorted(outcomes, key=lambda o: o.seed), time.monotonic() - start))
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
