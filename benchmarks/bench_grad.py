"""Gradient cost on the CPU: time of the reverse-mode derivative (forward sweep, tapes, reverse
sweep) over the time of the primal, per kernel, both compiled by the system C compiler (-O2).

    .venv/bin/python benchmarks/bench_grad.py [--repeat 5]

Target (issue 8): geometric mean of the ratios <= 4, no kernel above 10.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core_compiler.ad import differentiate
from core_compiler.frontend import ParseOptions
from core_compiler.runtime.inputs import make_inputs
from core_compiler.runtime.reference import build_reference, call_reference
from core_compiler.runtime.signature import layout_for_source
from tests.ad.kernels_list import CASES

SIZES = {  # large enough that a call takes well over the timer's resolution
    "kernel_gemm": {"ni": 200, "nj": 220, "nk": 240},
    "kernel_2mm": {"ni": 150, "nj": 160, "nk": 170, "nl": 180},
    "kernel_matvec": {"n": 1500, "m": 1600},
    "kernel_atax": {"m": 1500, "n": 1600},
    "kernel_jacobi_1d": {"tsteps": 200, "n": 8000},
    "kernel_jacobi_2d": {"tsteps": 40, "n": 400},
    "kernel_seidel_2d": {"tsteps": 20, "n": 300},
    "kernel_trisolv": {"n": 1500},
    "kernel_dot_norm": {"n": 1_000_000},
    "kernel_correlation": {"m": 200, "n": 240},
    "kernel_covariance": {"m": 200, "n": 240},
    "kernel_softmax": {"n": 500, "m": 600},
    "kernel_lu": {"n": 300},
    "dot": {"n": 1_000_000},
    "norm2": {"n": 1_000_000},
    "logsumexp": {"n": 600, "m": 700},
    "tanh_layer": {"n": 1200, "m": 1300},
    "piecewise": {"n": 1_000_000},
    "mathmix": {"n": 500_000},
    "iterate": {"tsteps": 50, "n": 40_000},
    "recompute": {"n": 800, "m": 900},
}


def _time(lib, layout, inputs, repeat: int) -> float:  # type: ignore[no-untyped-def]
    return statistics.median(call_reference(lib, layout, inputs).elapsed_s for _ in range(repeat))


def bench(repeat: int) -> list[tuple[str, float, float]]:
    rows = []
    for path, function, wrt, _, limits in CASES:
        sizes = SIZES[function]
        primal = layout_for_source(path, function, sizes, size_limits=limits)
        inputs = make_inputs(primal)
        t_primal = _time(build_reference(path, primal), primal, inputs, repeat)
        d = differentiate(path, function, wrt, parse_options=ParseOptions(defines=primal.defines))
        values = {**sizes, **{s.name: s.value for s in primal.scalars}}
        layout = layout_for_source(path, d.name, values, text=d.translation_unit,
                                   options=ParseOptions(defines=primal.defines))  # fmt: skip
        grad_inputs = dict(inputs)
        for s in layout.arrays:
            if s.name not in grad_inputs:
                grad_inputs[s.name] = np.ones(s.shape, dtype=s.dtype)
        lib = build_reference(path, layout, text=d.translation_unit)
        t_grad = _time(lib, layout, grad_inputs, repeat)
        rows.append((function, t_primal, t_grad))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = bench(args.repeat)
    print(f"{'kernel':<20} {'primal ms':>10} {'gradient ms':>12} {'ratio':>7}")
    ratios = []
    for name, tp, tg in rows:
        ratio = tg / tp
        ratios.append(ratio)
        print(f"{name:<20} {tp * 1e3:>10.3f} {tg * 1e3:>12.3f} {ratio:>7.2f}")
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"{'geometric mean':<20} {'':>10} {'':>12} {geo:>7.2f}   (target <= 4; max {max(ratios):.2f}, target <= 10)")
    return 0 if geo <= 4 and max(ratios) <= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
