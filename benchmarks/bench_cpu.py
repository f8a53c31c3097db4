"""CPU speed: the suite's kernels compiled by gcc -O3 -march=native (the original C) against
hexplore's optimized schedule JIT-compiled by LLVM at O3 for this CPU, on one thread and on all
cores (libgomp), with a clang-16 + Polly column when ``clang-16`` is on PATH.

Sizes are per kernel (`SIZES`), chosen so that the gcc build of the original takes roughly 0.1-1 s
on a Zen 4 core (measured 2026-11); the memory-bound matrix-vector kernels stay at 0.02-0.1 s,
where their arrays are already 150-300 MB; ``--quick`` divides every extent by 4 (time steps too) and runs once, to
check that the script works without occupying a shared machine. Every optimized result is
compared with gcc's (the ``check`` column). Times are the best of ``--repeat`` calls, gcc's and
hexplore's taken in turns.

hexplore's code is the variant `cpu_llvm.choose_variant` picks on that many threads after timing
each: T (tiled), U (the same schedule untiled), B (the tilable schedule, tiled: bands before
outer parallelism), TJ/UJ/BJ (those with unroll-and-jam by 4), TR/UR (T and U with 4x4 register
tiles, whole strips unguarded), D/DJ (the statements distributed over separate nests, untiled,
without and with unroll-and-jam) or S (the source order), with a 1 when its parallel loops run on
one thread because that was faster;
the ``variant`` column shows the choice for 1 thread / all cores. The ``2T/1T`` column (for 2
cores) is the one-thread time over the all-core time, and ``GB/s`` what the one-thread code moves
if each loop nest of the source streams its arrays once (a lower bound of its memory traffic).
The first line gives the memory bandwidth on one and on all cores (STREAM's triad, hexplore's
code), the last ones the geometric mean of ``2T/1T`` over the kernels whose all-core code runs
parallel loops: apart for those that move at least a third of the triad's one-thread bandwidth
on one thread, whose ceiling is the triad's own ratio.

    python benchmarks/bench_cpu.py [--quick] [--repeat N] [--kernels gemm,lu]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import islpy as isl  # noqa: E402
import numpy as np  # noqa: E402

from core_compiler.llvm.jit import JitFunction, set_threads  # noqa: E402
from core_compiler.runtime.compare import compare_arrays  # noqa: E402
from core_compiler.runtime.cpu_variants import (  # noqa: E402
    CpuCase,
    choose_variant,
    compile_variant,
    prepare,
    run_jit,
)
from core_compiler.runtime.differential import reference_outputs  # noqa: E402
from core_compiler.runtime.reference import BuildOptions, run_reference  # noqa: E402

KERNELS = ROOT / "tests" / "kernels"
GCC = BuildOptions(compiler="gcc", extra_flags=("-O3", "-march=native"))
POLLY = BuildOptions(compiler="clang-16", extra_flags=("-O3", "-march=native", "-mllvm", "-polly"))
TIME_PARAMS = {"tsteps", "tmax"}

SIZES: dict[str, dict[str, int]] = {
    "gemm.c": {"ni": 1000, "nj": 1100, "nk": 1000},
    "2mm.c": {"ni": 400, "nj": 400, "nk": 400, "nl": 400},
    "3mm.c": {"ni": 400, "nj": 400, "nk": 400, "nl": 400, "nm": 400},
    "gemver.c": {"n": 4000},
    "gesummv.c": {"n": 6000},
    "symm.c": {"m": 600, "n": 600},
    "syrk.c": {"n": 900, "m": 800},
    "syr2k.c": {"n": 600, "m": 600},
    "trmm.c": {"m": 800, "n": 700},
    "atax.c": {"m": 6000, "n": 6000},
    "bicg.c": {"m": 4000, "n": 4000},
    "mvt.c": {"n": 4000},
    "doitgen.c": {"nr": 128, "nq": 128, "np": 128},
    "matvec.c": {"n": 6000, "m": 6000},
    "dot_norm.c": {"n": 16_000_000},
    "cholesky.c": {"n": 1200},
    "lu.c": {"n": 1000},
    "trisolv.c": {"n": 5000},
    "gramschmidt.c": {"m": 600, "n": 600},
    "jacobi_1d.c": {"tsteps": 2000, "n": 100_000},
    "jacobi_2d.c": {"tsteps": 100, "n": 1000},
    "seidel_2d.c": {"tsteps": 20, "n": 1000},
    "fdtd_2d.c": {"tmax": 100, "nx": 1000, "ny": 1000},
    "heat_3d.c": {"tsteps": 40, "n": 100},
    "conv2d.c": {"n": 6000, "m": 6000},
    "correlation.c": {"m": 600, "n": 600},
    "covariance.c": {"m": 600, "n": 600},
    "floyd_warshall.c": {"n": 1200},
    "nussinov.c": {"n": 1000},
    "integral_image.c": {"n": 6000, "m": 6000},
    "sgemv.c": {"m": 8000, "n": 8000},
    "soft_threshold.c": {"n": 5000, "m": 5000},
    "softmax.c": {"n": 3000, "m": 3000},
}


def main() -> None:
    args = _arguments()
    suite = json.loads((KERNELS / "suite.json").read_text())
    wanted = {f"{k}.c" for k in args.kernels.split(",")} if args.kernels else None
    cores = os.cpu_count() or 1
    polly = shutil.which("clang-16") is not None
    repeat = 1 if args.quick else args.repeat
    print(f"\nCPU: gcc -O3 -march=native vs hexplore (LLVM O3, {cores} cores), best of {repeat}"
          f"{' (--quick: extents / 4)' if args.quick else ''}")  # fmt: skip
    triad = _bandwidth(cores, repeat, args.quick)
    print(f"memory bandwidth (STREAM triad, hexplore's code): {triad[0]:.1f} GB/s on 1 thread, {triad[1]:.1f} GB/s on "
          f"{cores} ({triad[1] / triad[0]:.2f}x)")  # fmt: skip
    head = (f"{'kernel':16}{'size':28}{'gcc':>9}{'hx 1T':>9}{'hx ' + str(cores) + 'T':>9}{'x 1T':>7}{'x ' + str(cores) + 'T':>7}"
            f"{str(cores) + 'T/1T':>7}{'GB/s':>6}{'polly':>9}  variant check")  # fmt: skip
    print(head)
    print("-" * len(head))
    rows = {}
    for k in suite:
        if wanted is not None and k["file"] not in wanted:
            continue
        sizes = _quick(SIZES[k["file"]]) if args.quick else SIZES[k["file"]]
        rows[k["file"].removesuffix(".c")] = _bench(k, sizes, cores, repeat, polly)
    if rows:
        print("-" * len(head))
        one, many = _geomean([r.gcc / r.one for r in rows.values()]), _geomean([r.gcc / r.many for r in rows.values()])
        print(f"{'geometric mean':44}{'':27}{one:>6.2f}x{many:>6.2f}x")
        _scaling(rows, cores, triad[0])


def _scaling(rows: Mapping[str, Row], cores: int, triad: float) -> None:
    """The 1T/all-core ratios of the kernels whose all-core code runs parallel loops, apart for
    those that move at least a third of the one-thread triad bandwidth already on one thread
    (their ceiling is the triad's own ratio)."""
    parallel = {k: r for k, r in rows.items() if r.parallel}
    bound = {k: r for k, r in parallel.items() if r.rate >= triad / 3}
    for what, group in (("compute-bound", {k: r for k, r in parallel.items() if k not in bound}), ("memory-bound", bound)):
        if not group:
            continue
        ratios = {k: r.one / r.many for k, r in group.items()}
        low = ", ".join(f"{k} {v:.2f}" for k, v in sorted(ratios.items(), key=lambda kv: kv[1]) if v < 0.8 * cores)
        print(f"1 -> {cores} cores, {len(group)} {what} kernels with parallel loops: geometric mean "
              f"{_geomean(list(ratios.values())):.2f}x; under {0.8 * cores:.1f}x: {low or 'none'}")  # fmt: skip


def _arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="extents / 4, one run: a check that it works")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--kernels", default="", help="comma-separated file stems, e.g. gemm,lu")
    return p.parse_args()


def _quick(sizes: Mapping[str, int]) -> dict[str, int]:
    return {k: max(1, v // 4) for k, v in sizes.items()}


@dataclass(frozen=True)
class Row:
    gcc: float  # seconds
    one: float  # hexplore on one thread
    many: float  # hexplore on all cores
    parallel: bool  # whether the all-core code runs parallel loops
    rate: float  # GB/s on one thread (`_traffic`)


def _bench(k: dict, sizes: dict[str, int], cores: int, repeat: int, polly: bool) -> Row:  # type: ignore[type-arg]
    path = str(KERNELS / k["file"])
    case = prepare(path, k["function"], sizes, k["size_limits"])
    expected = run_reference(path, case.layout, case.inputs, options=GCC)  # also builds and warms up
    (one_variant, one_jit), (many_variant, many_jit) = _chosen(case, 1), _chosen(case, cores)
    gcc, one, many = [], [], []
    for _ in range(repeat):  # in turns: a busy moment of a shared machine slows all three alike
        gcc.append(run_reference(path, case.layout, case.inputs, options=GCC).elapsed_s)
        one.append(_timed_run(one_jit, case, 1))
        many.append(_timed_run(many_jit, case, cores))
    ok = all(compare_arrays(reference_outputs(expected), case.outputs(r[1])).ok for r in (one[0], many[0]))
    t_gcc, t_one, t_many = min(gcc), min(t for t, _ in one), min(t for t, _ in many)
    t_polly = _polly(path, case, repeat) if polly else None
    size = ",".join(f"{n}={v}" for n, v in sizes.items())
    polly_text = f"{t_polly:>8.3f}s" if t_polly is not None else f"{'n/a':>9}"
    variants = f"{_short(one_variant)}/{_short(many_variant)}"
    rate = _traffic(case) / t_one / 1e9
    print(f"{k['file'].removesuffix('.c'):16}{size:28}{t_gcc:>8.3f}s{t_one:>8.3f}s{t_many:>8.3f}s"
          f"{t_gcc / t_one:>6.2f}x{t_gcc / t_many:>6.2f}x{t_one / t_many:>6.2f}x{rate:>6.1f}{polly_text}  {variants:7}"
          f"{'ok' if ok else 'MISMATCH'}", flush=True)  # fmt: skip
    parallel = many_jit.module.parallel_loops > 0 and not many_variant.endswith("one thread")
    return Row(t_gcc, t_one, t_many, parallel, rate)


_SHORT = {"tiled": "T", "untiled": "U", "tiled+jam": "TJ", "untiled+jam": "UJ", "tiled+jam2": "TR",
          "untiled+jam2": "UR", "tilable": "B", "tilable+jam": "BJ", "distributed": "D",
          "distributed+jam": "DJ", "source order": "S"}  # fmt: skip


def _traffic(case: CpuCase) -> int:
    """Bytes moved if each loop nest of the source streams the arrays it touches once (mvt's
    ``A`` twice): a lower bound of the memory traffic where the arrays do not fit the caches."""
    nests: dict[int, set[str]] = {}
    for s in case.analysis.scop.statements:
        nest = s.schedule.plain_get_val_if_fixed(isl.dim_type.out, 0).to_python()
        nests.setdefault(nest, set()).update(a.array for a in (*s.reads, *s.writes))
    return sum(case.inputs[a].nbytes for arrays in nests.values() for a in arrays if a in case.inputs)


def _short(runs: str) -> str:
    """``U`` for "untiled", ``U1`` for "untiled, one thread" (parallel loops run sequentially)."""
    variant, _, alone = runs.partition(", ")
    return _SHORT[variant] + ("1" if alone else "")


def _chosen(case: CpuCase, threads: int) -> tuple[str, JitFunction]:
    """What hexplore runs on `threads` threads (`choose_variant`, which also makes the untimed
    first call that starts libgomp's threads): its name and code."""
    set_threads(threads)
    jit, choice, _ = choose_variant(case, parallel=True)
    return choice.runs, jit


def _timed_run(jit: JitFunction, case: CpuCase, threads: int) -> tuple[float, dict[str, np.ndarray]]:
    set_threads(threads)
    arrays, seconds = run_jit(jit, case)
    return seconds, arrays


def _bandwidth(cores: int, repeat: int, quick: bool) -> tuple[float, float]:
    """STREAM's triad through hexplore's parallel code, GB/s on one thread and on all: the memory
    bandwidth the memory-bound kernels share, and how it grows with cores."""
    n = 4_000_000 if quick else 16_000_000
    case = prepare(str(ROOT / "benchmarks" / "data" / "triad.c"), "triad", {"n": n})
    jit = compile_variant(case, "untiled")
    rates = []
    for threads in (1, cores):
        seconds = min(_timed_run(jit, case, threads)[0] for _ in range(repeat + 1))
        rates.append(3 * 8 * n / seconds / 1e9)  # STREAM's count: two arrays read, one written
    return rates[0], rates[1]


def _polly(path: str, case: CpuCase, repeat: int) -> float:
    runs = [run_reference(path, case.layout, case.inputs, options=POLLY) for _ in range(repeat + 1)]
    return min(r.elapsed_s for r in runs[1:])


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


if __name__ == "__main__":
    main()
