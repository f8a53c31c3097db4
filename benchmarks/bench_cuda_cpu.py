"""CUDA on the CPU: hexplore's translation of CUDA kernels (`core_compiler.cuda.cpu`) against the
same algorithm written as C with OpenMP (gcc -O3 -fopenmp), both on all cores; then the cost of the
multi-device tracker with one device (`core_compiler.cuda.devices`).

    python benchmarks/bench_cuda_cpu.py [--repeat 3]

Kernels from `tests/cuda_input/kernels`, launched as their file launches them. Times are the best
of `--repeat` warm calls; the translation's first call (JIT) is not timed.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core_compiler.cuda.cpu import compiled, footprint  # noqa: E402
from core_compiler.cuda.devices import Devices  # noqa: E402
from core_compiler.cuda.host import bind, run_host  # noqa: E402
from core_compiler.frontend import ir, run_frontend  # noqa: E402

SUITE = ROOT / "tests" / "cuda_input" / "kernels"

C_OPENMP = r"""
#include <stddef.h>
void matmul(const float *A, const float *B, float *C, int n) {
  #pragma omp parallel for
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
      C[i * n + j] = s;
    }
}
void transpose(float *odata, const float *idata, int width, int height) {
  #pragma omp parallel for
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++) odata[x * height + y] = idata[y * width + x];
}
void heat_step(const float *in, float *out, int n) {
  #pragma omp parallel for
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      out[i * n + j] = in[i * n + j] + 0.1f * (in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1] +
                                               in[i * n + j + 1] - 4.0f * in[i * n + j]);
}
void vector_add(const float *a, const float *b, float *c, int n) {
  #pragma omp parallel for
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
}
"""

# (file, kernel, the C function of the same algorithm, sizes)
CASES = [
    ("matmul.cu", "matmul_tiled", "matmul", {"n": 512}),
    ("matmul.cu", "matmul_naive", "matmul", {"n": 512}),
    ("transpose.cu", "transpose_padded", "transpose", {"width": 2048, "height": 2048}),
    ("heat.cu", "heat_step", "heat_step", {"n": 2048, "steps": 1}),
    ("elementwise.cu", "vector_add", "vector_add", {"n": 1 << 22}),
]


def _c_library(tmp: Path) -> ctypes.CDLL:
    src, lib = tmp / "ref.c", tmp / "libref.so"
    src.write_text(C_OPENMP)
    subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    return ctypes.CDLL(str(lib))


def _best(f: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def _launch(fns: dict[str, ir.Function], kernel: str) -> tuple[ir.Launch, ir.Call]:
    launch = fns[kernel].launches[0]
    for fn in fns.values():
        stack = list(fn.body)
        while stack:
            s = stack.pop()
            stack += ir.sub_statements(s)
            if isinstance(s, ir.ExprStmt) and s.range == launch.range and isinstance(s.expr, ir.Call):
                return launch, s.expr
    raise LookupError(kernel)


def bench(repeat: int) -> list[tuple[str, str, float, float]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        lib = _c_library(Path(tmp))
        for file, kernel, c_name, sizes in CASES:
            fns = {f.name: f for f in run_frontend(str(SUITE / file)).functions}
            launch, call = _launch(fns, kernel)
            cpu = compiled(fns[kernel])
            probe, grid = bind(fns[kernel], call, launch, sizes, {})
            need = footprint(cpu.model, {k: v for k, v in probe.items() if isinstance(v, int)}, grid)
            rng = np.random.default_rng(0)
            arrays = {k: rng.random(max(n, 1)).astype(np.float32) for k, n in need.items()}
            values = {**probe, **arrays}
            cpu(values, grid)  # warm (the JIT is compiled above)
            mine = _best(functools.partial(cpu, values, grid), repeat)
            params = [p for p in fns[kernel].params]
            args = [arrays[p.name].ctypes.data_as(ctypes.c_void_p) if isinstance(p.type, ir.Pointer)
                    else ctypes.c_int(int(probe[p.name])) for p in params if p.name in arrays or isinstance(probe[p.name], int)]  # fmt: skip
            c_fn = getattr(lib, c_name)
            c_args = args if c_name != "heat_step" else args[:3]
            ref = _best(functools.partial(c_fn, *c_args), repeat)
            shown = ", ".join(f"{k}={v}" for k, v in sizes.items() if k != "steps")
            rows.append((f"{kernel}({shown})", f"grid {grid.get('x', 1)}x{grid.get('y', 1)}", mine, ref))
    return rows


def tracker_overhead(repeat: int) -> tuple[float, float, list[tuple[int, int]]]:
    """`run_heat` at n = 1024, 4 steps: plain, and through the tracker with one device."""
    fns = {f.name: f for f in run_frontend(str(SUITE / "heat.cu")).functions}
    n, sizes = 1024, {"n": 1024, "steps": 4}
    base = {"a": np.ones(n * n, dtype=np.float32), "b": np.ones(n * n, dtype=np.float32)}
    run_host(fns, "run_heat", {k: v.copy() for k, v in base.items()}, sizes)  # warm
    plain = _best(lambda: run_host(fns, "run_heat", {k: v.copy() for k, v in base.items()}, sizes), repeat)
    run_host(fns, "run_heat", {k: v.copy() for k, v in base.items()}, sizes, launcher=Devices(1))
    one = _best(lambda: run_host(fns, "run_heat", {k: v.copy() for k, v in base.items()}, sizes, launcher=Devices(1)), repeat)
    moved = []
    for count in (1, 2, 4):
        devices = Devices(count)
        run_host(fns, "run_heat", {k: v.copy() for k, v in base.items()}, sizes, launcher=devices)
        moved.append(sum(i for i, _ in devices.moved()))
    return plain, one, [(c, m) for c, m in zip((1, 2, 4), moved, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"CUDA on the CPU vs C + OpenMP (gcc -O3 -fopenmp), {os.cpu_count()} cores, best of {args.repeat}")
    print(f"{'kernel':<40} {'launch':<12} {'hexplore':>11} {'C+OpenMP':>11} {'ratio':>7}")
    ratios = []
    for name, launch, mine, ref in bench(args.repeat):
        ratios.append(mine / ref)
        print(f"{name:<40} {launch:<12} {mine * 1e3:9.2f}ms {ref * 1e3:9.2f}ms {mine / ref:6.2f}x")
    print(f"geomean hexplore/C+OpenMP: {float(np.exp(np.mean(np.log(ratios)))):.2f}x")
    plain, one, moved = tracker_overhead(args.repeat)
    print(f"\nrun_heat n=1024, 4 steps: plain {plain * 1e3:.1f} ms, through the tracker on one device "
          f"{one * 1e3:.1f} ms (overhead {100 * (one / plain - 1):.0f}%)")
    for count, total in moved:
        print(f"  {count} device(s): {total / 1e6:.2f} MB copied to the devices")


if __name__ == "__main__":
    main()
