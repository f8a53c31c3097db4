"""Time from source text to CUDA text (`hexplore compile --target cuda`) for every suite kernel:
front end, SCoP detection, model, dependences, scheduling, mapping with memory promotion and
code generation. Target: a gemm-like kernel under 1 s.

    python benchmarks/bench_compile.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from core_compiler.analysis import analyze_file
from core_compiler.compile import compile_file

KERNELS = Path(__file__).resolve().parent.parent / "tests" / "kernels"


def time_kernel(path: Path, function: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fa = analyze_file(str(path), only=function)
        compile_file(fa, "cuda", always_offload=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    suite = json.loads((KERNELS / "suite.json").read_text())
    rows = [(k["file"], time_kernel(KERNELS / k["file"], k["function"], args.repeat)) for k in suite]
    print(f"{'kernel':<22}{'source -> CUDA (ms)':>20}")
    for name, t in rows:
        print(f"{name:<22}{t * 1000:>20.0f}")
    total = sum(t for _, t in rows)
    print(f"{'whole suite':<22}{total * 1000:>20.0f}")
    print(f"{'median kernel':<22}{statistics.median(t for _, t in rows) * 1000:>20.0f}")


if __name__ == "__main__":
    main()
