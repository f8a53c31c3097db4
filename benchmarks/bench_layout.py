"""OpenCL data layout on PoCL (issue 30, PPOpenCL): per PolyBench kernel whose kernels read a
read-only array with a stride between neighbouring work-items (syrk's ``A[j][k]``, mvt's and
atax's ``A[i][j]`` with ``i`` on x), the default layout against the transposed copy
(`codegen/layouts.py`), under hexplore's mapping and with shared memory and registers off; each
configuration checked against the original first (`tune.measure.measure`), best of `--rounds`,
in turns::

    nice python benchmarks/bench_layout.py [--kernels syrk,mvt] [--rounds 3]
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

from benchmarks.bench_tune import POLYBENCH  # noqa: E402
from core_compiler.frontend import ParseOptions  # noqa: E402
from core_compiler.tune.driver import space_for  # noqa: E402
from core_compiler.tune.measure import Task, measure  # noqa: E402
from core_compiler.tune.space import Config  # noqa: E402

# kernel -> sizes on PoCL (the macros are the sizes in upper case)
KERNELS: dict[str, dict[str, int]] = {
    "syrk": {"n": 400, "m": 400},
    "syr2k": {"n": 300, "m": 300},
    "mvt": {"n": 2000},
    "atax": {"m": 1900, "n": 2100},
    "bicg": {"m": 1900, "n": 2100},
    "gesummv": {"n": 1300},
}
MEMORY = {"hexplore's": {}, "global": {"shared": False, "private": False}}


def main() -> None:
    args = _arguments()
    os.environ["HEXPLORE_CACHE_DIR"] = tempfile.mkdtemp(prefix="hexplore-bench-layout-")
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    print(f"{'kernel':9} {'sizes':20} {'memory':11} {'default':>11} {'transposed':>11}  gain   load")
    gains = []
    for kernel in args.kernels.split(","):
        gains += _rows(kernel, args.rounds)
    finite = [g for g in gains if math.isfinite(g) and g > 0]
    if finite:
        print(f"geomean gain {math.exp(sum(math.log(g) for g in finite) / len(finite)):.2f}x over {len(finite)} rows")


def _rows(kernel: str, rounds: int) -> list[float]:
    sizes = KERNELS[kernel]
    parse = ParseOptions((str(POLYBENCH / "utilities"),), tuple(f"{k.upper()}={v}" for k, v in sizes.items()))
    task = Task.of(str(POLYBENCH / kernel / f"{kernel}.c"), f"kernel_{kernel}", "opencl", sizes, parse)
    space, _ = space_for(task)
    gains = []
    for memory, values in MEMORY.items():
        base = space.normal(space.default.with_(**values))
        configs = {"default": base, "transposed": space.normal(base.with_(layout="transposed"))}
        times = dict.fromkeys(configs, math.inf)
        notes = []
        for _ in range(rounds):
            for name, c in configs.items():
                t = _measure(task, c)
                if not t[0]:
                    notes.append(f"{name}: {t[2]}")
                times[name] = min(times[name], t[1])
        gain = times["default"] / times["transposed"] if math.isfinite(times["transposed"]) else math.nan
        gains.append(gain)
        text = ",".join(f"{k}={v}" for k, v in sizes.items())
        print(f"{kernel:9} {text:20} {memory:11} {_ms(times['default'])} {_ms(times['transposed'])}  {gain:5.2f}x  "
              f"{os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
        for n in dict.fromkeys(notes):
            print(f"    {n}")
    return gains


def _measure(task: Task, config: Config) -> tuple[bool, float, str]:
    t = measure(task, config)
    return t.counts, t.seconds, t.message


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.2f} ms" if math.isfinite(seconds) else "         -"


def _arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernels", default=",".join(KERNELS), help=f"comma-separated, of {','.join(KERNELS)}")
    p.add_argument("--rounds", type=int, default=3)
    return p.parse_args()


if __name__ == "__main__":
    main()
