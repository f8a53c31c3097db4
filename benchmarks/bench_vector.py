"""OpenCL vector width on PoCL (issue 30, PPOpenCL): per kernel, one explicit mapping whose
threads run several points of the innermost parallel loop, timed with vector width 1, 2 and 4
(each checked against the original first; best of `--rounds`, in turns)::

    nice python benchmarks/bench_vector.py [--kernels gemm,2mm] [--rounds 3]
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
from core_compiler.tune.driver import space_for  # noqa: E402
from core_compiler.tune.measure import Task, measure  # noqa: E402
from core_compiler.tune.space import Config, Space  # noqa: E402

# kernel -> tile per member, block per thread member (outermost first): 4 or 8 points per thread
# along the innermost thread member, shared memory and registers off (PoCL's barriers are slow)
MAPPINGS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "gemm": ((8, 32, 16), (8, 4)),
    "2mm": ((8, 32, 16), (4, 8)),
    "syrk": ((8, 32, 16), (4, 8)),
    "jacobi-2d": ((16, 64), (16, 8)),
    "heat-3d": ((8, 8, 32), (4, 4, 8)),
}
WIDTHS = (1, 2, 4)


def main() -> None:
    args = _arguments()
    os.environ["HEXPLORE_CACHE_DIR"] = tempfile.mkdtemp(prefix="hexplore-bench-vector-")
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    print(
        f"{'kernel':10} {'sizes':30} {'mapping':42} "
        + " ".join(f"{'width ' + str(w):>11}" for w in WIDTHS)
        + "   gain(4)  load"
    )
    for kernel in args.kernels.split(","):
        _row(kernel, args.rounds)


def _row(kernel: str, rounds: int) -> None:
    function, _, sizes = KERNELS[kernel]
    parse = ParseOptions((str(POLYBENCH / "utilities"),), tuple(f"{k.upper()}={v}" for k, v in sizes.items()))
    task = Task.of(str(POLYBENCH / kernel / f"{kernel}.c"), function, "opencl", sizes, parse)
    space, _ = space_for(task)
    configs = [_config(space, kernel, w) for w in WIDTHS]
    times = dict.fromkeys(WIDTHS, math.inf)
    notes = []
    for _ in range(rounds):
        for w, c in zip(WIDTHS, configs, strict=True):
            t = measure(task, c)
            if not t.counts:
                notes.append(f"width {w}: {t.message}")
            times[w] = min(times[w], t.seconds)
    cells = " ".join(f"{times[w] * 1e3:8.2f} ms" for w in WIDTHS)
    gain = times[1] / times[4] if math.isfinite(times[4]) else math.nan
    text = ",".join(f"{k}={v}" for k, v in sizes.items())
    print(
        f"{kernel:10} {text:30} {space.label(configs[-1]):42} {cells}   {gain:6.2f}x  {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    for n in dict.fromkeys(notes):
        print(f"    {n}")


def _config(space: Space, kernel: str, width: int) -> Config:
    tile, block = MAPPINGS[kernel]
    values = {f"tile{k}": t for k, t in enumerate(tile)} | {f"block{k}": b for k, b in enumerate(block)}
    return space.normal(space.default.with_(mapping="explicit", shared=False, private=False, vector=width, **values))


def _arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernels", default=",".join(MAPPINGS))
    p.add_argument("--rounds", type=int, default=3)
    return p.parse_args()


if __name__ == "__main__":
    main()
