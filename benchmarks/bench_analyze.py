"""Analysis speed: `hexplore analyze` on a ~400-line file with 10 kernels (warm), per-kernel times,
and the whole kernel suite. Prints tables; run with `make bench` or `python benchmarks/bench_analyze.py`.

Targets (issue 2): whole file < 0.5 s, median per kernel < 50 ms.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core_compiler.analysis import AnalysisOptions, analyze_file, analyze_function  # noqa: E402
from core_compiler.frontend import run_frontend  # noqa: E402

KERNELS = ROOT / "tests" / "kernels"
# The same input as the LSP benchmark (bench_lsp.py --regenerate-data rebuilds it from the suite).
DATA = ROOT / "benchmarks" / "data" / "ten_kernels.c"


def main() -> None:
    src = DATA.read_text()
    path = str(DATA)
    lines = src.count("\n")
    analyze_file(path, src)  # warm up: libclang, isl, imports
    runs = [_timed(lambda: analyze_file(path, src)) for _ in range(5)]
    front = run_frontend(path, src)
    per_kernel: dict[str, list[float]] = {}
    for _ in range(5):
        for fn in front.functions:
            per_kernel.setdefault(fn.name, []).append(_timed(lambda fn=fn: analyze_function(fn, AnalysisOptions())))
    print(f"\n`hexplore analyze` on a {lines}-line file with {len(front.functions)} kernels (warm, 5 runs)")
    print(f"{'':28}{'median':>10}{'min':>10}")
    print(f"{'whole file':28}{statistics.median(runs) * 1000:>8.1f}ms{min(runs) * 1000:>8.1f}ms")
    print(f"\n{'kernel':28}{'median':>10}")
    medians = []
    for name, ts in per_kernel.items():
        medians.append(statistics.median(ts))
        print(f"{name:28}{medians[-1] * 1000:>8.1f}ms")
    kernels = [statistics.median(ts) for name, ts in per_kernel.items() if name.startswith("kernel_")]
    print(f"{'median over all functions':28}{statistics.median(medians) * 1000:>8.1f}ms")
    print(f"{'median over kernel_*':28}{statistics.median(kernels) * 1000:>8.1f}ms")
    suite = json.loads((KERNELS / "suite.json").read_text())
    total = sum(_timed(lambda k=k: analyze_file(str(KERNELS / k["file"]))) for k in suite)
    print(f"\nwhole suite: {len(suite)} files analysed in {total:.2f} s")


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
