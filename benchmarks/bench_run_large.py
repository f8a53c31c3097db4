"""`hexplore run` at PolyBench's LARGE sizes: how long it takes to answer, what its race of CPU
variants tried, and how fast the code it answers with is against gcc -O3 on one thread.

Each kernel of `tests/polybench/` runs as the CLI runs it (`explorer.running.run_function`, the
device ``cpu``, the default time limit, ``-I utilities -DLARGE_DATASET`` and every size at its
LARGE_DATASET value), in a worker of its own; the ``answer`` column is that run's wall time, the
worker's start, the analysis, the C compiler's build and the race included. ``hexplore`` is the
time of the code the run chose (its ``optimized_s``), ``gcc -O3`` the original built with
``gcc -O3 -march=native`` and called on the same inputs (as `bench_cpu.py` builds it; best of up
to 3 calls within a second, one where a call takes longer), ``x gcc`` their ratio. ``tried`` is
how many of the schedule variants of the kernel the race tried (``p``: some of them only at
smaller time-step counts). The tuning cache is off unless ``--cached`` (then each kernel runs
twice, in a private cache directory of this run, and ``cached`` is the second run's answer).

    python benchmarks/bench_run_large.py [--kernels heat-3d,gemm] [--timeout 120] [--cached]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core_compiler.analysis import analyze_file  # noqa: E402
from core_compiler.frontend import ParseOptions  # noqa: E402
from core_compiler.runtime.cpu_variants import prepare  # noqa: E402
from core_compiler.runtime.reference import BuildOptions, run_reference  # noqa: E402
from explorer.running import DEFAULT_TIMEOUT_S, RunReport, default_params, run_function  # noqa: E402

POLYBENCH = ROOT / "tests" / "polybench"
PARSE = ParseOptions((str(POLYBENCH / "utilities"),), ("LARGE_DATASET",))
GCC = BuildOptions(compiler="gcc", extra_flags=("-O3", "-march=native"))
KERNELS = sorted(p.name for p in POLYBENCH.iterdir() if (p / f"{p.name}.c").exists())


def large_sizes(kernel: str) -> dict[str, int]:
    """The LARGE_DATASET macros of the kernel's header, by the parameter names they size
    (``TSTEPS`` -> ``tsteps``)."""
    header = (POLYBENCH / kernel / f"{kernel}.h").read_text()
    block = re.search(r"#\s*ifdef LARGE_DATASET\n(.*?)#\s*endif", header, re.S)
    if block is None:
        raise ValueError(f"{kernel}.h has no LARGE_DATASET sizes")
    return {m.group(1).lower(): int(m.group(2)) for m in re.finditer(r"#\s*define\s+(\w+)\s+(\d+)", block.group(1))}


@dataclass(frozen=True)
class Row:
    kernel: str
    answer_s: float  # the run's wall time
    report: RunReport
    gcc_s: float
    cached_s: float | None  # the second run's wall time, with --cached

    @property
    def speedup(self) -> float:
        return self.gcc_s / self.report.optimized_s if self.report.optimized_s > 0 else math.nan


def main() -> None:
    args = _arguments()
    wanted = args.kernels.split(",") if args.kernels else KERNELS
    if args.cached:
        os.environ["HEXPLORE_CACHE_DIR"] = tempfile.mkdtemp(prefix="hexplore-bench-")
        os.environ["HEXPLORE_TUNING"] = "on"
    else:
        os.environ["HEXPLORE_TUNING"] = "off"
    print(f"\nhexplore run --device cpu at PolyBench LARGE sizes, time limit {args.timeout:g} s, "
          f"{os.cpu_count()} cores; gcc -O3 -march=native on one thread")  # fmt: skip
    head = (f"{'kernel':16}{'answer':>9}{'cached':>8}{'status':>9}{'tried':>7}  {'variant':24}{'hexplore':>10}"
            f"{'gcc -O3':>10}{'x gcc':>8}{'cc -O2':>9}")  # fmt: skip
    print(head)
    print("-" * len(head))
    rows = [_bench(k, args.timeout, args.cached) for k in wanted]
    print("-" * len(head))
    done = [r for r in rows if r.report.completed and r.speedup > 0]
    slowest = max(rows, key=lambda r: r.answer_s)
    print(f"answered within the limit: {sum(r.answer_s <= args.timeout for r in rows)} of {len(rows)}; "
          f"slowest answer {slowest.answer_s:.1f} s ({slowest.kernel})")  # fmt: skip
    if done:
        geo = math.exp(sum(math.log(r.speedup) for r in done) / len(done))
        print(f"geometric mean speedup over gcc -O3 (one thread), {len(done)} kernels: {geo:.2f}x")


def _arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernels", default="", help="comma-separated names, e.g. heat-3d,gemm (default: all 30)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="the run's time limit (default %(default)s s)")
    p.add_argument("--cached", action="store_true", help="run each kernel twice: the second reads the tuning cache")
    return p.parse_args()


def _bench(kernel: str, timeout: float, cached: bool) -> Row:
    path = str(POLYBENCH / kernel / f"{kernel}.c")
    function = "kernel_" + kernel.replace("-", "_")
    (fa,) = analyze_file(path, parse_options=PARSE, only=function).functions
    sizes = default_params(fa, {k: v for k, v in large_sizes(kernel).items() if fa.function.param(k) is not None})
    start = time.perf_counter()
    report = run_function(path, function, "cpu", sizes, timeout_s=timeout, parse=PARSE)
    answer = time.perf_counter() - start
    again = None
    if cached:
        start = time.perf_counter()
        run_function(path, function, "cpu", sizes, timeout_s=timeout, parse=PARSE)
        again = time.perf_counter() - start
    row = Row(kernel, answer, report, _gcc(path, function, sizes), again)
    _print(row)
    return row


def _gcc(path: str, function: str, sizes: dict[str, int]) -> float:
    """The original built by gcc -O3 and called on the run's inputs (`prepare` makes the same)."""
    case = prepare(path, function, sizes, parse=PARSE)
    return run_reference(path, case.layout, case.inputs, options=GCC, rounds=3).elapsed_s


def _print(r: Row) -> None:
    rep = r.report
    tried = f"{rep.variants_tried}/{rep.variants_total}" if rep.variants_total else "-"
    if "only at smaller sizes" in rep.search:
        tried += "p"
    cached = f"{r.cached_s:>7.1f}s" if r.cached_s is not None else f"{'':>8}"
    hx = f"{rep.optimized_s:>9.3f}s" if rep.completed else f"{'-':>10}"
    speed = f"{r.speedup:>7.2f}x" if rep.completed else f"{'-':>8}"
    ref = f"{rep.reference_s:>8.3f}s" if rep.completed else f"{'-':>9}"
    print(f"{r.kernel:16}{r.answer_s:>8.1f}s{cached}{rep.status:>9}{tried:>7}  {rep.variant[:24]:24}{hx}"
          f"{r.gcc_s:>9.3f}s{speed}{ref}", flush=True)  # fmt: skip
    if not rep.completed or rep.status != "ok":
        print(f"    {rep.message.splitlines()[0] if rep.message else ''}", flush=True)
    elif rep.search:
        print(f"    {rep.search}", flush=True)


if __name__ == "__main__":
    main()
