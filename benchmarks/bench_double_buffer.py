"""Double-buffered shared copies (issue 27, `gpu_mapping._buffers`) on PoCL: per PolyBench kernel
whose kernels walk their tiles in a sequential loop, the OpenCL run with one shared copy per array
and with two (the next tile copied in the step before, one barrier per step instead of two), each
checked against the original first; best of `--rounds`, in turns. On an NVIDIA GPU the CUDA C
issues the copies as cp.async: `benchmarks/gpu/sweep.py` times it there::

    nice python benchmarks/bench_double_buffer.py [--kernels gemm,2mm] [--rounds 3]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core_compiler.frontend import ParseOptions  # noqa: E402
from core_compiler.pipeline import GpuOptions  # noqa: E402
from core_compiler.runtime.compare import compare_arrays  # noqa: E402
from core_compiler.runtime.differential import device_case, reference_outputs  # noqa: E402
from core_compiler.runtime.gpu_opencl import OpenCLRuntime  # noqa: E402
from core_compiler.runtime.reference import timed_call  # noqa: E402
from core_compiler.transform.gpu_mapping import MappingOptions  # noqa: E402
from core_compiler.transform.memory import MemoryOptions  # noqa: E402

POLYBENCH = ROOT / "tests" / "polybench"
KERNELS: dict[str, tuple[str, dict[str, int]]] = {  # sizes where PoCL takes 0.05-1 s
    "gemm": ("kernel_gemm", {"ni": 400, "nj": 400, "nk": 400}),
    "2mm": ("kernel_2mm", {"ni": 300, "nj": 300, "nk": 300, "nl": 300}),
    "3mm": ("kernel_3mm", {"ni": 240, "nj": 240, "nk": 240, "nl": 240, "nm": 240}),
    "symm": ("kernel_symm", {"m": 300, "n": 300}),
    "mvt": ("kernel_mvt", {"n": 2000}),
    "gesummv": ("kernel_gesummv", {"n": 2000}),
    "atax": ("kernel_atax", {"m": 1900, "n": 2100}),
    "doitgen": ("kernel_doitgen", {"nq": 100, "nr": 100, "np": 100}),
}


def main() -> None:
    args = _arguments()
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    print(f"{'kernel':9} {'sizes':34} {'one copy':>11} {'two copies':>11}  gain   load")
    gains = []
    for kernel in args.kernels.split(","):
        one, two = _row(kernel, args.rounds)
        gains.append(one / two)
    print(f"geomean gain {math.exp(sum(map(math.log, gains)) / len(gains)):.2f}x")


def _row(kernel: str, rounds: int) -> tuple[float, float]:
    function, sizes = KERNELS[kernel]
    parse = ParseOptions((str(POLYBENCH / "utilities"),), tuple(f"{k.upper()}={v}" for k, v in sizes.items()))
    path = str(POLYBENCH / kernel / f"{kernel}.c")
    cases = [device_case(path, function, sizes, gpu=_options(two), parse=parse) for two in (False, True)]
    assert cases[1].program.gpu.kernels and any(k.buffers == 2 for k in cases[1].program.gpu.kernels), kernel
    inputs = cases[0].inputs()
    wanted = reference_outputs(timed_call(cases[0].reference, cases[0].layout, inputs, rounds=1))
    times = [math.inf, math.inf]
    for _ in range(rounds):
        for k, case in enumerate(cases):
            runtime = OpenCLRuntime()
            try:
                run, outputs = case.run_generated(runtime, inputs)
            finally:
                runtime.close()
            comparison = compare_arrays(wanted, outputs)
            assert comparison.ok, f"{kernel}: {comparison.report()}"
            times[k] = min(times[k], run.device_s)
    text = ",".join(f"{k}={v}" for k, v in sizes.items())
    print(f"{kernel:9} {text:34} {times[0] * 1e3:8.2f} ms {times[1] * 1e3:8.2f} ms  {times[0] / times[1]:4.2f}x  "
          f"{os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    return times[0], times[1]


def _options(two: bool) -> GpuOptions:
    return GpuOptions(mapping=MappingOptions(memory=MemoryOptions(double_buffer=two)))


def _arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernels", default=",".join(KERNELS))
    p.add_argument("--rounds", type=int, default=3)
    return p.parse_args()


if __name__ == "__main__":
    main()
